"""Whole matches played through the real match session, without sockets,
then stored as the server stores them."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Any

from arena.games import get_game
from arena.live import LiveHub
from arena.server.seats import Seat, SeatKind
from arena.server.session import MatchSession, TimeLimits
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, Store, StoredEvent
from arena.web.queries import Queries
from protocol.codec import Encoding


@dataclass(frozen=True)
class PlayedMatch:
    """A finished session and the records it handed over for storage."""

    session: MatchSession
    records: list[str]


def play(game: str, rules: dict[str, Any] | None, seed: int, *, silent_seat: bool = False
         ) -> PlayedMatch:
    """A finished match of house bots of every kind, drawn by ``seed``; with
    ``silent_seat`` seat 0 answers its first request, then never again (its
    timeouts and autopilot are recorded as the server records them)."""
    spec = get_game(game)
    rng = random.Random(seed)
    engine = spec.new_match(rules, random.Random(seed), None)
    kinds = sorted(spec.house_bots)
    seats = [Seat(index=i, name=f"bot{i}",
                  kind=SeatKind.REMOTE if silent_seat and i == 0 else SeatKind.HOUSE,
                  house=spec.house_bots[rng.choice(kinds)](random.Random(seed + i)),
                  token_hash=f"h{i}") for i in range(engine.n_seats)]
    session = MatchSession(match_id=f"m{seed}", game=game, engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0, 2),
                           encodings=[Encoding.JSONL if silent_seat and i == 0 else None
                                      for i in range(engine.n_seats)])
    kept: list[str] = []
    now = 0.0

    def drain() -> None:
        kept.extend(session.step().records)

    session.start(now)
    drain()
    while not session.over:
        while session.house_due:
            session.play_house(now)
            drain()
        if session.over:
            break
        pending = session._pending.get(0)
        if pending is not None and not seats[0].latencies:
            now += 0.01
            session.answer(0, pending.id, seats[0].house(pending.phase, pending.legal,
                                                         engine.observation(0)), now)
            drain()
            continue
        now = max(now, session.next_deadline() or now)
        session.deadline(now)
        drain()
    assert session.result is not None and session.reveal is not None
    return PlayedMatch(session, kept)


def store_match(store: Store, played: PlayedMatch, *, match_id: str | None = None,
                tournament_id: str | None = None, seed: str | None = None,
                finished_at: float | None = None, game: str | None = None) -> str:
    """Store a played session as the server does; returns the match id."""
    session = played.session
    match_id = match_id or session.match_id
    at = finished_at or time.time()
    engine = session.engine
    store.create_match(MatchRecord(
        id=match_id, game=game or session.game, players=[s.name for s in session.seats],
        rules=engine.rules, limits={"decision_ms": 1000, "bank_ms": 0},
        status=MatchStatus.RUNNING, started_at=at - 10, tournament_id=tournament_id,
        seed=seed))
    records = played.records
    store.append_events(match_id, [StoredEvent(i, at - 5, json.loads(t))
                                   for i, t in enumerate(records)])
    store.finish_match(match_id, result=session.result, reveal=session.reveal,
                       faults=[SeatFaults() for _ in session.seats],
                       latency_ms=[[] for _ in session.seats], finished_at=at)
    return match_id


def detail(store: Store, match_id: str) -> dict[str, Any]:
    """The match as the web reads it (with its rules of what is public)."""
    queries = Queries(store, LiveHub())
    try:
        return queries.match_detail(match_id)
    finally:
        queries.close()


def engine_records(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The engine's own records of a stored log (not the server's)."""
    return [d for d in stored if d.get("kind") not in ("commit", "action", "timeout", "autopilot")]
