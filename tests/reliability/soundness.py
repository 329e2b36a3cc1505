"""The three things that must hold after any hostile scenario.

1. A new well-behaved bot is still served at once: welcomed within a
   second, seated within two, and its match plays to ``match_end``.
2. Every finished match is in the store exactly once, and every match a
   probe bot saw end is among them.
3. The standings recomputed from the stored event logs equal the standings
   the web serves: each finished match is replayed from its events, the
   replayed result must equal the stored one, and the standings over the
   replayed results must equal ``/api/standings``.

The probe connects from 127.0.0.2 (another loopback address), so that a
crowd on 127.0.0.1 fills its own per-address share and no more.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import secrets
import time
from typing import Any

import aiohttp

from arena.web.entrants import as_entrants

from arena.app import http_port_of
from arena.auth import hash_token
from arena.games.muushig.replay import replay_record
from arena.server.server import ArenaServer
from arena.storage.base import MatchRecord, MatchStatus
from arena.tournament.standings import compute_standings
from tests.conformance_server.wire import JSONL, MSGPACK, SpecBot
from tests.timing import MS

PROBE_SOURCE = "127.0.0.2"
COMPARED = ("bot", "rank", "matches", "stars", "score_sum", "wins")
_probes = itertools.count(1)


async def new_bot_is_served(server: ArenaServer, *, encoding: str = MSGPACK) -> dict[str, Any]:
    """A fresh bot plays a whole match; returns its ``match_end``."""
    name = f"probe{next(_probes)}"
    token = secrets.token_urlsafe(12)
    if not server.config.open:
        server.store.add_bot(name, hash_token(token))
    bot = await SpecBot(encoding).connect(server.port, source=PROBE_SOURCE)
    try:
        t0 = time.monotonic()
        welcome = await bot.hello(token, name, max_matches=1)  # leaves nothing behind
        assert welcome is not None and welcome["type"] == "welcome", welcome
        assert time.monotonic() - t0 < 3000 * MS, f"welcome took {time.monotonic() - t0:.2f} s"
        await bot.until(lambda m: m["type"] == "match_start", timeout=2.0)
        end = await bot.play_to_end(timeout=30)
        assert sum(end["result"]["stars"]) >= 1
        return end
    finally:
        await bot.close()


def finished_exactly_once(server: ArenaServer, seen: list[str]) -> list[MatchRecord]:
    store = server.store
    total = store.count_matches(status=MatchStatus.FINISHED)
    finished = store.list_matches(status=MatchStatus.FINISHED, limit=max(total, 1))
    ids = [m.id for m in finished]
    assert len(ids) == len(set(ids)) == total, "a finished match is stored twice"
    missing = set(seen) - set(ids)
    assert not missing, f"matches that ended for a bot but are not stored finished: {missing}"
    return finished


def replayed(server: ArenaServer, match: MatchRecord) -> MatchRecord:
    """The match with its result recomputed from its stored event log."""
    log = [event.data for event in server.store.get_events(match.id)]
    result = replay_record(match.rules, log).result()
    stored = server.store.get_match(match.id).result
    assert stored is not None
    for key in ("stars", "final_scores", "sums", "ranks"):
        assert result[key] == stored[key], f"{match.id}: {key} replays differently"
    return dataclasses.replace(match, result=result)


async def served_standings(server: ArenaServer) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{http_port_of(server)}/api/standings?scope=ladder&limit=200"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200, await response.text()
        return (await response.json())["standings"]


async def standings_replay(server: ArenaServer, finished: list[MatchRecord]) -> None:
    ladder = sorted((m for m in finished if m.tournament_id is None),
                    key=lambda m: (m.finished_at or 0.0, m.id))
    # The web shows one house entrant per strategy (house-heuristic-1…4 as one).
    recomputed = compute_standings([as_entrants(replayed(server, m)) for m in ladder])
    served = await served_standings(server)
    assert len(served) == min(len(recomputed), 200)
    by_bot = {row.bot: {k: getattr(row, k) for k in COMPARED} for row in recomputed}
    for row in served:
        assert {k: row[k] for k in COMPARED} == by_bot.get(row["bot"]), row["bot"]


async def assert_sound(server: ArenaServer, seen: list[str] | None = None) -> None:
    """The three checks of this module, after a scenario."""
    ends = [await new_bot_is_served(server, encoding=MSGPACK),
            await new_bot_is_served(server, encoding=JSONL)]
    await asyncio.sleep(0.05)  # match_end is sent after the match is stored
    await server.writer.flush()
    finished = finished_exactly_once(server, [*(seen or []), *(e["match"] for e in ends)])
    await standings_replay(server, finished)
