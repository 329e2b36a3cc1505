"use strict";
// The whole "intelligence" of the sample bot: one function from
// (phase, legal, state) to an answer that is always one of `legal`.
// Muushig rewards tricks (-1 each) and punishes entering without one (+5),
// so the bot enters with strong cards and tries to win tricks cheaply.

const RANKS = "789TJQKA";
const SUITS = "HSDC";

const rank = (card) => RANKS.indexOf(card[0]);
const suit = (card) => card[1];
const canonicalKey = (card) => SUITS.indexOf(suit(card)) * 8 + rank(card);
const canonical = (cards) => [...cards].sort((a, b) => canonicalKey(a) - canonicalKey(b));

// Weakest first: non-trumps before trumps, then by rank.
function byWeakness(cards, trump) {
  return [...cards].sort(
    (a, b) => (suit(a) === trump) - (suit(b) === trump) || rank(a) - rank(b) || canonicalKey(a) - canonicalKey(b),
  );
}

function isStrong(card, trump) {
  return card[0] === "A" || (suit(card) === trump && rank(card) >= rank("J"));
}

function decide(legal, state) {
  const strong = state.cards.filter((c) => isStrong(c, state.trump)).length;
  const want = strong >= 2 ? "enter" : "fold";
  return legal.includes(want) ? want : legal[0];
}

function exchange(legal, state) {
  // Throw away low non-trumps (below king), as many as allowed.
  const most = Math.max(...legal.map((set) => set.length));
  const weak = byWeakness(state.cards, state.trump).filter((c) => suit(c) !== state.trump && rank(c) < rank("K"));
  const wanted = canonical(weak.slice(0, most)).join(",");
  const match = legal.find((set) => set.join(",") === wanted);
  return match !== undefined ? match : legal[0];
}

function take(legal, state) {
  // Taking the face-up trump is worth it if we give up something weaker.
  const cards = legal.filter((c) => c !== null);
  if (cards.length === 0) return null;
  const weakest = byWeakness(cards, state.trump)[0];
  const better = suit(weakest) !== state.trump || rank(weakest) < rank(state.face_up);
  return better ? weakest : null;
}

function winnerOf(trick, trump) {
  // trick: [[seat, card], ...]; the highest trump, else the highest of the led suit.
  const led = suit(trick[0][1]);
  let best = trick[0];
  for (const entry of trick.slice(1)) {
    const [, card] = entry;
    const bestCard = best[1];
    const beats =
      suit(card) === suit(bestCard)
        ? rank(card) > rank(bestCard)
        : suit(card) === trump && suit(bestCard) !== trump
          ? true
          : false;
    if (beats && (suit(card) === led || suit(card) === trump)) best = entry;
  }
  return best[0];
}

function play(legal, state) {
  const trump = state.trump;
  if (state.trick.length === 0) {
    // Leading: the strongest card we may lead.
    return byWeakness(legal, trump).at(-1);
  }
  const winning = legal.filter((card) => winnerOf([...state.trick, [state.seat, card]], trump) === state.seat);
  if (winning.length > 0) return byWeakness(winning, trump).at(-1);
  return byWeakness(legal, trump)[0];
}

const PHASES = { decide, exchange, take, play };

function choose(phase, legal, state) {
  const fn = PHASES[phase];
  if (!fn || !Array.isArray(legal) || legal.length === 0) return Array.isArray(legal) ? legal[0] : null;
  try {
    const answer = fn(legal, state);
    return answer === undefined ? legal[0] : answer;
  } catch (err) {
    // A state this bot does not understand: any legal answer beats a timeout.
    process.stderr.write(`strategy error in ${phase}: ${err && err.message}\n`);
    return legal[0];
  }
}

module.exports = { choose, winnerOf, canonical };
