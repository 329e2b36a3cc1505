"""What a visitor must not see, and limits on the live stream.

Before: the public tournament config carried entrants' commands, working
directories and the source path; ``abort_reason`` carried internal exception
text; the ``Server`` header named library versions; one client could hold
every live-stream slot, and a departed viewer's slot stayed taken until the
next heartbeat; tournament ids the runner makes (up to 49 characters) were
refused by the ``scope=`` and ``tournament=`` filters.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.storage.base import TournamentRecord, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import parse_config
from arena.tournament.runner import tournament_id
from arena.web.app import make_app
from arena.web.keys import WebLimits
from arena.live import LiveHub

from .conftest import ADMIN
from .helpers import finish_in_store, make_match, start_in_store
from tests.timing import MS

TIMEOUT = 5.0
LOCAL_CONFIG = {"name": "A long tournament name for the spring of next year", "seed": 99,
                "entrant": [{"name": "alpha", "command": ["/opt/secret/alpha", "--key=s3cr3t"],
                             "cwd": "/home/organiser/bots"},
                            {"name": "beta", "remote": True}],
                "limits": {"decision_ms": 700}, "rules": {"max_hands": 50}}


def runner_tournament(store: SqliteStore) -> str:
    """A tournament stored the way ``arena tournament FILE`` stores it."""
    config = parse_config(LOCAL_CONFIG)
    tid = tournament_id(config)
    wire = config.to_wire()
    wire["source"] = "/home/organiser/cups/spring.toml"
    store.create_tournament(TournamentRecord(id=tid, name=config.name, game="muushig",
                                             config=wire, status=TournamentStatus.RUNNING,
                                             created_at=time.time()), [])
    return tid


# -- the tournament config ------------------------------------------------------------
async def test_the_public_config_holds_only_what_a_visitor_needs(client: TestClient,
                                                                 store: SqliteStore) -> None:
    tid = runner_tournament(store)
    text = await (await client.get(f"/api/tournaments/{tid}")).text()
    for secret in ("/opt/secret", "s3cr3t", "/home/organiser", "spring.toml", "command",
                   "cwd", "source", '"seed"'):
        assert secret not in text, secret
    config = (await (await client.get(f"/api/tournaments/{tid}")).json())["tournament"]["config"]
    assert config["entrants"] == [{"name": "alpha"}, {"name": "beta"}]
    assert config["game"] == "muushig" and config["rules"] == {"max_hands": 50}
    assert config["limits"]["decision_ms"] == 700
    assert config["schedule"]["kind"] == "auto"


async def test_the_admin_sees_the_whole_config(client: TestClient, store: SqliteStore) -> None:
    tid = runner_tournament(store)
    body = await (await client.get(f"/api/tournaments/{tid}",
                                   headers={"Authorization": f"Bearer {ADMIN}"})).json()
    assert body["tournament"]["config"]["source"] == "/home/organiser/cups/spring.toml"


async def test_long_tournament_ids_work_in_filters(client: TestClient, store: SqliteStore) -> None:
    tid = runner_tournament(store)
    assert len(tid) > 32
    finish_in_store(store, make_match("t0"), tournament_id=tid, seed="s")
    for path in (f"/api/standings?scope={tid}", f"/api/matches?tournament={tid}",
                 f"/api/bots/alpha?scope={tid}", f"/api/tournaments/{tid}/standings"):
        response = await client.get(path)
        assert response.status in (200, 404), (path, await response.text())
        if response.status == 404:  # only for the bot, which played no match here
            assert "alpha" in await response.text()
    body = await (await client.get(f"/api/matches?tournament={tid}")).json()
    assert body["total"] == 1


# -- abort reasons ------------------------------------------------------------------------
async def test_abort_reasons_are_public_words_for_visitors(client: TestClient,
                                                           store: SqliteStore) -> None:
    start_in_store(store, make_match("boom"))
    store.abort_match("boom", "internal error: KeyError: 'hands' at /srv/arena/table.py:161")
    start_in_store(store, make_match("gone", seed=2))
    store.abort_match("gone", "every bot disconnected")
    detail = (await (await client.get("/api/matches/boom")).json())["match"]
    assert detail["abort_reason"] == "internal error"
    listed = await (await client.get("/api/matches?status=aborted")).text()
    assert "KeyError" not in listed and "/srv" not in listed
    gone = (await (await client.get("/api/matches/gone")).json())["match"]
    assert gone["abort_reason"] == "every bot disconnected"
    admin = await (await client.get("/api/matches/boom",
                                    headers={"Authorization": f"Bearer {ADMIN}"})).json()
    assert "KeyError" in admin["match"]["abort_reason"]


async def test_the_live_stream_does_not_carry_internal_abort_text(client: TestClient,
                                                                  hub: LiveHub) -> None:
    async with hub.subscribe("matches") as sub:
        hub.match_started("m", {"players": ["a"]})
        hub.match_ended("m", {"aborted": "internal error: ValueError: x=1", "players": ["a"]})
        messages = [await asyncio.wait_for(anext(sub), TIMEOUT) for _ in range(2)]
    assert messages[1]["summary"]["aborted"] == "internal error"


# -- headers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/health", "/", "/static/style.css", "/api/nothing",
                                  "/nothing"])
async def test_the_server_header_names_no_library(client: TestClient, path: str) -> None:
    response = await client.get(path)
    server = response.headers.get("Server", "")
    assert "aiohttp" not in server and "Python" not in server
    assert server == "muushig-arena"


# -- live stream slots ---------------------------------------------------------------------
async def wait_for_subscribers(hub: LiveHub, n: int) -> None:
    async with asyncio.timeout(TIMEOUT):
        while hub.subscriber_count != n:
            await asyncio.sleep(0.01)


async def test_one_address_cannot_hold_every_stream_slot(store: SqliteStore) -> None:
    hub = LiveHub()
    app = make_app(store, hub=hub, metrics=Metrics(), limits=WebLimits(streams_per_address=3))
    server = TestServer(app)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            held = [await session.get(server.make_url("/api/live?channel=matches"))
                    for _ in range(3)]
            await wait_for_subscribers(hub, 3)
            refused = await session.get(server.make_url("/api/live?channel=matches"))
            assert refused.status == 429
            assert int(refused.headers["Retry-After"]) >= 1
            assert (await refused.json())["error"]["status"] == 429
            held[0].close()
            await wait_for_subscribers(hub, 2)
            again = await session.get(server.make_url("/api/live?channel=matches"))
            assert again.status == 200
            for response in [*held, again]:
                response.close()
    finally:
        await server.close()


async def test_a_departed_viewer_frees_its_slot_at_once(store: SqliteStore) -> None:
    hub = LiveHub()
    server = TestServer(make_app(store, hub=hub, metrics=Metrics()))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            response = await session.get(server.make_url("/api/live?channel=matches"))
            await wait_for_subscribers(hub, 1)
            response.close()
            t0 = time.monotonic()
            await wait_for_subscribers(hub, 0)  # the heartbeat is 15 s away
            assert time.monotonic() - t0 < 5000 * MS
    finally:
        await server.close()
