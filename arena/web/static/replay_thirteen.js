// The match page of a thirteen-card match: the showdown of each deal.
//
// A finished match is replayed from its stored log, deal by deal: every
// seat's front, middle and back, fouls, the pairwise matrix M[i][j] (what
// seat i takes from seat j), the deal scores and the running totals; its
// decks are checked against the commitments sent during play. A live match
// is drawn from the public log only: before a deal's showdown a seat shows
// face-down cards and whether it has arranged, and the page ignores any
// card of a hand should one ever arrive before that deal's showdown.
"use strict";

(() => {
  const root = document.getElementById("replay");
  if (!root) return;
  const { el, card, backs, getJSON } = Arena;
  const matchId = root.dataset.match;
  const ROWS = [["front", "Front"], ["middle", "Middle"], ["back", "Back"]];
  const HAND_SIZE = 13;
  const DEALT_HANDS = 4; // the deck is always dealt as four hands, card i to hand i mod 4
  const RANK_ORDER = "23456789TJQKA";

  let detail = null;
  let deals = []; // per deal in order: {deal, key, hands, arranged, notes, showdown}
  let pendingKey = null; // the deal key of the last commit, for the deal it precedes
  let lastSeq = -1;
  let index = 0;
  const ui = {};

  // -- the log ----------------------------------------------------------------
  /** What names a deal in a commit or reveal entry (as protocol/deals.py
   * deal_key): the (round, hand) pair when present, else the deal number. */
  function dealKey(entry) {
    if ("round" in entry || !("deal" in entry)) return `${entry.round}/${entry.hand}`;
    return String(entry.deal);
  }

  function seats() {
    return detail.match.players.length;
  }

  function who(seat) {
    const name = detail.match.players[seat];
    return `${name === undefined ? "?" : name} (seat ${seat})`;
  }

  function dealOf(number) {
    let d = deals.find((x) => x.deal === number);
    if (!d) {
      d = { deal: number, key: null, hands: null, arranged: Array(seats()).fill(false),
            notes: [], showdown: null };
      deals.push(d);
    }
    return d;
  }

  function current() {
    return deals.length ? deals[deals.length - 1] : null;
  }

  function apply(ev, live) {
    switch (ev.kind) {
      case "commit":
        pendingKey = dealKey(ev);
        break;
      case "deal_start": {
        const d = dealOf(ev.deal);
        d.key = pendingKey;
        // The record holds every hand; a live page never takes them.
        if (!live && Array.isArray(ev.hands)) d.hands = ev.hands.map((h) => h.slice());
        break;
      }
      case "arranged":
        if (Number.isInteger(ev.seat)) dealOf(ev.deal).arranged[ev.seat] = true;
        break;
      case "showdown": {
        const d = dealOf(ev.deal);
        d.showdown = ev;
        d.arranged = d.arranged.map(() => true);
        break;
      }
      case "timeout": {
        const d = current();
        if (d) d.notes.push(`${who(ev.seat)} ran out of time: the server arranged its cards.`);
        break;
      }
      case "autopilot": {
        const d = current();
        if (d) d.notes.push(`${who(ev.seat)} is now played by the house bot (${ev.reason}).`);
        break;
      }
      default:
        break;
    }
  }

  function addEvents(entries) {
    for (const entry of entries) {
      if (entry.seq <= lastSeq) continue;
      lastSeq = entry.seq;
      apply(entry.data || {}, detail.live);
    }
  }

  // -- hands --------------------------------------------------------------------
  const rankOf = (c) => RANK_ORDER.indexOf(c[0]);

  /** The category of a row, for its label (the showdown carries the scores). */
  function category(cards) {
    const counts = new Map();
    for (const c of cards) counts.set(rankOf(c), (counts.get(rankOf(c)) || 0) + 1);
    const shape = [...counts.values()].sort((a, b) => b - a).join("");
    if (cards.length === 3) return shape === "3" ? "three of a kind" : shape === "21" ? "pair" : "high card";
    const flush = cards.every((c) => c[1] === cards[0][1]);
    const ranks = [...counts.keys()].sort((a, b) => a - b);
    const straight = counts.size === 5 &&
      (ranks[4] - ranks[0] === 4 || ranks.join() === "0,1,2,3,12"); // A-2-3-4-5 too
    if (straight && flush) return "straight flush";
    if (shape === "41") return "four of a kind";
    if (shape === "32") return "full house";
    if (flush) return "flush";
    if (straight) return "straight";
    return { 311: "three of a kind", 221: "two pair", 2111: "pair" }[shape] || "high card";
  }

  /** Cards of a row as a player reads them: bigger groups first, high first. */
  function readingOrder(cards) {
    const count = (c) => cards.filter((x) => x[0] === c[0]).length;
    return [...cards].sort((a, b) => count(b) - count(a) || rankOf(b) - rankOf(a) ||
      "HSDC".indexOf(a[1]) - "HSDC".indexOf(b[1]));
  }

  // -- drawing ------------------------------------------------------------------
  function entrant(name) {
    const house = /^(house-.+)-\d+$/.exec(name);
    return house ? house[1] : name;
  }

  function signed(n) {
    return n > 0 ? `+${n}` : String(n);
  }

  /** The three rows: the showdown's cards, or face-down cards before it. */
  function drawRows(d, seat) {
    const shown = d.showdown && d.showdown.arrangements && d.showdown.arrangements[seat];
    return el("dl", { class: "rows" }, ROWS.map(([key, label]) => {
      const cards = shown && Array.isArray(shown[key]) ? shown[key] : null;
      return [el("dt", {}, label, cards ? el("small", { class: "category" }, ` ${category(cards)}`) : null),
        el("dd", { "data-row": key },
          cards ? el("span", { class: "hand" }, readingOrder(cards).map((c) => card(c)))
            : backs(key === "front" ? 3 : 5))];
    }));
  }

  function drawSeat(d, seat) {
    const name = detail.match.players[seat];
    const sd = d.showdown;
    const fouled = !!(sd && sd.fouled && sd.fouled[seat]);
    const badges = [];
    if (fouled) {
      badges.push(el("span", { class: "badge foul", title: "its rows break front ≤ middle ≤ back: it loses " +
        "every segment to every seat that did not foul" }, "fouled"));
    }
    else if (!sd) badges.push(el("span", { class: "badge" }, d.arranged[seat] ? "arranged" : "arranging…"));
    const figures = sd ? el("p", { class: "figures" },
      el("span", { class: "deal-score" }, `deal ${signed(sd.scores[seat])}`), " · ",
      el("span", { class: "total" }, `total ${sd.totals[seat]}`)) : null;
    // A stored deal without a showdown (an aborted match) shows the hand as dealt.
    const dealt = !sd && !detail.live && d.hands && d.hands[seat]
      ? el("p", { class: "dealt" }, "Dealt: ", d.hands[seat].map((c) => card(c))) : null;
    return el("section", { class: `seat13${fouled ? " fouled" : ""}`, "data-seat": seat,
      "aria-label": `Seat ${seat}: ${name}${fouled ? ", fouled" : ""}` },
      el("h3", {}, el("a", { href: `/bots/${encodeURIComponent(entrant(name))}` }, name),
        el("small", {}, ` seat ${seat}`)),
      el("p", { class: "badges" }, badges), figures,
      dealt || drawRows(d, seat));
  }

  function drawMatrix(d) {
    const sd = d.showdown;
    if (!sd || !Array.isArray(sd.pairs)) return null;
    const n = seats();
    const players = detail.match.players;
    const cell = (v, i, j) => el("td", { class: `n${i === j ? " self" : v > 0 ? " plus" : v < 0 ? " minus" : ""}` },
      i === j ? "—" : signed(v));
    return el("table", { class: "matrix" },
      el("caption", {}, "Points between seats: what the row's seat takes from the column's seat"),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, ""),
        players.map((p) => el("th", { scope: "col" }, p)), el("th", { scope: "col" }, "Deal"))),
      el("tbody", {}, Array.from({ length: n }, (_, i) => el("tr", {},
        el("th", { scope: "row" }, players[i]),
        Array.from({ length: n }, (_, j) => cell(sd.pairs[i][j], i, j)),
        el("td", { class: "n sum" }, signed(sd.scores[i]))))));
  }

  function drawSheet() {
    const players = detail.match.players;
    const shown = deals.filter((d) => d.showdown);
    if (!shown.length) return null;
    const result = detail.match.result;
    const rows = shown.map((d) => el("tr", { class: deals[index] === d ? "current" : "" },
      el("th", { scope: "row" }, `Deal ${d.deal + 1}`),
      players.map((_, s) => el("td", { class: "n" }, signed(d.showdown.scores[s]),
        el("small", {}, ` (${d.showdown.totals[s]})`)))));
    const foot = result && Array.isArray(result.totals) ? el("tfoot", {},
      el("tr", {}, el("th", { scope: "row" }, "Total"), result.totals.map((t) => el("td", { class: "n" }, t))),
      Array.isArray(result.ranks) ? el("tr", {}, el("th", { scope: "row" }, "Place"),
        result.ranks.map((r) => el("td", { class: "n" }, r))) : null) : null;
    return el("table", { class: "sheet" },
      el("caption", {}, "Deal scores (running total)"),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Deal"),
        players.map((p) => el("th", { scope: "col" }, p)))),
      el("tbody", {}, rows), foot);
  }

  function finalText() {
    const result = detail.match.result;
    if (detail.live || !result || !Array.isArray(result.totals)) return "";
    const order = result.totals.map((t, s) => s).sort((a, b) => (result.ranks[a] - result.ranks[b]) || a - b);
    return " Final result: " + order.map((s) => `${result.ranks[s]}. ${who(s)} ${result.totals[s]}`).join(", ") + ".";
  }

  /** The match's number of deals (its rules), or as many as the log holds. */
  function dealCount() {
    const rules = detail.match.rules;
    return Math.max(deals.length, (rules && Number.isInteger(rules.deals)) ? rules.deals : 0);
  }

  function narrate(d) {
    if (!d) return detail.live ? "Waiting for the first deal." : "No deals.";
    let text = `Deal ${d.deal + 1} of ${dealCount()}: `;
    const sd = d.showdown;
    if (!sd) {
      const done = d.arranged.filter(Boolean).length;
      text += `${done} of ${seats()} seats have arranged their cards; the hands are shown at the showdown.`;
    } else {
      const fouls = sd.fouled.map((f, s) => (f ? who(s) : null)).filter(Boolean);
      const best = Math.max(...sd.scores);
      const tops = sd.scores.map((v, s) => (v === best ? who(s) : null)).filter(Boolean);
      text += `showdown. ${fouls.length ? `Fouled: ${fouls.join(", ")}. ` : ""}` +
        `Highest score of the deal: ${tops.join(", ")} ${signed(best)}.`;
      if (d === deals[deals.length - 1]) text += finalText();
    }
    return [text, ...d.notes].join(" ");
  }

  function render() {
    const d = deals[index];
    ui.table.replaceChildren(...(d ? Array.from({ length: seats() }, (_, s) => drawSeat(d, s)) : []));
    ui.matrix.replaceChildren(...[d ? drawMatrix(d) : null, drawSheet()].filter(Boolean));
    ui.narration.textContent = narrate(d);
    ui.position.textContent = d ? `Deal ${d.deal + 1} of ${dealCount()}` : "No deals";
    const atStart = index <= 0, atLast = index >= deals.length - 1;
    [ui.first, ui.prev].forEach((b) => { b.disabled = atStart; });
    [ui.next, ui.last].forEach((b) => { b.disabled = atLast; });
    fillJump();
    root.dataset.step = String(index);
  }

  function go(i) {
    index = Math.max(0, Math.min(deals.length - 1, i));
    render();
  }

  // -- controls ------------------------------------------------------------------
  const KEYS = [["← →", "deal"], ["PageUp PageDown", "deal"], ["Home End", "first / last"]];

  function buildControls() {
    const button = (label, text, onclick, key) => el("button", { type: "button", "aria-label": label,
      "aria-keyshortcuts": key, title: `${label} (${key.replace("Arrow", "")})`, onclick }, text);
    ui.first = button("First deal", "« First", () => go(0), "Home");
    ui.prev = button("Previous deal", "◀ Deal", () => go(index - 1), "ArrowLeft");
    ui.next = button("Next deal", "Deal ▶", () => go(index + 1), "ArrowRight");
    ui.last = button("Last deal", "Last »", () => go(deals.length - 1), "End");
    ui.position = el("output", { class: "position" });
    ui.jump = el("select", { id: "replay-jump", onchange: (e) => { if (e.target.value !== "") go(Number(e.target.value)); } });
    ui.narration = el("p", { class: "narration", role: "status", "aria-live": "polite" });
    ui.table = el("div", { class: "table13" });
    ui.matrix = el("div", { class: "scores13" });
    ui.verify = el("section", { class: "verify", "aria-label": "Deal verification" });
    const keys = el("p", { class: "keys" }, "Keys: ", KEYS.map(([k, what], i) => [
      i ? " · " : "", k.split(" ").map((one, j) => [j ? " " : "", el("kbd", {}, one)]), ` ${what}`]));
    root.append(
      el("div", { class: "controls", role: "toolbar", "aria-label": "Replay controls" },
        ui.first, ui.prev, ui.position, ui.next, ui.last,
        el("label", { for: "replay-jump" }, "Jump to deal"), ui.jump),
      keys, ui.narration, ui.table, ui.matrix, ui.verify);
    document.addEventListener("keydown", onKey);
  }

  function onKey(e) {
    const tag = (e.target && e.target.tagName) || "";
    if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const actions = { ArrowRight: () => go(index + 1), ArrowLeft: () => go(index - 1),
      PageDown: () => go(index + 1), PageUp: () => go(index - 1),
      Home: () => go(0), End: () => go(deals.length - 1) };
    if (actions[e.key]) { e.preventDefault(); actions[e.key](); }
  }

  function fillJump() {
    const options = deals.map((d, i) => el("option", { value: i, selected: i === index },
      `Deal ${d.deal + 1}${d.showdown ? "" : " (being arranged)"}`));
    ui.jump.replaceChildren(...options);
    ui.jump.value = deals.length ? String(index) : "";
  }

  // -- deal verification ------------------------------------------------------------
  async function verifyDeals() {
    const reveal = detail.match.reveal;
    if (detail.live || !Array.isArray(reveal) || !reveal.length) { ui.verify.replaceChildren(); return; }
    const commits = new Map();
    for (const { data } of detail.events) if (data.kind === "commit") commits.set(dealKey(data), data.commitment);
    const rows = [];
    let good = 0;
    for (const r of reveal) {
      const key = dealKey(r);
      const digest = await Arena.sha256Hex(`${r.salt}:${r.deck.join(",")}`);
      const commitment = commits.get(key);
      const ok = commitment !== undefined && digest === commitment;
      if (ok) good += 1;
      const dealt = dealMatches(deals.find((d) => d.key === key), r.deck);
      rows.push(el("tr", { class: ok && dealt !== false ? "ok" : "bad" },
        el("td", {}, "deal" in r ? r.deal + 1 : key),
        el("td", {}, el("code", { title: commitment || "" }, commitment ? commitment.slice(0, 16) + "…" : "missing")),
        el("td", { class: "check", "aria-label": ok ? "commitment verified" : "commitment does not match" }, ok ? "✓" : "✗"),
        el("td", { class: "check", "aria-label": dealt === null ? "not checked" : dealt ? "deal matches" : "deal differs" },
          dealt === null ? "—" : dealt ? "✓" : "✗")));
    }
    const failed = reveal.length - good;
    const summary = `${good} of ${reveal.length} deals verified in this browser` +
      (failed ? ` — ${failed} did not match its commitment` : "");
    ui.verify.replaceChildren(el("details", { open: failed > 0 },
      el("summary", { class: failed ? "bad" : "ok" }, summary),
      el("p", {}, "Each deck, revealed after the match, hashes (SHA-256 of salt:deck, computed " +
        "here) to the commitment the server sent before the deal was played; the hands dealt " +
        "and the rows shown at the showdown come from that deck."),
      el("table", {}, el("thead", {}, el("tr", {}, ["Deal", "Commitment", "Hash ✓", "Dealt ✓"]
        .map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows))));
    root.dataset.verified = `${good}/${reveal.length}`;
  }

  /** Do the dealt hands and the showdown's rows follow from the deck (card i to hand i mod 4)? */
  function dealMatches(d, deck) {
    if (!d || !Array.isArray(deck) || deck.length < DEALT_HANDS * HAND_SIZE) return null;
    const same = (a, b) => [...a].sort().join() === [...b].sort().join();
    for (let seat = 0; seat < seats(); seat++) {
      const expect = deck.filter((_, i) => i % DEALT_HANDS === seat);
      if (d.hands && !same(expect, d.hands[seat] || [])) return false;
      const rows = d.showdown && d.showdown.arrangements && d.showdown.arrangements[seat];
      if (rows && !same(expect, [...rows.front, ...rows.middle, ...rows.back])) return false;
    }
    return true;
  }

  // -- loading ------------------------------------------------------------------------
  function rebuild(newDetail) {
    detail = newDetail;
    deals = []; pendingKey = null; lastSeq = -1;
    root.dataset.live = detail.live ? "true" : "false";
    addEvents(detail.events);
  }

  async function load() {
    try {
      rebuild(await getJSON(`/api/matches/${encodeURIComponent(matchId)}`));
    } catch (e) {
      root.append(el("p", { class: "error", role: "alert" }, `Could not load the match: ${e.message}`));
      return;
    }
    if (detail.embargoed) {  // the page's note says why nothing is drawn
      root.dataset.embargoed = "true";
      return;
    }
    buildControls();
    index = detail.live ? Math.max(deals.length - 1, 0) : 0;
    render();
    verifyDeals();
    if (detail.live) follow();
    root.dataset.ready = "true";
  }

  function follow() {
    Arena.followMatch(matchId, lastSeq, {
      event(message) {
        const wasAtEnd = index >= deals.length - 1;
        addEvents([message]);
        if (wasAtEnd) index = Math.max(deals.length - 1, 0);
        render();
      },
      reload(next) {
        rebuild(next);
        index = Math.max(deals.length - 1, 0);
        render();
        if (detail.live) follow(); else verifyDeals();
      },
      ended(next) {
        rebuild(next);
        index = Math.max(deals.length - 1, 0);
        render();
        verifyDeals();
      },
    });
  }

  load();
})();
