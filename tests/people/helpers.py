"""A person playing through the HTTP API, and the check that a seat's
messages never held another seat's hidden cards."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from arena.app import Arena
from arena.people import PeopleSettings
from arena.server.config import ServerConfig
from arena.storage.base import Store

CARD = re.compile(r"^(?:10|[2-9JQKA])[SHDC]$|^[2-9TJQKA][shdcSHDC]$")

# Fast for tests: no pause between house moves, a page away after 3 s.
FAST = PeopleSettings(decision_ms=20_000, bank_ms=20_000, house_pace_s=0.0, away_after_s=3.0)


@asynccontextmanager
async def people_arena(tmp_path: Path, store: Store, settings: PeopleSettings = FAST,
                       **config: Any) -> AsyncIterator[tuple[Arena, str]]:
    arena = Arena(ServerConfig(port=0, http_port=0, db=str(tmp_path / "arena.db"),
                               registration="open", **config), store, people=settings)
    await arena.start()
    try:
        yield arena, f"http://127.0.0.1:{arena.http_port}"
    finally:
        await arena.stop()


async def register(http: aiohttp.ClientSession, base: str, name: str) -> str:
    async with http.post(f"{base}/api/people", json={"name": name}) as r:
        assert r.status == 201, await r.text()
        return (await r.json())["token"]  # type: ignore[no-any-return]


Chooser = Callable[[dict[str, Any]], Any]


def random_legal(rng: random.Random) -> Chooser:
    """A person who clicks any legal action (thirteen: the arranger's rows)."""
    def choose(request: dict[str, Any]) -> Any:
        return rng.choice(request["legal"])
    return choose


async def play_as_person(http: aiohttp.ClientSession, base: str, token: str, game: str,
                         choose: Chooser, *, stop_after: int | None = None
                         ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Sit at a table of ``game`` and answer every request with ``choose``
    until ``match_end`` (or ``stop_after`` answers); the table and every
    message read, in order."""
    auth = {"Authorization": f"Bearer {token}"}
    async with http.post(f"{base}/api/play/{game}", headers=auth) as r:
        assert r.status == 200, await r.text()
        table = await r.json()
    seen: list[dict[str, Any]] = []
    after = -1
    answered = 0
    async with asyncio.timeout(240):
        while True:
            async with http.get(f"{base}/api/play/{table['match']}/messages",
                                params={"after": str(after)}, headers=auth) as r:
                assert r.status == 200, await r.text()
                page = await r.json()
            after = page["last"]
            for message in page["messages"]:
                seen.append(message)
                if message["type"] == "request":
                    if stop_after is not None and answered >= stop_after:
                        return table, seen
                    async with http.post(f"{base}/api/play/{table['match']}/action",
                                         json={"request_id": message["id"],
                                               "action": choose(message)},
                                         headers=auth) as r:
                        assert r.status == 200, await r.text()
                    answered += 1
                elif message["type"] == "match_end":
                    return table, seen
            if page["over"] and not page["messages"]:
                return table, seen


def cards_in(value: Any) -> set[str]:
    """Every card-like string anywhere in a message."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if CARD.match(v):
                out.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out
