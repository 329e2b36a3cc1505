"""Hand-made Muushig matches for the web tests.

One hand of one round, dealt from a seeded deck by the rules' deal order,
with the stored (full) log and the public log a spectator would get. The
tricks are not checked against the follow rules: the web only shows logs.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, Store, StoredEvent

CARDS = [rank + suit for suit in "HSDC" for rank in "789TJQKA"]
PLAYERS = ["alpha", "beta", "gamma", "delta", "eps"]
# Kinds and fields a spectator never sees (the public form drops them).
HIDDEN_FIELDS = {"hands", "deck", "discarded", "drawn", "cards_in_hand"}


@dataclass
class HandMadeMatch:
    match_id: str
    players: list[str]
    deck: list[str]
    salt: str
    record_log: list[dict[str, Any]] = field(default_factory=list)
    public_log: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    hands: list[list[str]] = field(default_factory=list)  # as dealt
    played: list[str] = field(default_factory=list)

    @property
    def commitment(self) -> str:
        return hashlib.sha256(f"{self.salt}:{','.join(self.deck)}".encode()).hexdigest()

    @property
    def face_up(self) -> str:
        return self.deck[25]

    def reveal(self) -> list[dict[str, Any]]:
        return [{"round": 0, "hand": 0, "salt": self.salt, "deck": list(self.deck)}]

    def hidden_cards(self) -> set[str]:
        """Cards a spectator must not see: every card held and not played."""
        held = {c for hand in self.hands for c in hand} | set(self.deck[26:])
        return held - set(self.played) - {self.face_up}


def make_match(match_id: str, *, players: list[str] | None = None, seed: int = 1,
               winners: tuple[int, ...] = (1, 1, 2, 3, 1)) -> HandMadeMatch:
    """A match of one hand: everybody enters, seat 1 exchanges one card, the
    dealer (seat 0) takes the face-up card, five tricks won by ``winners``."""
    players = list(players or PLAYERS)
    rng = random.Random(seed)
    deck = CARDS[:]
    rng.shuffle(deck)
    m = HandMadeMatch(match_id, players, deck, salt=f"salt-{seed}")
    dealer = 0
    hands: list[list[str]] = [[] for _ in range(5)]
    for i, c in enumerate(deck[:25]):
        hands[(dealer + 1 + i) % 5].append(c)
    m.hands = [list(h) for h in hands]
    face_up, trump = deck[25], deck[25][1]
    scores = [15] * 5

    def both(data: dict[str, Any], public: dict[str, Any] | None = None) -> None:
        m.record_log.append(data)
        if public is not None:
            m.public_log.append(public)

    both({"kind": "round_start", "round": 0, "dealer": dealer, "scores": list(scores)},
         {"kind": "round_start", "round": 0, "dealer": dealer, "scores": list(scores)})
    both({"kind": "deal", "round": 0, "hand": 0, "deck": list(deck)})
    commit = {"kind": "commit", "round": 0, "hand": 0, "commitment": m.commitment}
    both(commit, dict(commit))
    start = {"kind": "hand_start", "round": 0, "hand": 0, "dealer": dealer,
             "face_up": face_up, "trump": trump}
    both({**start, "hands": [list(h) for h in hands]}, dict(start))
    for seat in [1, 2, 3, 4, 0]:
        d = {"kind": "decision", "seat": seat, "choice": "enter", "forced": False}
        both(d, dict(d))
        both({"kind": "action", "seat": seat, "phase": "decide", "action": "enter",
              "source": "bot", "latency_ms": 3.0 + seat})
    stock = deck[26:]
    for seat in [1, 2, 3, 4, 0]:
        discarded = [hands[seat][0]] if seat == 1 else []
        drawn = stock[:len(discarded)]
        stock = stock[len(discarded):]
        for c in discarded:
            hands[seat].remove(c)
        hands[seat].extend(drawn)
        both({"kind": "exchange", "seat": seat, "count": len(discarded),
              "discarded": discarded, "drawn": drawn},
             {"kind": "exchange", "seat": seat, "count": len(discarded)})
        if seat == 3:
            both({"kind": "timeout", "seat": 3, "phase": "exchange"},
                 {"kind": "timeout", "seat": 3, "phase": "exchange"})
    give_up = hands[0][0]
    hands[0].remove(give_up)
    hands[0].append(face_up)
    both({"kind": "take", "seat": 0, "taken": True, "discarded": give_up},
         {"kind": "take", "seat": 0, "taken": True})
    leader = 1
    tricks = [0] * 5
    for winner in winners:
        cards = []
        for k in range(5):
            seat = (leader + k) % 5
            c = hands[seat].pop(0)
            cards.append([seat, c])
            m.played.append(c)
            play = {"kind": "play", "seat": seat, "card": c}
            both(play, dict(play))
            both({"kind": "action", "seat": seat, "phase": "play", "action": c,
                  "source": "bot", "latency_ms": 10.0 + seat})
        scores[winner] -= 1
        tricks[winner] += 1
        t = {"kind": "trick", "winner": winner, "cards": cards, "scores": list(scores)}
        both(t, dict(t))
        leader = winner
    muushig = [s for s in range(5) if tricks[s] == 0]
    for s in muushig:
        scores[s] += 5
    end = {"kind": "hand_end", "tricks": tricks, "muushig": muushig, "scores": list(scores)}
    both(end, dict(end))
    round_winner = min(range(5), key=lambda s: (scores[s], s))
    r = {"kind": "round_end", "round": 0, "winner": round_winner, "scores": list(scores)}
    both(r, dict(r))
    stars = [1 if s == round_winner else 0 for s in range(5)]
    order = sorted(range(5), key=lambda s: (-stars[s], scores[s]))
    ranks = [0] * 5
    for place, s in enumerate(order):
        prev = order[place - 1] if place else None
        same = prev is not None and (stars[prev], scores[prev]) == (stars[s], scores[s])
        ranks[s] = ranks[prev] if same else place + 1
    m.result = {"stars": stars, "final_scores": [[sc] for sc in scores],
                "sums": list(scores), "ranks": ranks}
    return m


def start_in_store(store: Store, m: HandMadeMatch, *, tournament_id: str | None = None,
                   seed: str | None = None, started_at: float | None = None,
                   upto: int | None = None) -> None:
    """Create the match as running and store (part of) its full log."""
    for name in set(m.players):
        store.ensure_bot(name)
    store.create_match(MatchRecord(
        id=m.match_id, game="muushig", players=m.players, rules={"max_hands": 200},
        limits={"decision_ms": 1000, "bank_ms": 0}, status=MatchStatus.RUNNING,
        started_at=started_at or time.time(), tournament_id=tournament_id, seed=seed))
    log = m.record_log if upto is None else m.record_log[:upto]
    store.append_events(m.match_id, [StoredEvent(i, time.time(), d) for i, d in enumerate(log)])


def finish_in_store(store: Store, m: HandMadeMatch, *, tournament_id: str | None = None,
                    seed: str | None = None, finished_at: float | None = None,
                    faults: list[SeatFaults] | None = None) -> None:
    start_in_store(store, m, tournament_id=tournament_id, seed=seed,
                   started_at=(finished_at or time.time()) - 60)
    store.finish_match(
        m.match_id, result=m.result, reveal=m.reveal(),
        faults=faults or [SeatFaults(timeouts=1 if s == 3 else 0) for s in range(5)],
        latency_ms=[[3.0 + s, 10.0 + s, 12.0 + s] for s in range(5)],
        finished_at=finished_at or time.time())
