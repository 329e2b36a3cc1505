"""A real match played through a :class:`MatchSession` without sockets:
what it stores and what it shows spectators, step by step."""

from __future__ import annotations

import json
import random
from typing import Any

from arena.games import get_game
from arena.server.seats import Seat, SeatKind
from arena.server.session import MatchSession, TimeLimits
from protocol.codec import Encoding

Stored = list[tuple[int, float, dict[str, Any]]]


def play(game: str, rules: dict[str, Any] | None, seed: int, check_every: int = 3):
    """Play a match whose seat 0 never answers (timeouts, then autopilot),
    seat 1 answers like a house bot and the others are house bots; yield
    (records stored so far, public events shown so far) every few steps."""
    spec = get_game(game)
    engine = spec.new_match(rules, random.Random(seed), None)
    rng = random.Random(seed)
    seats = [Seat(index=i, name=f"s{i}", kind=SeatKind.REMOTE if i < 2 else SeatKind.HOUSE,
                  house=spec.house_bots[spec.default_house_bot](rng), token_hash=f"h{i}")
             for i in range(engine.n_seats)]
    session = MatchSession(match_id="m", game=game, engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0, 2),
                           encodings=[Encoding.JSONL if i < 2 else None
                                      for i in range(engine.n_seats)])
    stored: Stored = []
    shown: list[dict[str, Any]] = []
    now = 0.0

    def drain() -> None:
        step = session.step()
        stored.extend((len(stored), now, json.loads(t)) for t in step.records)
        shown.extend(public for public, _ in step.public)

    session.start(now)
    drain()
    steps = 0
    while not session.over:
        while session.house_due:
            session.play_house(now)
            drain()
        if session.over:
            break
        pending = session._pending.get(1)
        if pending is not None:
            now += 0.01
            action = seats[1].house(pending.phase, pending.legal, engine.observation(1))
            session.answer(1, pending.id, action, now)
        else:
            now = max(now, session.next_deadline() or now)
            session.deadline(now)
        drain()
        steps += 1
        if steps % check_every == 0:
            yield engine.rules, list(stored), list(shown)
    yield engine.rules, list(stored), list(shown)
