"""People's matches count on a ladder of their own per game, never on the
bots' ladder; on both stores."""

from __future__ import annotations

import random
from pathlib import Path

from tests.people.helpers import people_site, play_as_person, random_legal


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
