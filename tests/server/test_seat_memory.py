"""A seat's bookkeeping stays small through a long match: the request ids it
was sent and the latency of each of its decisions."""

from __future__ import annotations

import json
import statistics
import tracemalloc

from arena.server.seats import Seat, SeatKind

REQUESTS = 20_000  # a long match's requests over all seats


def a_seat(index: int = 0) -> Seat:
    return Seat(index=index, name=f"s{index}", kind=SeatKind.REMOTE, house=lambda *a: None)


def allocated_by(build) -> int:
    """Bytes still allocated after ``build()`` ran (what it keeps)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return after - before


def test_a_seat_knows_exactly_which_request_ids_it_was_sent() -> None:
    seats = [a_seat(i) for i in range(5)]
    for request_id in range(1, REQUESTS):  # one session numbers all seats' requests
        seats[request_id % 5].issued.add(request_id)
    for request_id in range(1, REQUESTS):
        assert [request_id in s.issued for s in seats] == [i == request_id % 5 for i in range(5)]
    for never in (0, -1, REQUESTS, REQUESTS + 7, 2**62, "3", None):
        assert all(never not in s.issued for s in seats), never


def test_the_request_ids_a_seat_was_sent_take_a_few_bytes_each() -> None:
    def send_all() -> list[Seat]:
        seats = [a_seat(i) for i in range(5)]
        for request_id in range(1, REQUESTS):
            seats[request_id % 5].issued.add(request_id)
        return seats

    # A set of every id costs some 60 bytes per id; a few bytes are enough.
    assert allocated_by(send_all) < REQUESTS * 5 + 8_000


def test_latencies_are_kept_in_eight_bytes_each_and_read_as_the_same_list() -> None:
    values = [round(0.5 + i * 0.137, 3) for i in range(REQUESTS)]

    def record() -> Seat:
        seat = a_seat()
        for v in values:
            seat.latencies.append(v)
        return seat

    assert allocated_by(record) < REQUESTS * 8 * 1.2 + 4_000  # a list of floats: 32 bytes each
    seat = record()
    assert seat.latencies_ms == values
    assert json.dumps(seat.latencies_ms) == json.dumps(values)  # what is stored is unchanged
    assert seat.median_latency_ms() == statistics.median(values)


def test_a_seat_without_decisions_has_no_latencies() -> None:
    seat = a_seat()
    assert seat.latencies_ms == [] and seat.median_latency_ms() is None
