"""The baseline server for ``outside_bench.py``: bare asyncio tables.

Usage: python bench/bare_server.py TRIPS_PER_TABLE

Listens on a free port of 127.0.0.1 and prints ``ready PORT``. Connections
are grouped in fives as they say hello (a "table"); each table keeps one
request in flight, to its seats in turn, like an arena table: it sends a
typical request, reads and decodes the answer, sends the next request to
the next seat, TRIPS_PER_TABLE times, then ``match_end`` to all five. No
game, no checks, no storage: the bare round trip an arena decision is
measured against. On SIGTERM it prints one JSON line (round trips, turn
latency p50/p99 in ms: request written to answer decoded) and exits.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.codec import Decoder, Encoding, encode  # noqa: E402
from sample_request import SAMPLE_REQUEST  # noqa: E402 - bench/, beside this script

SEATS = 5

REQUEST = encode(SAMPLE_REQUEST, Encoding.MSGPACK)
WELCOME = encode({"type": "welcome", "protocol": 1, "bot": "b", "server": "baseline"},
                 Encoding.MSGPACK)
MATCH_END = encode({"type": "match_end", "match": "m", "result": {}, "reveal": []},
                   Encoding.MSGPACK)


class BareTable:
    def __init__(self, trips: int, latencies: list[float]) -> None:
        self.left = trips
        self.seats: list[BareSeat] = []
        self.turn = 0
        self.sent_at = 0.0
        self.latencies = latencies

    def sit(self, seat: "BareSeat") -> None:
        self.seats.append(seat)
        if len(self.seats) == SEATS:
            self.ask()

    def ask(self) -> None:
        self.sent_at = time.perf_counter()
        self.seats[self.turn].transport.write(REQUEST)

    def answered(self, seat: "BareSeat") -> None:
        if seat is not self.seats[self.turn]:
            return
        self.latencies.append((time.perf_counter() - self.sent_at) * 1000)
        self.left -= 1
        if self.left == 0:
            for s in self.seats:
                s.transport.write(MATCH_END)
            return
        self.turn = (self.turn + 1) % SEATS
        self.ask()


class BareSeat(asyncio.Protocol):
    def __init__(self, lobby: "Lobby") -> None:
        self.lobby = lobby
        self.decoder = Decoder.for_server()
        self.table: BareTable | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.decoder.receive_data(data)
        for message in self.decoder:
            kind = message["type"]
            if kind == "action" and self.table is not None:
                self.table.answered(self)
            elif kind == "hello":
                self.transport.write(WELCOME)
                self.table = self.lobby.seat(self)


class Lobby:
    def __init__(self, trips: int) -> None:
        self.trips = trips
        self.latencies: list[float] = []
        self.forming: BareTable | None = None

    def seat(self, seat: BareSeat) -> BareTable:
        if self.forming is None:
            self.forming = BareTable(self.trips, self.latencies)
        table = self.forming
        table.sit(seat)
        if len(table.seats) == SEATS:
            self.forming = None
        return table


def percentiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    values = sorted(values)
    return values[len(values) // 2], values[min(len(values) - 1, int(len(values) * 0.99))]


async def main(trips: int) -> None:
    loop = asyncio.get_running_loop()
    lobby = Lobby(trips)
    server = await loop.create_server(lambda: BareSeat(lobby), "127.0.0.1", 0, backlog=1024)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    print(f"ready {server.sockets[0].getsockname()[1]}", flush=True)
    await stop.wait()
    server.close()
    p50, p99 = percentiles(lobby.latencies)
    print(json.dumps({"trips": len(lobby.latencies), "p50_ms": p50, "p99_ms": p99}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
