"""What the framing state of idle tables and connections holds in memory.

A server keeps one :class:`Envelope` per table and one :class:`Decoder` per
connection for as long as they live: at a thousand connections their idle
size is the server's memory floor, so it must stay a few KiB, growing only
while a big frame passes and giving the room back after it.
"""

from __future__ import annotations

import tracemalloc
from typing import Any, Callable

from arena.server.envelope import Envelope
from protocol.codec import Decoder, Encoding, decode_one, encode

COUNT = 100
SEATS = 5
# A table's whole budget is 200 KB; its framing state may use a small part.
FRAMING_PER_TABLE = 16 * 1024


def _allocated(make: Callable[[], Any]) -> int:
    """Bytes still held by what ``make`` builds, COUNT times over."""
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        kept = [make() for _ in range(COUNT)]
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert len(kept) == COUNT
    return sum(stat.size_diff for stat in after.compare_to(before, "filename"))


def _table_framing() -> tuple[Envelope, list[Decoder]]:
    return (Envelope({"type": "event", "match": "m-000001"}, "event"),
            [Decoder.for_server() for _ in range(SEATS)])


def test_idle_tables_framing_state_is_small():
    assert _allocated(_table_framing) < COUNT * FRAMING_PER_TABLE


def test_idle_server_decoders_are_small():
    assert _allocated(Decoder.for_server) < COUNT * 1024


def test_an_envelope_gives_back_the_room_of_a_big_message():
    big = {"type": "match_end", "match": "m", "pad": "x" * 300_000}

    def used_once() -> Envelope:
        envelope = Envelope({"type": "event", "match": "m"}, "event")
        assert decode_one(envelope.encode(big, Encoding.MSGPACK), Encoding.MSGPACK) == big
        return envelope

    assert _allocated(used_once) < COUNT * FRAMING_PER_TABLE


def test_a_decoder_gives_back_the_room_of_a_big_frame():
    big = encode({"type": "action", "pad": "x" * 60_000}, Encoding.MSGPACK)

    def used_once() -> Decoder:
        decoder = Decoder.for_server()
        decoder.receive_data(big[:30_000])
        decoder.receive_data(big[30_000:])
        assert len(list(decoder)) == 1
        return decoder

    assert _allocated(used_once) < COUNT * 1024


def test_an_envelope_still_encodes_after_a_big_message():
    envelope = Envelope({"type": "event", "match": "m"}, "event")
    for size in (10, 100_000, 10, 3_000_000, 10):
        message = {"type": "request", "pad": "x" * size}
        assert envelope.encode(message, Encoding.MSGPACK) == encode(message, Encoding.MSGPACK)
        assert envelope.frame(message, Encoding.MSGPACK) == encode(
            {"type": "event", "match": "m", "event": message}, Encoding.MSGPACK)
