// Thirteen on the play page: 13 cards into rows of 3, 5 and 5 without
// dragging -- pick a row, then click cards into it (a card in a row goes
// back to the hand when clicked) -- with the foul rule checked before the
// arrangement is sent by button[data-action=submit].
"use strict";

window.PlayThirteen = (() => {
  const { el, card, sortCards } = Arena;
  const SIZES = { front: 3, middle: 5, back: 5 };
  const NAMES = { front: "Front", middle: "Middle", back: "Back" };
  const RANKS = "23456789TJQKA";

  // The match's rule options (match_start.rules) change how a hand ranks:
  // `wheel` places A-2-3-4-5 lowest or second highest (rules page §2).
  const WHEELS = ["lowest", "second_highest"];

  // A hand's strength as [category, ...ranks], compared left to right:
  // 3-card fronts have only high card, pair and trips (protocol's rules).
  // Tested against the engine over random arrangements for every wheel.
  function strength(cards, wheel = "lowest") {
    const ranks = cards.map((c) => RANKS.indexOf(c[0])).sort((a, b) => b - a);
    const counts = {};
    for (const r of ranks) counts[r] = (counts[r] || 0) + 1;
    const groups = Object.entries(counts).map(([r, n]) => [n, Number(r)])
      .sort((a, b) => b[0] - a[0] || b[1] - a[1]);
    const order = groups.flatMap(([n, r]) => Array(n).fill(r));
    if (cards.length < 5) {
      return [groups[0][0] === 3 ? 3 : groups[0][0] === 2 ? 1 : 0, ...order];
    }
    const flush = cards.every((c) => c[1] === cards[0][1]);
    const distinct = groups.length === 5;
    let high = distinct && ranks[0] - ranks[4] === 4 ? ranks[0] : null;
    if (distinct && ranks[0] === 12 && ranks[1] === 3) {  // A-2-3-4-5
      // "lowest": a five-high straight; "second_highest": above K-high
      // ([.., 11]) and below A-high ([.., 12]) as [.., 11, 12].
      return [flush ? 8 : 4, ...(wheel === "lowest" ? [3] : [11, 12])];
    }
    if (high !== null) return [flush ? 8 : 4, high];
    if (groups[0][0] === 4) return [7, ...order];
    if (groups[0][0] === 3 && groups[1][0] === 2) return [6, ...order];
    if (flush) return [5, ...order];
    if (groups[0][0] === 3) return [3, ...order];
    if (groups[0][0] === 2 && groups[1][0] === 2) return [2, ...order];
    return [groups[0][0] === 2 ? 1 : 0, ...order];
  }

  function beats(a, b) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const x = a[i] ?? -1, y = b[i] ?? -1;
      if (x !== y) return x > y;
    }
    return false;
  }

  /** Why this arrangement is fouled under the match's `rules`, or null;
   * undefined if this page does not know the match's wheel (the server
   * judges alone then). */
  function foul(rows, rules) {
    const wheel = (rules && rules.wheel) || "lowest";
    if (!WHEELS.includes(wheel)) return undefined;
    const [f, m, b] = ["front", "middle", "back"].map((r) => strength(rows[r], wheel));
    if (beats(f, m)) return "the front beats the middle";
    if (beats(m, b)) return "the middle beats the back";
    return null;
  }

  let current = null;

  function offer(request, send, rules) {
    const cards = sortCards(request.state.cards || []);
    current = { request, send, rules, hand: cards, rows: { front: [], middle: [], back: [] },
                active: "front" };
    draw(true);
  }

  function put(code) {
    const c = current;
    for (const row of Object.keys(SIZES)) {
      if (c.rows[row].includes(code)) {  // back to the hand
        c.rows[row] = c.rows[row].filter((x) => x !== code);
        c.hand = sortCards([...c.hand, code]);
        c.active = row;
        return draw();
      }
    }
    if (c.rows[c.active].length >= SIZES[c.active]) return;
    c.rows[c.active].push(code);
    c.hand = c.hand.filter((x) => x !== code);
    if (c.rows[c.active].length === SIZES[c.active]) {
      const open = Object.keys(SIZES).find((r) => c.rows[r].length < SIZES[r]);
      if (open) c.active = open;
    }
    draw();
  }

  function draw(first) {
    const c = current;
    const box = document.getElementById("actions");
    const done = Object.keys(SIZES).every((r) => c.rows[r].length === SIZES[r]);
    const why = done ? foul(c.rows, c.rules) : null;
    const verdict = !done ? "" : why === undefined
      ? "This page does not know this match's rules; the server judges the foul."
      : why ? `Fouled: ${why}.` : "Not fouled.";
    const rows = Object.keys(SIZES).map((row) => el("div", { class: "row-line" },
      el("button", { type: "button", class: "row", "aria-pressed": String(c.active === row),
                     "data-row": row, onclick: () => { c.active = row; draw(); } },
         `${NAMES[row]} (${c.rows[row].length}/${SIZES[row]})`),
      c.rows[row].map((code) => el("button", { type: "button", class: "pick", "data-card": code,
        "aria-label": `${Arena.cardName(code)}, in the ${row}: put back`,
        onclick: () => put(code) }, card(code)))));
    box.replaceChildren(
      el("p", {}, "Pick a row, then click cards into it. The front must not beat the middle, ",
         "nor the middle the back, or the arrangement is fouled."),
      el("div", { class: "play-rows" }, rows),
      el("p", { id: "foul", role: "status" }, verdict),
      el("button", { type: "button", "data-action": "submit", disabled: !done,
                     onclick: () => c.send(c.request.id, { ...c.rows }) }, "Submit these rows"));
    document.getElementById("hand").replaceChildren(...c.hand.map((code) => el("button", {
      type: "button", class: "pick", "data-card": code,
      "aria-label": `${Arena.cardName(code)}: put in the ${c.active}`, onclick: () => put(code),
    }, card(code))));
    const focus = done ? box.querySelector("[data-action=submit]")
      : document.querySelector("#hand button.pick");
    if (focus && (first || done || document.activeElement === document.body)) focus.focus();
    else if (!done && document.activeElement && !document.activeElement.isConnected) {
      const next = document.querySelector("#hand button.pick");
      if (next) next.focus();
    }
  }

  return { offer, strength, foul, rules: () => current && current.rules };
})();
