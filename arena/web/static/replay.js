// The match page: a Muushig table drawn step by step from the event log.
//
// A finished match is replayed from its full stored log (every hand shown)
// and its deals are checked against the commitments sent during play. A live
// match is drawn from the public log only: the page never receives a hidden
// card, and it also ignores hidden fields should one ever arrive.
"use strict";

(() => {
  const root = document.getElementById("replay");
  if (!root) return;
  const { el, card, backs, cardText, sortCards, suitText, getJSON } = Arena;
  const matchId = root.dataset.match;
  const SEATS = 5;
  // Kinds drawn as a step; others (commit, deal, action) only update state.
  const STEPS = new Set(["round_start", "hand_start", "decision", "all_folded", "exchange",
    "take", "play", "trick", "hand_end", "round_end", "timeout", "autopilot"]);

  let detail = null;
  let steps = []; // {state, text, hand: "r/h"}
  let state = null;
  let index = 0;
  let timer = null;
  let source = null;
  let lastSeq = -1;
  const ui = {};

  // -- state ------------------------------------------------------------------
  function freshState() {
    return {
      round: null, hand: null, dealer: null, trump: null, faceUp: null, faceUpTaken: false,
      scores: Array(SEATS).fill(15), stars: Array(SEATS).fill(0),
      hands: null, counts: Array(SEATS).fill(0), status: Array(SEATS).fill("waiting"),
      trick: [], trickWinner: null, tricks: Array(SEATS).fill(0), active: null, muushig: [],
    };
  }

  function who(seat) {
    const name = detail.match.players[seat];
    return `${name === undefined ? "?" : name} (seat ${seat})`;
  }

  function removeCard(s, seat, c) {
    if (!s.hands || !s.hands[seat]) return;
    const i = s.hands[seat].indexOf(c);
    if (i >= 0) s.hands[seat].splice(i, 1);
  }

  /** Apply one event; returns the narration of a step, or null. */
  function apply(s, ev, live) {
    s.active = ev.seat === undefined ? null : ev.seat;
    switch (ev.kind) {
      case "round_start":
        Object.assign(s, freshState(), { stars: s.stars });
        s.round = ev.round; s.dealer = ev.dealer; s.scores = ev.scores.slice();
        return `Round ${ev.round + 1} begins; ${who(ev.dealer)} deals first.`;
      case "hand_start": {
        s.round = ev.round; s.hand = ev.hand; s.dealer = ev.dealer;
        s.trump = ev.trump; s.faceUp = ev.face_up; s.faceUpTaken = false;
        s.status = Array(SEATS).fill("waiting"); s.trick = []; s.trickWinner = null;
        s.tricks = Array(SEATS).fill(0); s.counts = Array(SEATS).fill(5); s.muushig = [];
        s.hands = !live && Array.isArray(ev.hands) ? ev.hands.map((h) => h.slice()) : null;
        s.active = ev.dealer;
        return `Round ${ev.round + 1}, hand ${ev.hand + 1}: ${who(ev.dealer)} deals. ` +
          `Trump is ${suitText(ev.trump)} (face-up ${cardText(ev.face_up)}).`;
      }
      case "decision":
        s.status[ev.seat] = ev.choice === "enter" ? "entered" : "folded";
        return `${who(ev.seat)} ${ev.choice === "enter" ? "enters" : "folds"}` +
          `${ev.forced ? " (forced)" : ""}.`;
      case "all_folded":
        s.scores = ev.scores.slice(); s.status[ev.dealer] = "entered"; s.active = ev.dealer;
        s.tricks[ev.dealer] = 5;
        return `Everyone else folded: ${who(ev.dealer)} takes all five tricks (−5).`;
      case "exchange": {
        let text = `${who(ev.seat)} exchanges ${ev.count} card${ev.count === 1 ? "" : "s"}`;
        if (!live && s.hands && Array.isArray(ev.discarded) && Array.isArray(ev.drawn)) {
          ev.discarded.forEach((c) => removeCard(s, ev.seat, c));
          s.hands[ev.seat].push(...ev.drawn);
          if (ev.count) text += `: gives up ${ev.discarded.map(cardText).join(" ")}, draws ${ev.drawn.map(cardText).join(" ")}`;
        }
        return text + ".";
      }
      case "take":
        s.faceUpTaken = !!ev.taken;
        if (ev.taken && !live && s.hands && ev.discarded) {
          removeCard(s, ev.seat, ev.discarded);
          s.hands[ev.seat].push(s.faceUp);
        }
        return ev.taken ? `${who(ev.seat)} takes the face-up ${cardText(s.faceUp)}` +
          (!live && ev.discarded ? ` and gives up ${cardText(ev.discarded)}.` : ".")
          : `${who(ev.seat)} leaves the face-up card.`;
      case "play":
        if (s.trickWinner !== null) { s.trick = []; s.trickWinner = null; }
        s.trick.push([ev.seat, ev.card]);
        removeCard(s, ev.seat, ev.card);
        s.counts[ev.seat] = Math.max(0, s.counts[ev.seat] - 1);
        return `${who(ev.seat)} plays ${cardText(ev.card)}.`;
      case "trick":
        s.trick = ev.cards.map((p) => p.slice()); s.trickWinner = ev.winner;
        s.tricks[ev.winner] += 1; s.scores = ev.scores.slice(); s.active = ev.winner;
        return `${who(ev.winner)} wins the trick (−1).`;
      case "hand_end":
        s.scores = ev.scores.slice(); s.muushig = (ev.muushig || []).slice();
        return s.muushig.length
          ? `Hand over. Muushig (+5): ${s.muushig.map(who).join(", ")}.`
          : "Hand over.";
      case "round_end":
        s.scores = ev.scores.slice(); s.stars[ev.winner] += 1; s.active = ev.winner;
        return `${who(ev.winner)} wins round ${ev.round + 1} ★.`;
      case "timeout":
        return `${who(ev.seat)} ran out of time (${ev.phase}); the default action is played.`;
      case "autopilot":
        return `${who(ev.seat)} is now played by the house bot (${ev.reason}).`;
      default:
        return null;
    }
  }

  function snapshot(s) {
    return JSON.parse(JSON.stringify(s));
  }

  function addEvents(entries) {
    for (const entry of entries) {
      if (entry.seq <= lastSeq) continue;
      lastSeq = entry.seq;
      const ev = entry.data || {};
      const text = apply(state, ev, detail.live);
      if (text !== null && STEPS.has(ev.kind)) {
        steps.push({ state: snapshot(state), text, kind: ev.kind });
      }
    }
  }

  // -- drawing ------------------------------------------------------------------
  function drawSeat(s, seat) {
    const name = detail.match.players[seat];
    const classes = ["seat", `seat-${seat}`, s.status[seat]];
    if (s.active === seat) classes.push("active");
    let cards;
    if (s.hands && s.hands[seat]) {
      cards = el("span", { class: "hand" }, sortCards(s.hands[seat]).map((c) => card(c)));
    } else {
      cards = backs(s.round === null || s.hand === null ? 0 : s.counts[seat]);
    }
    const badges = [];
    if (s.dealer === seat) badges.push(el("span", { class: "badge dealer" }, "dealer"));
    if (s.status[seat] !== "waiting") badges.push(el("span", { class: "badge" }, s.status[seat]));
    if (s.muushig.includes(seat)) badges.push(el("span", { class: "badge muushig" }, "muushig +5"));
    return el("section", { class: classes.join(" "), "aria-label": `Seat ${seat}: ${name}` },
      el("h3", {}, el("a", { href: `/bots/${encodeURIComponent(name)}` }, name),
        el("small", {}, ` seat ${seat}`)),
      el("p", { class: "badges" }, badges),
      el("p", { class: "figures" },
        el("span", { class: "score", title: "score this round" }, `score ${s.scores[seat]}`), " · ",
        el("span", { class: "stars", "aria-label": `${s.stars[seat]} stars` }, "★".repeat(s.stars[seat]) || "no ★"),
        " · ", `${s.tricks[seat]} trick${s.tricks[seat] === 1 ? "" : "s"}`),
      cards);
  }

  function drawCentre(s) {
    const trick = s.trick.map(([seat, c]) => el("li", { class: s.trickWinner === seat ? "winner" : "" },
      el("span", { class: "who" }, detail.match.players[seat]), card(c)));
    return el("section", { class: "centre", "aria-label": "Table centre" },
      s.round === null ? el("p", {}, "Waiting for the first deal.") : el("p", {},
        `Round ${s.round + 1}`, s.hand === null ? "" : `, hand ${s.hand + 1}`),
      s.faceUp ? el("p", { class: "trump" }, "Trump ", suitText(s.trump), ": face-up ",
        card(s.faceUp, s.faceUpTaken ? "taken" : ""), s.faceUpTaken ? " (taken by the dealer)" : "") : null,
      el("ol", { class: "trick", "aria-label": "Cards of the current trick" }, trick));
  }

  function render() {
    const step = steps[index];
    const s = step ? step.state : freshState();
    ui.table.replaceChildren(...Array.from({ length: SEATS }, (_, seat) => drawSeat(s, seat)), drawCentre(s));
    ui.narration.textContent = step ? step.text : (detail.live ? "Waiting for the first event." : "No events.");
    ui.range.max = String(Math.max(steps.length - 1, 0));
    ui.range.value = String(index);
    ui.position.textContent = steps.length ? `Step ${index + 1} of ${steps.length}` : "No steps";
    ui.first.disabled = ui.prev.disabled = index <= 0;
    ui.last.disabled = ui.next.disabled = index >= steps.length - 1;
    root.dataset.step = String(index);
  }

  function go(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    render();
  }

  function atEnd() {
    return index >= steps.length - 1;
  }

  function setPlaying(on) {
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      if (atEnd() && !detail.live) go(0);
      timer = setInterval(() => { if (atEnd()) { if (!detail.live) setPlaying(false); } else go(index + 1); },
        Number(ui.speed.value));
    }
    ui.play.textContent = on ? "Pause" : "Play";
    ui.play.setAttribute("aria-pressed", on ? "true" : "false");
  }

  function buildControls() {
    const button = (label, text, onclick, key) => el("button", { type: "button", "aria-label": label,
      "aria-keyshortcuts": key, onclick }, text);
    ui.first = button("First step", "« First", () => go(0), "Home");
    ui.prev = button("Previous step", "◀ Prev", () => go(index - 1), "ArrowLeft");
    ui.play = button("Play or pause", "Play", () => setPlaying(!timer), "Space");
    ui.next = button("Next step", "Next ▶", () => go(index + 1), "ArrowRight");
    ui.last = button("Last step", "Last »", () => go(steps.length - 1), "End");
    ui.range = el("input", { type: "range", id: "replay-step", min: 0, max: 0, value: 0,
      oninput: (e) => go(Number(e.target.value)) });
    ui.position = el("output", { for: "replay-step", class: "position" });
    ui.speed = el("select", { id: "replay-speed", onchange: () => { if (timer) setPlaying(true); } },
      [["1000", "1 step/s"], ["500", "2 steps/s"], ["250", "4 steps/s"], ["100", "10 steps/s"]]
        .map(([v, t]) => el("option", { value: v, selected: v === "500" }, t)));
    ui.jump = el("select", { id: "replay-jump", onchange: (e) => { if (e.target.value) go(Number(e.target.value)); } });
    ui.narration = el("p", { class: "narration", role: "status", "aria-live": "polite" });
    ui.table = el("div", { class: "table" });
    ui.verify = el("section", { class: "verify", "aria-labelledby": "h-verify" });
    root.append(
      el("div", { class: "controls", role: "toolbar", "aria-label": "Replay controls" },
        ui.first, ui.prev, ui.play, ui.next, ui.last,
        el("label", { for: "replay-step" }, "Step"), ui.range, ui.position,
        el("label", { for: "replay-speed" }, "Speed"), ui.speed,
        el("label", { for: "replay-jump" }, "Jump to hand"), ui.jump),
      ui.narration, ui.table, ui.verify);
    document.addEventListener("keydown", onKey);
  }

  function onKey(e) {
    const tag = (e.target && e.target.tagName) || "";
    if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) || e.altKey || e.ctrlKey || e.metaKey) return;
    const actions = { ArrowRight: () => go(index + 1), ArrowLeft: () => go(index - 1),
      Home: () => go(0), End: () => go(steps.length - 1) };
    if (e.key === " " && tag !== "BUTTON" && tag !== "A") actions[" "] = () => setPlaying(!timer);
    if (actions[e.key]) { e.preventDefault(); actions[e.key](); }
  }

  function fillJump() {
    if (!ui.jump) return; // controls not built yet
    const options = [el("option", { value: "" }, "—")];
    steps.forEach((step, i) => {
      if (step.kind === "hand_start") {
        options.push(el("option", { value: i }, `Round ${step.state.round + 1}, hand ${step.state.hand + 1}`));
      }
    });
    ui.jump.replaceChildren(...options);
  }

  // -- deal verification ------------------------------------------------------------
  async function verifyDeals() {
    const reveal = detail.match.reveal;
    if (detail.live || !Array.isArray(reveal) || !reveal.length) { ui.verify.replaceChildren(); return; }
    const commits = new Map(), starts = new Map();
    for (const { data } of detail.events) {
      if (data.kind === "commit") commits.set(`${data.round}/${data.hand}`, data.commitment);
      if (data.kind === "hand_start") starts.set(`${data.round}/${data.hand}`, data);
    }
    const rows = [];
    let good = 0;
    for (const r of reveal) {
      const key = `${r.round}/${r.hand}`;
      const digest = await Arena.sha256Hex(`${r.salt}:${r.deck.join(",")}`);
      const commitment = commits.get(key);
      const ok = commitment !== undefined && digest === commitment;
      if (ok) good += 1;
      const dealt = dealMatches(starts.get(key), r.deck);
      rows.push(el("tr", { class: ok ? "ok" : "bad" },
        el("td", {}, r.round + 1), el("td", {}, r.hand + 1),
        el("td", {}, el("code", { title: commitment || "" }, commitment ? commitment.slice(0, 16) + "…" : "missing")),
        el("td", { class: "check", "aria-label": ok ? "commitment verified" : "commitment does not match" }, ok ? "✓" : "✗"),
        el("td", { class: "check", "aria-label": dealt === null ? "not checked" : dealt ? "deal matches" : "deal differs" },
          dealt === null ? "—" : dealt ? "✓" : "✗")));
    }
    ui.verify.replaceChildren(
      el("h3", { id: "h-verify" }, "Deal verification"),
      el("p", {}, `${good} of ${reveal.length} deals match the commitment sent before the hand ` +
        "(SHA-256 of salt:deck, computed in this browser)."),
      el("table", {}, el("thead", {}, el("tr", {}, ["Round", "Hand", "Commitment", "Hash ✓", "Dealt ✓"]
        .map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows)));
    root.dataset.verified = `${good}/${reveal.length}`;
  }

  /** Do the hands shown at hand_start follow from the revealed deck (rules §3)? */
  function dealMatches(start, deck) {
    if (!start || !Array.isArray(start.hands) || !Array.isArray(deck) || deck.length < 26) return null;
    for (let seat = 0; seat < SEATS; seat++) {
      const expect = deck.slice(0, 25).filter((_, i) => (start.dealer + 1 + i) % SEATS === seat);
      const got = start.hands[seat] || [];
      if (sortCards(expect).join() !== sortCards(got).join()) return false;
    }
    return start.face_up === deck[25];
  }

  // -- loading ------------------------------------------------------------------------
  function rebuild(newDetail) {
    detail = newDetail;
    steps = []; state = freshState(); lastSeq = -1;
    root.dataset.live = detail.live ? "true" : "false";
    addEvents(detail.events);
    fillJump();
  }

  async function load() {
    try {
      rebuild(await getJSON(`/api/matches/${encodeURIComponent(matchId)}`));
    } catch (e) {
      root.append(el("p", { class: "error", role: "alert" }, `Could not load the match: ${e.message}`));
      return;
    }
    if (detail.match.game !== "muushig") {
      root.append(el("p", {}, "This viewer draws Muushig tables only; the log is in the API."));
      return;
    }
    if (detail.embargoed) return;
    buildControls();
    fillJump();
    index = detail.live ? Math.max(steps.length - 1, 0) : 0;
    render();
    verifyDeals();
    if (detail.live) follow();
    root.dataset.ready = "true";
  }

  function follow() {
    source = Arena.subscribe([`match:${matchId}`], (message) => {
      if (message.type === "event") {
        const wasAtEnd = atEnd();
        addEvents([message]);
        if (message.data && message.data.kind === "hand_start") fillJump();
        if (wasAtEnd) index = Math.max(steps.length - 1, 0);
        render();
      } else if (message.type === "match_ended") {
        source.close();
        finished(0);
      } else if (message.type === "gap") {
        source.close();
        reloadLive();
      }
    }, { after: lastSeq });
  }

  async function reloadLive() {
    rebuild(await getJSON(`/api/matches/${encodeURIComponent(matchId)}`));
    index = Math.max(steps.length - 1, 0);
    render();
    if (detail.live) follow(); else verifyDeals();
  }

  // The store may record the result a moment after the hub announces it.
  async function finished(attempt) {
    const next = await getJSON(`/api/matches/${encodeURIComponent(matchId)}`);
    if (next.live && attempt < 20) { setTimeout(() => finished(attempt + 1), 250 * (attempt + 1)); return; }
    setPlaying(false);
    rebuild(next);
    index = Math.max(steps.length - 1, 0);
    const status = document.getElementById("match-status");
    if (status) { status.textContent = next.match.status; status.className = `status ${next.match.status}`; }
    render();
    verifyDeals();
  }

  load();
})();
