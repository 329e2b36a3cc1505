"""Servers for the conformance tests, and full matches recorded once.

``make_server`` starts arena servers on free 127.0.0.1 ports and stops them
after the test. ``recordings`` plays a few full matches once per session
(both encodings, lobby and directed seats, default and short rules) and
keeps what each bot saw; the clause tests audit those views.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from arena.app import Arena
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer, PlayerSpec
from arena.storage.sqlite import SqliteStore
from tests.conformance_server.clauses import Recording
from tests.conformance_server.wire import JSONL, MSGPACK, SpecBot

ServerFactory = Callable[..., Awaitable[ArenaServer]]

# Tests that send several messages per request (illegal answers, probes)
# lift the flood limit so that they check their own clause, not the limiter.
NO_FLOOD: dict[str, Any] = dict(rate_limit_per_s=1e6, rate_limit_burst=10**6)


async def start_server(db: Path, **overrides: Any) -> tuple[ArenaServer, SqliteStore]:
    values: dict[str, Any] = dict(host="127.0.0.1", port=0, http_port=None, db=str(db),
                                  open=True, house_wait_s=None, decision_ms=2000, bank_ms=0)
    values.update(overrides)
    config = ServerConfig(**values)
    store = SqliteStore(config.db)
    server = Arena(config, store).server  # with the web app when http_port is set
    await server.start()
    return server, store


@pytest.fixture
async def make_server(tmp_path) -> AsyncIterator[ServerFactory]:
    """Start arena servers on free 127.0.0.1 ports; all are stopped after."""
    started: list[tuple[ArenaServer, SqliteStore]] = []

    async def factory(**overrides: Any) -> ArenaServer:
        server, store = await start_server(tmp_path / f"arena{len(started)}.db", **overrides)
        started.append((server, store))
        return server

    yield factory
    for server, store in reversed(started):
        await server.stop()
        store.close()


@contextlib.asynccontextmanager
async def directed(server: ArenaServer, seats: list[str | None],
                   **options: Any) -> AsyncIterator[asyncio.Task[Any]]:
    """Run a match with named remote bots at fixed seats (None: a house bot).

    The server must run without matchmaking, so only this match claims the
    bots once they have said hello.
    """
    players = [PlayerSpec(name) if name else PlayerSpec(f"house{i}", house="heuristic")
               for i, name in enumerate(seats)]
    task = asyncio.get_running_loop().create_task(
        server.play_match(players, claim_timeout_s=10, **options))
    try:
        yield task
    finally:
        if not task.done():
            task.cancel()
        await asyncio.wait([task], timeout=5)


async def joined(port: int, name: str, encoding: str = MSGPACK, token: str | None = None) -> SpecBot:
    bot = await SpecBot(encoding).connect(port)
    welcome = await bot.hello(token or f"token-{name}", name)
    assert welcome is not None and welcome["type"] == "welcome", welcome
    return bot


async def play_on(bot: SpecBot) -> dict[str, Any]:
    """Answer the request a bot read but held back (a table waits for at most
    one), then play to the end."""
    held = [m for m in bot.seen if m["type"] == "request"]
    assert len(held) <= 1
    for request in held:
        await bot.answer(request, request["legal"][0])
    return await bot.play_to_end()


def random_player(rng: random.Random, answers: dict[int, Any]) -> Callable[[dict[str, Any]], Any]:
    """Enters often (to reach every phase); exchange sets go out in reverse
    order, which the server must accept (an exchange is compared as a set)."""

    def choose(request: dict[str, Any]) -> Any:
        legal = request["legal"]
        if request["phase"] == "decide":
            action: Any = "enter" if rng.random() < 0.75 else "fold"
        elif request["phase"] == "exchange":
            action = list(reversed(rng.choice(legal)))
        else:
            action = rng.choice(legal)
        answers[request["id"]] = action
        return action

    return choose


def scripted_player(decide: Callable[[dict[str, Any]], str], answers: dict[int, Any]
                    ) -> Callable[[dict[str, Any]], Any]:
    """``decide`` says enter or fold from the state; everything else: first legal."""

    def choose(request: dict[str, Any]) -> Any:
        action = decide(request["state"]) if request["phase"] == "decide" else request["legal"][0]
        answers[request["id"]] = action
        return action

    return choose


def only_left_of_dealer_enters(state: dict[str, Any]) -> str:
    """Exactly one non-dealer enters: the dealer's enter is forced (rules §4.4)."""
    return "enter" if state["seat"] == (state["dealer"] + 1) % 5 else "fold"


