"""The person's seat keeps the rules of any seat: autopilot when the page
is gone, the seat back on reload, no rating for a person who never played,
and people's and bots' names and tokens kept apart."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from pathlib import Path

from arena.server.session import PERSON_AWAY
from arena.storage.base import MatchStatus, NotFoundError
from tests.server.rawbot import RawBot
from tests.people.helpers import FAST, people_site, play_as_person, random_legal


async def wait_for(condition, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_closed_page_is_played_by_autopilot_and_a_reload_takes_the_seat_back(
        tmp_path: Path) -> None:
    paced = dataclasses.replace(FAST, house_pace_s=0.01)
    async with people_site(tmp_path, settings=paced) as site:
        arena, store, base, http = site.arena, site.store, site.base, site.http
        token = await site.person("bob")
        auth = {"Authorization": f"Bearer {token}"}
        table, _ = await play_as_person(http, base, token, "muushig",
                                        random_legal(random.Random(1)), stop_after=2)
        match = table["match"]
        async with http.post(f"{base}/api/play/{match}/leave", data=token) as r:
            assert r.status == 200
        held = arena.people.get(match)  # type: ignore[union-attr]
        seat = arena.server.tables[match].seats[table["seat"]]
        assert seat.autopilot is not None  # autopilot plays the seat at once
        # A reload: the same person asks for a table and gets this one back.
        again, seen = await play_as_person(http, base, token, "muushig",
                                           random_legal(random.Random(2)))
        assert again["match"] == match
        assert seen[0]["type"] == "match_start"
        returned = [m for m in seen if m["type"] == "event"
                    and m["event"]["kind"] == "autopilot"
                    and m["event"]["reason"] == "returned"]
        assert returned and returned[0]["event"]["seat"] == table["seat"]
        assert held.links == 2
        assert seen[-1]["type"] == "match_end"
        async with http.get(f"{base}/api/play/{match}/messages", params={"after": "-1"},
                            headers=auth) as r:
            assert (await r.json())["over"] is True
        record = store.get_match(match)
        assert record.status is MatchStatus.FINISHED
        assert record.faults is not None and record.faults[table["seat"]].disconnects == 1


async def test_a_person_away_the_whole_match_is_not_rated(tmp_path: Path) -> None:
    away = dataclasses.replace(FAST, away_after_s=0.3)
    async with people_site(tmp_path, settings=away) as site:
        store, base, http = site.store, site.base, site.http
        token = await site.person("carol")
        async with http.post(f"{base}/api/play/muushig",
                             headers={"Authorization": f"Bearer {token}"}) as r:
            table = await r.json()
        # The page never reads: it is taken as gone, autopilot plays it out.
        def settled() -> bool:
            try:  # (the writer creates the match row a moment after the table starts)
                return store.get_match(table["match"]).status is not MatchStatus.RUNNING
            except NotFoundError:
                return False

        await wait_for(settled)
        record = store.get_match(table["match"])
        assert record.status is MatchStatus.ABORTED
        assert record.abort_reason == PERSON_AWAY


async def test_people_and_bots_share_one_namespace_and_keep_their_own_doors(
        tmp_path: Path) -> None:
    async with people_site(tmp_path) as site:
        arena, base, http = site.arena, site.base, site.http
        token = await site.person("dave")
        async with http.post(f"{base}/api/bots", json={"name": "dave"}) as r:
            assert r.status == 409
        async with http.post(f"{base}/api/bots", json={"name": "erin"}) as r:
            bot_token = (await r.json())["token"]
        async with http.post(f"{base}/api/people", json={"name": "erin"}) as r:
            assert r.status == 409
            assert "taken" in (await r.json())["error"]["message"]
        # A bot's token does not seat a person, nor a person's a bot.
        async with http.post(f"{base}/api/play/muushig",
                             headers={"Authorization": f"Bearer {bot_token}"}) as r:
            assert r.status == 401
        bot = await RawBot().connect(arena.port)
        error = await bot.hello(token, "dave")
        assert error["code"] == "auth_failed"
        await bot.close()
        async with http.get(f"{base}/api/people/me",
                            headers={"Authorization": f"Bearer {token}"}) as r:
            assert (await r.json()) == {"name": "dave"}


async def test_only_bots_that_opted_in_meet_a_person(tmp_path: Path) -> None:
    from arena.auth import hash_token
    from protocol.sdk.client import BotClient

    def first(phase: str, legal: list, state: dict) -> object:  # type: ignore[type-arg]
        return legal[0]

    async with people_site(tmp_path, matchmaking=False) as site:
        arena, store, base, http = site.arena, site.store, site.base, site.http
        for name in ("willing", "unwilling"):
            store.add_bot(name, hash_token(f"token-{name}"))
        bots = [BotClient("127.0.0.1", arena.port, f"token-{name}", None, first,
                          encoding="jsonl", people=name == "willing", threaded=False)
                for name in ("willing", "unwilling")]
        tasks = [asyncio.create_task(bot.run()) for bot in bots]
        try:
            await wait_for(lambda: sorted(arena.server.idle_bots())
                           == ["unwilling", "willing"])
            token = await site.person("gerel")
            table, seen = await play_as_person(http, base, token, "muushig",
                                               random_legal(random.Random(5)))
            players = seen[0]["players"]
            assert "willing" in players and "unwilling" not in players
            assert seen[-1]["type"] == "match_end"
            record = store.get_match(table["match"])
            assert record.status is MatchStatus.FINISHED
            # The bot played its own seat (its own decisions, on its own clock).
            assert record.latency_ms is not None
            assert record.latency_ms[players.index("willing")]
        finally:
            for bot in bots:
                await bot.stop()
            await asyncio.wait(tasks, timeout=10)
