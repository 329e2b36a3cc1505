"""Thirteen-card matches for the web tests, played by the engine itself.

The house bots arrange every deal; one seat fouls a deal on purpose (its
middle and back swapped) so the page has a foul to mark. The logs are
built as the table builds them: each engine ``deal`` record is followed by
the server's ``commit {deal, commitment}``; the stored log holds every
event's record form, the public log what a spectator of the live match gets
(``for_public``), and the reveal ``[{deal, salt, deck}]``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from arena.games import get_game
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, Store, StoredEvent
from protocol.deals import commitment

PLAYERS = ["north", "east", "south", "west"]


@dataclass
class ThirteenMatch:
    match_id: str
    players: list[str]
    rules: dict[str, Any]
    record_log: list[dict[str, Any]] = field(default_factory=list)
    public_log: list[dict[str, Any]] = field(default_factory=list)
    reveal: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    hands: list[list[list[str]]] = field(default_factory=list)  # per deal, per seat
    showdowns: list[dict[str, Any]] = field(default_factory=list)

    def cards_of_deal(self, deal: int) -> set[str]:
        return {c for hand in self.hands[deal] for c in hand}


def _swap_middle_back(action: dict[str, list[str]]) -> dict[str, list[str]]:
    return {"front": action["front"], "middle": action["back"], "back": action["middle"]}


def play_match(match_id: str, *, players: list[str] | None = None, deals: int = 3,
               seed: int = 7, foul: tuple[int, int] | None = (1, 2),
               label: str = "deal") -> ThirteenMatch:
    """Play ``deals`` deals with the strong house bot in every seat; at
    ``foul = (deal, seat)`` that seat swaps its middle and back rows (a foul
    whenever the two differ in strength, which the showdown reports).
    ``label = "round"`` names deals in commits and the reveal as a server
    that knows only Muushig's labels does: ``{round: deal, hand: 0}``."""
    spec = get_game("thirteen")
    players = list(players or PLAYERS)
    rules = {"deals": deals, "players": len(players)}
    engine = spec.new_match(rules, random.Random(seed), None)
    bots = [spec.house_bots["strong"](random.Random(seat), engine.rules)
            for seat in range(len(players))]
    m = ThirteenMatch(match_id, players, dict(engine.rules))
    salt_rng = random.Random(seed * 1000 + 1)

    def emit(events: list[Any]) -> None:
        for event in events:
            if event.kind == "deal":
                m.record_log.append(event.for_record())
                deck = list(event.deal.deck)
                salt = f"{salt_rng.getrandbits(64):016x}"
                deal_no = event.for_record()["deal"]
                name = {"deal": deal_no} if label == "deal" else {"round": deal_no, "hand": 0}
                m.reveal.append({**name, "salt": salt, "deck": deck})
                event_wire = {"kind": "commit", **name, "commitment": commitment(salt, deck)}
                m.record_log.append(event_wire)
                m.public_log.append(dict(event_wire))
                continue
            record = event.for_record()
            m.record_log.append(record)
            public = event.for_public()
            if public is not None:
                m.public_log.append(public)
            if event.kind == "deal_start":
                m.hands.append([list(h) for h in record["hands"]])
            elif event.kind == "showdown":
                m.showdowns.append(record)

    emit(engine.start())
    while not engine.finished:
        deal = len(m.showdowns)
        for seat in engine.to_act:
            state = engine.observation(seat)
            action = bots[seat]("arrange", engine.request_for(seat)["constraints"], state)
            if foul == (deal, seat):
                action = _swap_middle_back(action)
            emit(engine.play_for(seat, action))
    m.result = engine.result()
    return m


def start_in_store(store: Store, m: ThirteenMatch, *, upto: int | None = None,
                   started_at: float | None = None) -> None:
    """Create the match as running with (part of) its stored log."""
    for name in set(m.players):
        store.ensure_bot(name)
    store.create_match(MatchRecord(
        id=m.match_id, game="thirteen", players=m.players, rules=m.rules,
        limits={"decision_ms": 1000, "bank_ms": 0}, status=MatchStatus.RUNNING,
        started_at=started_at or time.time()))
    log = m.record_log if upto is None else m.record_log[:upto]
    store.append_events(m.match_id, [StoredEvent(i, time.time(), d) for i, d in enumerate(log)])


def finish_in_store(store: Store, m: ThirteenMatch) -> None:
    start_in_store(store, m, started_at=time.time() - 60)
    store.finish_match(
        m.match_id, result=m.result, reveal=m.reveal,
        faults=[SeatFaults() for _ in m.players],
        latency_ms=[[5.0 + s, 7.0 + s] for s in range(len(m.players))],
        finished_at=time.time())
