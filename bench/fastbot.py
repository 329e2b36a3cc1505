"""Instant bots for benchmarks: N connections that answer at once
(a random legal action, seeded, so matches look like real ones).

Usage: python bench/fastbot.py PORT N_BOTS MATCHES_EACH
Each connection says hello, answers every request immediately with a random
legal action, and leaves after MATCHES_EACH match_end messages. Kept minimal
on purpose: the figure being measured is the server's, not the bot's. So it
reads only the frames it needs: the type of a msgpack frame is the first
key of its map, so events are skipped by their length prefix without being
decoded, and only requests are unpacked. (A full decode of every frame made
this process cost about as much CPU per decision as the server, and the two
share the machine's two cores.)
"""

from __future__ import annotations

import asyncio
import os
import random
import sys

import msgpack

from protocol.codec import Encoding, encode

# A frame body starts with a small map's one-byte header, then its first key.
_REQUEST = msgpack.packb("type") + msgpack.packb("request")
_MATCH_END = msgpack.packb("type") + msgpack.packb("match_end")


class FastBot(asyncio.Protocol):
    def __init__(self, index: int, matches: int, done: asyncio.Future[None]) -> None:
        self.index = index
        self.left = matches
        self.done = done
        self.buffer = bytearray()
        self.rng = random.Random(index)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(encode({"type": "hello", "protocol": 1, "token": f"bench-{self.index}",  # type: ignore[attr-defined]
                                "name": f"fast{self.index}"}, Encoding.MSGPACK))

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        out = []
        pos = 0
        while len(buffer) - pos >= 4:
            end = pos + 4 + int.from_bytes(buffer[pos:pos + 4], "big")
            if len(buffer) < end:
                break
            body = pos + 4
            if buffer.startswith(_REQUEST, body + 1):
                message = msgpack.unpackb(buffer[body:end])
                out.append(encode({"type": "action", "match": message["match"],
                                   "id": message["id"],
                                   "action": self.rng.choice(message["legal"])},
                                  Encoding.MSGPACK))
            elif buffer.startswith(_MATCH_END, body + 1):
                self.left -= 1
                if self.left <= 0:
                    out.append(encode({"type": "bye"}, Encoding.MSGPACK))
                    self.transport.write(b"".join(out))  # type: ignore[attr-defined]
                    self.transport.close()  # type: ignore[attr-defined]
                    return
            pos = end
        del buffer[:pos]
        if out:
            self.transport.write(b"".join(out))  # type: ignore[attr-defined]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def main(port: int, n: int, matches: int) -> None:
    loop = asyncio.get_running_loop()
    dones = []
    for i in range(n):
        done: asyncio.Future[None] = loop.create_future()
        await loop.create_connection(lambda i=i, d=done: FastBot(i, matches, d), "127.0.0.1", port)
        dones.append(done)
    await asyncio.gather(*dones)


if __name__ == "__main__":
    if os.environ.get("BENCH_UVLOOP") == "1":  # the benchmark runs on uvloop
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
