"""A challenge asked for over HTTP of ``arena serve --workers 2``: the
challenge service runs in the parent, so the challenge's bots must come to
the parent's tables (as a tournament's entrants do); its matches are then
played, each once, and never at a worker."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest

from arena.auth import hash_token
from arena.storage import open_store
from arena.storage.base import MatchStatus

from .served import Bots, until

NAMES = ("north", "south", "east")


def post_challenge(http_port: int, token: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{http_port}/api/challenges", data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.timeout(180)
async def test_a_challenge_is_played_in_the_parent_with_bots_that_came_from_workers(
        served, tmp_path):
    db = tmp_path / "arena.db"
    store = open_store(db)
    for name in NAMES:
        store.add_bot(name, hash_token(f"token-{name}"))
    store.close()
    arena = served("--house-wait", "0.3", "--rule", "max_hands=2", db=str(db))
    # Reconnecting SDK bots: one sent back to the parent comes again.
    bots = Bots(arena.port, [f"token-{n}" for n in NAMES], names=list(NAMES), reconnect=True)
    store = open_store(db)
    try:
        # The bots play ladder matches at the workers first: then they are
        # on the ladder, open to challenges.
        await until(lambda: all(any(m.tournament_id is None for m in store.list_matches(
            bot=n, status=MatchStatus.FINISHED, limit=5)) for n in NAMES),
            timeout_s=90, what="a ladder match of every bot")
        status, body = await asyncio.to_thread(
            post_challenge, arena.http_port, "token-north",
            {"opponents": ["south", "east"], "matches": 2})
        assert status == 201, body
        cid = body["challenge"]["id"]
        await until(lambda: arena.get(f"/api/challenges/{cid}")["challenge"]["state"]
                    == "finished", timeout_s=120, what="the challenge played out")
        shown = arena.get(f"/api/challenges/{cid}")["challenge"]
        assert shown["played"] == 2 and shown["given_up"] == 0
        matches = store.list_matches(tournament_id=cid, limit=100)
        assert sorted(m.id for m in matches if m.status is MatchStatus.FINISHED) == \
            sorted(shown["match_ids"])
        assert all(m.status is MatchStatus.FINISHED for m in matches)  # none played twice
        for m in matches:
            assert {"north", "south", "east"} <= set(m.players)
            assert store.get_match(m.id).node is None  # at the parent's tables
    finally:
        store.close()
        await bots.stop()
