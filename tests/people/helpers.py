"""A person playing through the HTTP API, and the check that a seat's
messages never held another seat's hidden cards."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from arena.app import Arena
from arena.people import PeopleSettings
from arena.server.config import ServerConfig
from arena.storage import open_store
from arena.storage.base import Store

CARD = re.compile(r"^(?:10|[2-9JQKA])[SHDC]$|^[2-9TJQKA][shdcSHDC]$")

# Fast for tests: no pause between house moves, a page away after 3 s.
FAST = PeopleSettings(decision_ms=20_000, bank_ms=20_000, house_pace_s=0.0, away_after_s=3.0)


@asynccontextmanager
async def people_arena(tmp_path: Path, store: Store, settings: PeopleSettings = FAST,
                       db: str | None = None, **config: Any
                       ) -> AsyncIterator[tuple[Arena, str]]:
    arena = Arena(ServerConfig(port=0, http_port=0, db=db or str(tmp_path / "arena.db"),
                               registration="open", **config), store, people=settings)
    await arena.start()
    try:
        yield arena, f"http://127.0.0.1:{arena.http_port}"
    finally:
        await arena.stop()


@dataclass
class Site:
    """A started people's arena, the store it writes to, its web app's base
    URL and an HTTP client for it."""

    arena: Arena
    store: Store
    base: str
    http: aiohttp.ClientSession

    async def person(self, name: str) -> str:
        """Register the person ``name``; their token."""
        return await register(self.http, self.base, name)


@asynccontextmanager
async def people_site(tmp_path: Path, location: str | None = None,
                      settings: PeopleSettings = FAST, *, store: Store | None = None,
                      **config: Any) -> AsyncIterator[Site]:
    """:func:`people_arena` on the store at ``location`` (default: a SQLite
    file in ``tmp_path``), with an HTTP client. The store is opened here and
    closed at the end, unless the test passes its own ``store`` (one store
    across two arenas, a restart), which it then closes itself."""
    db = location or str(tmp_path / "arena.db")
    own = store is None
    opened = open_store(db) if store is None else store
    try:
        async with people_arena(tmp_path, opened, settings, db=db, **config) as (arena, base), \
                aiohttp.ClientSession() as http:
            yield Site(arena, opened, base, http)
    finally:
        if own:
            opened.close()


async def register(http: aiohttp.ClientSession, base: str, name: str) -> str:
    async with http.post(f"{base}/api/people", json={"name": name}) as r:
        assert r.status == 201, await r.text()
        return (await r.json())["token"]  # type: ignore[no-any-return]


Chooser = Callable[[dict[str, Any]], Any]


def random_legal(rng: random.Random) -> Chooser:
    """A person who clicks any legal action (thirteen: the arranger's rows)."""
    def choose(request: dict[str, Any]) -> Any:
        if "legal" in request:
            return rng.choice(request["legal"])
        cards = list(request["state"]["cards"])  # thirteen: rows as dealt, fouled or not
        rng.shuffle(cards)
        return {"front": cards[:3], "middle": cards[3:8], "back": cards[8:]}
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


def hidden_cards(records: list[dict[str, Any]], seat: int | None
                 ) -> dict[tuple[int, int], set[str]]:
    """Per hand of a Muushig match ((round, hand)) or deal of thirteen
    ((deal, 0)), from its stored records: the cards seats other than
    ``seat`` (None: every seat, a spectator's view) held, dealt or drawn,
    less Muushig's face-up card everyone sees."""
    hidden: dict[tuple[int, int], set[str]] = {}
    key = (0, 0)
    for r in records:
        if r["kind"] == "deal_start":
            key = (r["deal"], 0)
            hidden[key] = {c for s, cards in enumerate(r["hands"]) if s != seat for c in cards}
        elif r["kind"] == "hand_start":
            key = (r["round"], r["hand"])
            hidden[key] = {c for s, cards in enumerate(r["hands"]) if s != seat
                           for c in cards} - {r["face_up"]}
        elif r["kind"] == "exchange" and r["seat"] != seat:
            hidden[key] |= set(r["drawn"])
    return hidden


def _flatten(items: list[Any]) -> list[dict[str, Any]]:
    """Messages in the order a page held them: a response listing messages
    (the play API) or events (a match's detail) counts as each of them."""
    out: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        inner = item.get("messages", item.get("events"))
        if isinstance(inner, list):
            out.extend(m for m in inner if isinstance(m, dict))
        else:
            out.append(item)
    return out


def assert_no_hidden_cards(items: list[Any], hidden: dict[tuple[int, int], set[str]]) -> int:
    """Walk what a page held, in order: a card another seat holds may show
    only once it is played; anything goes after the match's end (the
    reveal). A thirteen showdown shows every seat's rows. Returns how many
    cards were checked."""
    key = (0, 0)
    played: set[str] = set()
    checked = 0
    for message in _flatten(items):
        if message.get("type") in ("match_end", "match_ended"):
            break
        event = message.get("event") or message.get("data") or {}
        kind = event.get("kind") if isinstance(event, dict) else None
        if kind == "hand_start":
            key = (event["round"], event["hand"])
            played = set()
        elif kind == "deal_start":
            key = (event["deal"], 0)
            played = set()
        elif kind == "showdown":
            played = set(hidden.get(key, set()))
        if kind == "play":
            played.add(event["card"])
        cards = cards_in(message)
        checked += len(cards)
        leaked = (cards & hidden.get(key, set())) - played
        assert not leaked, f"a page held {sorted(leaked)} of another seat: {message}"
    return checked
