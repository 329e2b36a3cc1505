"use strict";
// Thirteen cards: split 13 cards into front (3), middle (5), back (5) so that
// front <= middle <= back. Greedy and never fouled: the strongest five behind,
// the strongest five of the other eight in the middle, the last three in front.

const RANKS = "23456789TJQKA";
const [HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH] = [0, 1, 2, 3, 4, 5, 6, 7, 8];

// [category, deciding ranks...]; a 3-card front gives a shorter array, so a
// five-card hand matching it with kickers left compares higher.
function strength(cards, wheel) {
  const counts = new Map();
  for (const c of cards) {
    const r = RANKS.indexOf(c[0]);
    counts.set(r, (counts.get(r) || 0) + 1);
  }
  const groups = [...counts.entries()].map(([r, n]) => [n, r]).sort((a, b) => b[0] - a[0] || b[1] - a[1]);
  const order = groups.map((g) => g[1]);
  const shape = groups.map((g) => g[0]).join("");
  if (cards.length === 3) {
    return [shape === "3" ? TRIPS : shape === "21" ? PAIR : HIGH, ...order];
  }
  const flush = new Set(cards.map((c) => c[1])).size === 1;
  if (shape === "11111") {
    let straight = null;
    if (order.join(",") === "12,3,2,1,0") straight = wheel === "second_highest" ? [11, 12] : [3];
    else if (order[0] - order[4] === 4) straight = [order[0]];
    if (straight) return [flush ? STRAIGHT_FLUSH : STRAIGHT, ...straight];
    return [flush ? FLUSH : HIGH, ...order];
  }
  const cat = { "41": QUADS, "32": FULL_HOUSE, "311": TRIPS, "221": TWO_PAIR }[shape] ?? PAIR;
  return [cat, ...order];
}

function compare(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function* fives(cards) {
  const n = cards.length;
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++)
      for (let c = b + 1; c < n; c++)
        for (let d = c + 1; d < n; d++)
          for (let e = d + 1; e < n; e++) yield [cards[a], cards[b], cards[c], cards[d], cards[e]];
}

function bestFive(cards, wheel) {
  let best = null;
  let bestValue = null;
  for (const five of fives(cards)) {
    const value = strength(five, wheel);
    if (best === null || compare(value, bestValue) > 0) {
      best = five;
      bestValue = value;
    }
  }
  return best;
}

// constraints: {"front": 3, "middle": 5, "back": 5}; state.cards: our 13 cards.
function arrange(constraints, state, rules) {
  const wheel = (rules && rules.wheel) || "lowest";
  const cards = state.cards.slice();
  const back = bestFive(cards, wheel);
  const rest = cards.filter((c) => !back.includes(c));
  const middle = bestFive(rest, wheel);
  const front = rest.filter((c) => !middle.includes(c));
  return { front, middle, back };
}

module.exports = { arrange, strength, compare };
