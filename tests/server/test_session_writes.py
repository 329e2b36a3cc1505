"""What one step of a session sends: at most one write per seat.

A hand's end flushes every seat's buffered events; when the same step then
asks one of those seats for its next decision, the request joins the
flushed bytes instead of making a second write (a second system call on a
real socket) for the same connection.
"""

from __future__ import annotations

import random
from collections import Counter

from arena.games import get_game
from arena.server.seats import Seat, SeatKind
from arena.server.session import MatchSession, TimeLimits
from protocol.codec import Decoder, Encoding

MUUSHIG = get_game("muushig")


def first_option(phase, options, state):
    return options[0] if isinstance(options, list) else 0


def _play(encoding: Encoding, seed: int):
    """Every step's sends of a whole match of five remote seats answering
    their first legal option; yields (sends, decoded messages per send)."""
    engine = MUUSHIG.new_match({"max_hands": 3}, random.Random(seed), None)
    seats = [Seat(index=i, name=f"s{i}", kind=SeatKind.REMOTE, house=first_option,
                  token_hash=f"h{i}") for i in range(engine.n_seats)]
    session = MatchSession(match_id="m1", game="muushig", engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0), encodings=[encoding] * engine.n_seats)
    decoders = [Decoder.for_client(encoding) for _ in seats]
    now = 0.0
    session.start(now)
    steps = 0
    while not session.over:
        sends = [(w.seat, w.data, w.holds_request) for w in session.step().writes]
        decoded = []
        for seat, data, ends_with_request in sends:
            decoders[seat].receive_data(data)
            messages = list(decoders[seat])
            assert (messages[-1]["type"] == "request") is ends_with_request
            decoded.append(messages)
        yield sends, decoded
        pending = next(iter(session._pending.values()))
        now += 0.001
        session.answer(pending.seat, pending.id, pending.legal[0], now)
        steps += 1
    assert steps > 20


def test_a_step_writes_to_each_seat_at_most_once():
    for encoding in (Encoding.MSGPACK, Encoding.JSONL):
        for seed in range(3):
            for sends, _ in _play(encoding, seed):
                per_seat = Counter(seat for seat, _, _ in sends)
                assert max(per_seat.values(), default=0) == 1, per_seat


def test_a_request_that_joins_flushed_events_comes_after_them():
    joined = 0
    for sends, decoded in _play(Encoding.MSGPACK, 5):
        for (seat, _, ends_with_request), messages in zip(sends, decoded):
            kinds = [m["type"] for m in messages]
            if ends_with_request:
                assert kinds.count("request") == 1 and kinds[-1] == "request"
                joined += len(kinds) > 1 and "hand_end" in [m.get("event", {}).get("kind")
                                                            for m in messages]
    assert joined > 0