async def record(bot: SpecBot, label: str, seed: int, *, decision_ms: int, bank_ms: int,
                 decide: Callable[[dict[str, Any]], str] | None = None) -> Recording:
    answers: dict[int, Any] = {}
    choose = (random_player(random.Random(seed), answers) if decide is None
              else scripted_player(decide, answers))
    end = await bot.play_to_end(choose, timeout=60)
    start = max(i for i, m in enumerate(bot.seen)
                if m["type"] == "match_start" and m["match"] == end["match"])
    welcome = bot.seen[0]
    return Recording(label=label, encoding=bot.encoding, bot=welcome["bot"],
                     messages=bot.seen[start: bot.seen.index(end) + 1], answers=answers,
                     decision_ms=decision_ms, bank_ms=bank_ms)


async def _record_all(tmp: Path) -> list[Recording]:
    recordings: list[Recording] = []
    server, store = await start_server(tmp / "lobby.db", house_wait_s=0.0, decision_ms=2000)
    try:
        for seed, encoding in enumerate(ENCODINGS_ORDER):
            bot = await joined(server.port, f"lone-{encoding}", encoding)
            recordings.append(await record(bot, f"lobby/{encoding}", seed,
                                           decision_ms=2000, bank_ms=0))
            await bot.close()
    finally:
        await server.stop()
        store.close()
    server, store = await start_server(tmp / "directed.db", matchmaking=False,
                                       decision_ms=1500, bank_ms=3000)
    try:
        async with directed(server, [None, "alpha", None, "beta", None], seed="conformance"):
            alpha = await joined(server.port, "alpha", MSGPACK)
            beta = await joined(server.port, "beta", JSONL)
            recordings.extend(await asyncio.gather(
                record(alpha, "directed/seat1/msgpack", 7, decision_ms=1500, bank_ms=3000),
                record(beta, "directed/seat3/jsonl", 8, decision_ms=1500, bank_ms=3000)))
        async with directed(server, [None, None, None, None, "short"], seed="short",
                            rules={"max_hands": 1}):
            short = await joined(server.port, "short", JSONL)
            recordings.append(await record(short, "max_hands=1/seat4/jsonl", 9,
                                           decision_ms=1500, bank_ms=3000))
        for bot in (alpha, beta, short):
            await bot.close()
        # Five remote bots, scripted: everybody folds (all_folded, the dealer
        # unasked), then only the seat left of the dealer enters (forced dealer).
        for script, decide in (("all-fold", lambda state: "fold"),
                               ("forced", only_left_of_dealer_enters)):
            names = [f"{script}{i}" for i in range(5)]
            async with directed(server, list(names), seed=script):
                bots = [await joined(server.port, name, ENCODINGS_ORDER[i % 2])
                        for i, name in enumerate(names)]
                recordings.extend(await asyncio.gather(*(
                    record(bot, f"{script}/seat{i}/{bot.encoding}", i, decision_ms=1500,
                           bank_ms=3000, decide=decide) for i, bot in enumerate(bots))))
            for bot in bots:
                await bot.close()
    finally:
        await server.stop()
        store.close()
    return recordings


ENCODINGS_ORDER = (MSGPACK, JSONL)


@pytest.fixture(scope="session")
def recordings(tmp_path_factory) -> list[Recording]:
    """Full matches played once: what each bot saw, and what it answered."""
    return asyncio.run(asyncio.wait_for(_record_all(tmp_path_factory.mktemp("recorded")), 120))
