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
  /** A numbered house seat (house-heuristic-2) belongs to its strategy's page. */
  function entrant(name) {
    const house = /^(house-.+)-\d+$/.exec(name);
    return house ? house[1] : name;
  }

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
      el("h3", {}, el("a", { href: `/bots/${encodeURIComponent(entrant(name))}` }, name),
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

  // -- position ------------------------------------------------------------------
  // A trick ends with "trick"; a hand everybody else folded has no trick
  // events, only "all_folded", which the viewer treats as its one trick.
  const TRICK_ENDS = new Set(["trick", "all_folded"]);
  const HAND_STARTS = new Set(["hand_start"]);

  function nextOf(kinds) {
    for (let i = index + 1; i < steps.length; i++) if (kinds.has(steps[i].kind)) return i;
    return steps.length - 1;
  }

  /** The last such step before the current one: from inside a hand, "previous
   * hand" goes to its start first, as a media player's "previous" does. */
  function previousOf(kinds) {
    for (let i = index - 1; i >= 0; i--) if (kinds.has(steps[i].kind)) return i;
    return 0;
  }

  function currentHandStart() {
    for (let i = index; i >= 0; i--) if (steps[i] && steps[i].kind === "hand_start") return i;
    return -1;
  }

  function render() {
    const step = steps[index];
    const s = step ? step.state : freshState();
    ui.table.replaceChildren(...Array.from({ length: SEATS }, (_, seat) => drawSeat(s, seat)), drawCentre(s));
    ui.narration.textContent = step ? step.text : (detail.live ? "Waiting for the first event." : "No events.");
    ui.range.max = String(Math.max(steps.length - 1, 0));
    ui.range.value = String(index);
    ui.position.textContent = steps.length ? `Step ${index + 1} of ${steps.length}` : "No steps";
    const atStart = index <= 0, atLast = index >= steps.length - 1;
    [ui.first, ui.prevHand, ui.prevTrick, ui.prev].forEach((b) => { b.disabled = atStart; });
    [ui.next, ui.nextTrick, ui.nextHand, ui.last].forEach((b) => { b.disabled = atLast; });
    const hand = currentHandStart();
    ui.jump.value = hand >= 0 ? String(hand) : "";
    root.dataset.step = String(index);
  }

  function go(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    render();
    // Reaching the end of a finished match ends playing, however it got there.
    if (ui.play && playing() && atEnd() && !detail.live) setPlaying(false);
  }

  function atEnd() {
    return index >= steps.length - 1;
  }

  // -- playing -------------------------------------------------------------------
  // A speed is a unit (step, trick or hand) and a delay between moves; "match"
  // spreads the whole match's steps over the given time.
  const SPEEDS = [
    ["step:1000", "1 step/s"], ["step:500", "2 steps/s"], ["step:250", "4 steps/s"],
    ["step:100", "10 steps/s"], ["trick:1000", "by trick, 1 trick/s"],
    ["trick:400", "by trick, 2.5 tricks/s"], ["hand:1500", "by hand, 1 hand per 1.5 s"],
    ["match:60000", "whole match in 1 minute"], ["match:180000", "whole match in 3 minutes"],
  ];

  function speed() {
    const [unit, ms] = ui.speed.value.split(":");
    if (unit === "match") return { unit: "step", delay: Math.max(10, Number(ms) / Math.max(steps.length, 1)) };
    return { unit, delay: Number(ms) };
  }

  function advance(unit) {
    if (unit === "trick") go(nextOf(TRICK_ENDS));
    else if (unit === "hand") go(nextOf(HAND_STARTS));
    else go(index + 1);
  }

  function tick() {
    timer = null;
    if (atEnd()) {
      if (detail.live) timer = setTimeout(tick, 250); // wait for the next event
      else setPlaying(false);
      return;
    }
    const { unit, delay } = speed();
    advance(unit);
    if (ui.play.getAttribute("aria-pressed") === "true") timer = setTimeout(tick, delay);
  }

  function setPlaying(on) {
    if (timer) { clearTimeout(timer); timer = null; }
    ui.play.textContent = on ? "Pause" : "Play";
    ui.play.setAttribute("aria-pressed", on ? "true" : "false");
    if (on) {
      if (atEnd() && !detail.live) go(0);
      timer = setTimeout(tick, speed().delay);
    }
  }

  function playing() {
    return ui.play.getAttribute("aria-pressed") === "true";
  }

  function showDuration() {
    const { unit, delay } = speed();
    const kinds = unit === "trick" ? TRICK_ENDS : unit === "hand" ? HAND_STARTS : null;
    const moves = kinds ? steps.filter((s) => kinds.has(s.kind)).length : steps.length;
    const seconds = Math.round((moves * delay) / 1000);
    const text = seconds >= 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds} s`;
    ui.duration.textContent = detail.live ? "" : `whole match ≈ ${text} at this speed`;
  }

  // -- controls ------------------------------------------------------------------
  const KEYS = [
    ["← →", "step"], ["Shift+← Shift+→", "trick"], ["PageUp PageDown", "hand"],
    ["Home End", "first / last"], ["Space", "play / pause"],
  ];

  function buildControls() {
    const keyText = (key) => key.replace("ArrowLeft", "←").replace("ArrowRight", "→");
    const button = (label, text, onclick, key) => el("button", { type: "button", "aria-label": label,
      "aria-keyshortcuts": key, title: `${label} (${keyText(key)})`, onclick }, text);
    ui.first = button("First step", "« First", () => go(0), "Home");
    ui.prevHand = button("Previous hand", "⇤ Hand", () => go(previousOf(HAND_STARTS)), "PageUp");
    ui.prevTrick = button("Previous trick", "◀◀ Trick", () => go(previousOf(TRICK_ENDS)), "Shift+ArrowLeft");
    ui.prev = button("Previous step", "◀ Step", () => go(index - 1), "ArrowLeft");
    ui.play = button("Play or pause", "Play", () => setPlaying(!playing()), "Space");
    ui.next = button("Next step", "Step ▶", () => go(index + 1), "ArrowRight");
    ui.nextTrick = button("Next trick", "Trick ▶▶", () => go(nextOf(TRICK_ENDS)), "Shift+ArrowRight");
    ui.nextHand = button("Next hand", "Hand ⇥", () => go(nextOf(HAND_STARTS)), "PageDown");
    ui.last = button("Last step", "Last »", () => go(steps.length - 1), "End");
    ui.play.setAttribute("aria-pressed", "false");
    ui.range = el("input", { type: "range", id: "replay-step", min: 0, max: 0, value: 0,
      oninput: (e) => go(Number(e.target.value)) });
    ui.position = el("output", { for: "replay-step", class: "position" });
    ui.speed = el("select", { id: "replay-speed", onchange: () => { showDuration(); if (playing()) setPlaying(true); } },
      SPEEDS.map(([v, t]) => el("option", { value: v, selected: v === "step:500" }, t)));
    ui.duration = el("small", { id: "replay-duration", class: "duration" });
    ui.jump = el("select", { id: "replay-jump", onchange: (e) => { if (e.target.value) go(Number(e.target.value)); } });
    ui.narration = el("p", { class: "narration", role: "status", "aria-live": "polite" });
    ui.table = el("div", { class: "table" });
    ui.verify = el("section", { class: "verify", "aria-label": "Deal verification" });
    const keys = el("p", { class: "keys" }, "Keys: ", KEYS.map(([k, what], i) => [
      i ? " · " : "", k.split(" ").map((one, j) => [j ? " " : "", el("kbd", {}, one)]), ` ${what}`]));
    root.append(
      el("div", { class: "controls", role: "toolbar", "aria-label": "Replay controls" },
        ui.first, ui.prevHand, ui.prevTrick, ui.prev, ui.play, ui.next, ui.nextTrick, ui.nextHand, ui.last),
      el("div", { class: "controls" },
        el("label", { for: "replay-step" }, "Step"), ui.range, ui.position,
        el("label", { for: "replay-speed" }, "Speed"), ui.speed, ui.duration,
        el("label", { for: "replay-jump" }, "Jump to hand"), ui.jump),
      keys, ui.narration, ui.table, ui.verify);
    document.addEventListener("keydown", onKey);
  }

  function onKey(e) {
    const tag = (e.target && e.target.tagName) || "";
    if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) || e.altKey || e.ctrlKey || e.metaKey) return;
    const actions = e.shiftKey
      ? { ArrowRight: () => go(nextOf(TRICK_ENDS)), ArrowLeft: () => go(previousOf(TRICK_ENDS)) }
      : { ArrowRight: () => go(index + 1), ArrowLeft: () => go(index - 1),
          PageDown: () => go(nextOf(HAND_STARTS)), PageUp: () => go(previousOf(HAND_STARTS)),
          Home: () => go(0), End: () => go(steps.length - 1) };
    if (e.key === " " && tag !== "BUTTON" && tag !== "A") actions[" "] = () => setPlaying(!playing());
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
    const hand = currentHandStart();
    ui.jump.value = hand >= 0 ? String(hand) : "";
    showDuration();
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
    const failed = reveal.length - good;
    // One line; the table opens on request, or by itself when a deal fails.
    const summary = `${good} of ${reveal.length} deals verified in this browser` +
      (failed ? ` — ${failed} did not match its commitment` : "");
    ui.verify.replaceChildren(el("details", { open: failed > 0 },
      el("summary", { class: failed ? "bad" : "ok" }, summary),
      el("p", {}, "Each deck, revealed after the match, hashes (SHA-256 of salt:deck, computed " +
        "here) to the commitment the server sent before the hand was played."),
      el("table", {}, el("thead", {}, el("tr", {}, ["Round", "Hand", "Commitment", "Hash ✓", "Dealt ✓"]
        .map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows))));
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
    if (detail.embargoed) {  // the page's note says why nothing is drawn
      root.dataset.embargoed = "true";
      return;
    }
    buildControls();
    fillJump();
    index = detail.live ? Math.max(steps.length - 1, 0) : 0;
    render();
    verifyDeals();
    if (detail.live) follow();
    root.dataset.ready = "true";
  }

  function follow() {
    Arena.followMatch(matchId, lastSeq, {
      event(message) {
        const wasAtEnd = atEnd();
        addEvents([message]);
        if (message.data && message.data.kind === "hand_start") fillJump();
        if (wasAtEnd) index = Math.max(steps.length - 1, 0);
        render();
      },
      reload(next) {
        rebuild(next);
        index = Math.max(steps.length - 1, 0);
        render();
        if (detail.live) follow(); else verifyDeals();
      },
      ended(next) {
        setPlaying(false);
        rebuild(next);
        index = Math.max(steps.length - 1, 0);
        render();
        verifyDeals();
      },
    });
  }

  load();
})();
