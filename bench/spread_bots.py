"""``fastbot.py``'s instant bots, connecting from many loopback addresses.

Usage: python bench/spread_bots.py PORT N_BOTS MATCHES_EACH

A server run as it is deployed caps the connections per remote address
(64 by default), so a thousand bots from 127.0.0.1 would be refused. Linux
routes all of 127.0.0.0/8 to loopback: bot ``i`` binds 127.0.0.(2 + i // 50)
(then 127.0.1.2, ...) before it connects, 50 bots per address.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fastbot import FastBot  # noqa: E402

BOTS_PER_ADDRESS = 50


def source_address(index: int) -> str:
    high, low = divmod(index // BOTS_PER_ADDRESS, 250)
    if high > 255:
        raise ValueError(f"bot {index}: more bots than this spreads over 127.0.0.0/16")
    return f"127.0.{high}.{low + 2}"


async def main(port: int, n: int, matches: int) -> None:
    loop = asyncio.get_running_loop()
    dones = []
    for i in range(n):
        done: asyncio.Future[None] = loop.create_future()
        await loop.create_connection(lambda i=i, d=done: FastBot(i, matches, d), "127.0.0.1", port,
                                     local_addr=(source_address(i), 0))
        dones.append(done)
    await asyncio.gather(*dones)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
