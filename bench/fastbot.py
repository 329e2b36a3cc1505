"""Instant bots for benchmarks: N connections that answer at once
(a random legal action, seeded, so matches look like real ones).

Usage: python bench/fastbot.py PORT N_BOTS MATCHES_EACH
Each connection says hello, answers every request immediately with a random legal action, and leaves
after MATCHES_EACH match_end messages. Kept minimal on purpose: the figure
being measured is the server's, not the bot's.
"""

from __future__ import annotations

import asyncio
import random
import sys

from protocol.codec import Decoder, Encoding, encode


class FastBot(asyncio.Protocol):
    def __init__(self, index: int, matches: int, done: asyncio.Future[None]) -> None:
        self.index = index
        self.left = matches
        self.done = done
        self.decoder = Decoder.for_client(Encoding.MSGPACK)
        self.rng = random.Random(index)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(encode({"type": "hello", "protocol": 1, "token": f"bench-{self.index}",  # type: ignore[attr-defined]
                                "name": f"fast{self.index}"}, Encoding.MSGPACK))

    def data_received(self, data: bytes) -> None:
        self.decoder.receive_data(data)
        out = []
        for message in self.decoder:
            kind = message["type"]
            if kind == "request":
                out.append(encode({"type": "action", "match": message["match"],
                                   "id": message["id"],
                                   "action": self.rng.choice(message["legal"])},
                                  Encoding.MSGPACK))
            elif kind == "match_end":
                self.left -= 1
                if self.left <= 0:
                    out.append(encode({"type": "bye"}, Encoding.MSGPACK))
                    self.transport.write(b"".join(out))  # type: ignore[attr-defined]
                    self.transport.close()  # type: ignore[attr-defined]
                    return
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
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
