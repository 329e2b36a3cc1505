"""People's matches count on a ladder of their own per game, never on the
bots' ladder; on both stores."""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.people import PEOPLE
from arena.storage import open_store
from arena.storage.base import PERSON_KIND
from tests.people.helpers import people_site, play_as_person, random_legal
from tests.web.helpers import finish_in_store, make_match


async def test_a_persons_match_counts_on_the_people_ladder_only(tmp_path: Path,
                                                                db_location: str) -> None:
    async with people_site(tmp_path, db_location) as site:
        arena, base, http = site.arena, site.base, site.http
        token = await site.person("oyun")
        table, _ = await play_as_person(http, base, token, "muushig",
                                        random_legal(random.Random(3)))
        await arena.server.writer.flush()

        async def standings(scope: str) -> list[str]:
            async with http.get(f"{base}/api/standings",
                                params={"scope": scope, "game": "muushig"}) as r:
                assert r.status == 200, await r.text()
                return [row["bot"] for row in (await r.json())["standings"]]

        people = await standings("people")
        assert "oyun" in people and len(people) >= 2  # the person and the house bots met
        assert "oyun" not in await standings("ladder")
        assert await standings("ladder") == []  # nothing but the person's match was played
        async with http.get(f"{base}/api/standings",
                            params={"scope": "people", "game": "thirteen"}) as r:
            assert (await r.json())["standings"] == []
        async with http.get(f"{base}/") as r:
            home = await r.text()
        people_part = home[home.index('id="people-ladders"'):]
        bots_part = home[home.index('id="h-ladder"'):home.index('id="people-ladders"')]
        assert "oyun" in people_part and "oyun" not in bots_part
        assert 'href="/play/muushig"' in home and 'href="/play/thirteen"' in home
        async with http.get(f"{base}/partials/standings",
                            params={"scope": "people", "game": "muushig"}) as r:
            assert r.status == 200 and "oyun" in await r.text()


class _Counted:
    """A read connection that notes the statements reading the bots table."""

    def __init__(self, db: Any, seen: list[str]) -> None:
        self._db, self._seen = db, seen

    def execute(self, sql: str, params: Any = ()) -> Any:
        if re.search(r"\bFROM bots\b", sql):
            self._seen.append(sql)
        return self._db.execute(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


async def test_the_people_ladder_finds_its_people_in_one_query(tmp_path: Path,
                                                                db_location: str) -> None:
    """Which lines of the people's ladder are people (linked to their own
    page) is one read of the bots table for the page, not one per line."""
    people = [f"person-{i}" for i in range(8)]
    with contextlib.closing(open_store(db_location)) as store:
        for name in people:
            store.add_bot(name, f"hash-of-{name}", kind=PERSON_KIND)
        for i in range(4):  # two people and three bots at each table
            players = people[2 * i:2 * i + 2] + [f"bot-{i}-{s}" for s in range(3)]
            finish_in_store(store, make_match(f"m{i}", players=players, seed=i),
                            tournament_id=PEOPLE)
        async with people_site(tmp_path, db_location, store=store) as site:
            async with site.http.get(f"{site.base}/api/standings",
                                     params={"scope": PEOPLE, "game": "muushig"}) as r:
                assert len((await r.json())["standings"]) == 20  # 8 people, 12 bots
            seen: list[str] = []
            real_read = store.db.read

            @contextlib.contextmanager
            def counted_read() -> Iterator[_Counted]:
                with real_read() as db:
                    yield _Counted(db, seen)

            store.db.read = counted_read  # type: ignore[method-assign]
            try:
                async with site.http.get(f"{site.base}/partials/standings",
                                         params={"scope": PEOPLE, "game": "muushig"}) as r:
                    partial = await r.text()
                partial_reads = list(seen)
                seen.clear()
                async with site.http.get(f"{site.base}/") as r:
                    home = await r.text()
                home_reads = list(seen)
            finally:
                store.db.read = real_read  # type: ignore[method-assign]
        for name in people:  # every person linked to their page, every bot to its own
            assert f'href="/people/{name}' in partial and f'href="/people/{name}' in home
        assert 'href="/bots/bot-0-0' in partial and 'href="/people/bot-0-0' not in partial
        assert len(partial_reads) == 1, partial_reads
        assert len(home_reads) == 1, home_reads
