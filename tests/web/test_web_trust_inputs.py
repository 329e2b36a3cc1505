"""Hostile inputs over HTTP get the documented error (400/404), never a 500.

Every case here answered 500 (a traceback in the log) before: deeply nested
JSON or TOML, integers SQLite cannot hold, file names the OS refuses.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import quote

import pytest
import structlog
from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.live import LiveHub

from .conftest import ADMIN
from .helpers import finish_in_store, make_match

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


@pytest.fixture
async def open_client(store: SqliteStore, hub: LiveHub, metrics: Metrics
                      ) -> AsyncIterator[TestClient]:
    app = make_app(store, hub=hub, metrics=metrics, admin_token=ADMIN, registration="open")
    async with TestClient(TestServer(app)) as c:
        yield c


async def expect_error(response, *statuses: int) -> dict:
    assert response.status in statuses, (response.status, await response.text())
    if response.url.path.startswith("/api"):
        body = await response.json()
        assert body["error"]["status"] == response.status
        assert body["error"]["message"]
        return body
    return {}


# -- deep nesting -----------------------------------------------------------------
# Bodies stay under the 64 KiB limit (beyond it: 413).
@pytest.mark.parametrize("body", ["[" * 60_000, '{"a":' * 6_000 + "1" + "}" * 6_000,
                                  '{"name": ' + "[" * 5_000 + "]" * 5_000 + "}"])
async def test_deeply_nested_json_registration_is_400(open_client: TestClient,
                                                      body: str) -> None:
    response = await open_client.post("/api/bots", data=body,
                                      headers={"Content-Type": "application/json"})
    await expect_error(response, 400)


@pytest.mark.parametrize("content_type,body", [
    ("application/toml", "a = " + "[" * 5_000),
    ("application/toml", "a = " + "[" * 400 + "]" * 400),
    ("application/toml", "a = " + "{b = " * 3_000 + "1" + "}" * 3_000),
    ("application/json", "[" * 60_000),
    ("application/json", '{"name": "x", "entrant": [{"name": "a", "remote": true}], '
                         '"rules": ' + '{"a": ' * 900 + "1" + "}" * 901),
])
async def test_deeply_nested_tournament_configs_are_400(client: TestClient, content_type: str,
                                                        body: str) -> None:
    response = await client.post("/api/tournaments", data=body,
                                 headers={**ADMIN_HEADERS, "Content-Type": content_type})
    message = (await expect_error(response, 400))["error"]["message"]
    assert "nest" in message or "TOML" in message or "JSON" in message


# -- numbers out of range ------------------------------------------------------------
@pytest.mark.parametrize("query", [
    "offset=9223372036854775808", "offset=99999999999999999999999999", "offset=-1",
    "limit=-5", "limit=9223372036854775808", "limit=0", "offset=1_000", "offset=%201",
    "offset=%D9%A3",  # an Arabic-Indic digit: int() reads it, SQLite would not
])
async def test_huge_or_odd_pagination_values_are_400(client: TestClient, query: str) -> None:
    for path in ("/api/matches", "/api/bots", "/api/standings", "/api/tournaments"):
        await expect_error(await client.get(f"{path}?{query}"), 400)


async def test_event_offsets_beyond_any_log_are_400(client: TestClient,
                                                    store: SqliteStore) -> None:
    finish_in_store(store, make_match("m"))
    await expect_error(await client.get("/api/matches/m/events?offset=9223372036854775808"), 400)
    ok = await client.get("/api/matches/m/events?offset=100000")
    assert ok.status == 200 and (await ok.json())["events"] == []


# -- paths ------------------------------------------------------------------------------
@pytest.mark.parametrize("tail", ["a" * 5_000, "a/" * 3_000, "%00", "..%2F..%2Fetc%2Fpasswd",
                                  "x" * 300 + ".css"])
async def test_static_paths_the_os_refuses_are_404(client: TestClient, tail: str) -> None:
    await expect_error(await client.get("/static/" + tail), 404)


async def test_static_files_are_still_served(client: TestClient) -> None:
    response = await client.get("/static/style.css")
    assert response.status == 200


# -- a fuzz-ish sweep over every route ----------------------------------------------------
HOSTILE = ["", "-1", "9223372036854775808", "1e9", "x" * 5_000, "\x00", "../../etc/passwd",
           "１２", "1_0", " 1", "a" * 65, "ünï", "'; DROP TABLE matches; --",
           "raw:%FF%FE", "raw:%ED%A0%80"]  # raw: sent as they are, bytes that are not UTF-8
WORST = ["9223372036854775808", "x" * 5_000, "-1", "raw:%FF%FE"]
QUERY_KEYS = ["limit", "offset", "scope", "bot", "tournament", "status", "recent", "after",
              "id", "channel"]


def _encoded(value: str) -> str:
    return value[4:] if value.startswith("raw:") else quote(value, safe="")


def _fill(canonical: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", _encoded(value) or "x", canonical)


def _routes(app) -> list[tuple[str, str]]:
    out = set()
    for route in app.router.routes():
        resource = route.resource
        if resource is None or route.method == "HEAD":
            continue
        canonical = resource.canonical
        if canonical.startswith("/static"):
            canonical = "/static/{file}"
        out.add((route.method, canonical))
    return sorted(out)


async def test_no_route_answers_500_to_hostile_values(client: TestClient,
                                                      store: SqliteStore) -> None:
    finish_in_store(store, make_match("m"))
    routes = _routes(client.server.app)
    assert ("GET", "/api/matches/{id}") in routes and ("POST", "/api/bots") in routes
    requests: list[tuple[str, str, bytes]] = []
    for method, canonical in routes:
        for value in HOSTILE:
            body = value.encode("utf-8", "replace")
            requests.append((method, _fill(canonical, value), body))
            if method == "GET":  # on a path that exists: every query parameter at once...
                path = _fill(canonical, "m")
                if len(value) < 100:  # (a request line over 8 KiB is refused before routing)
                    every = "&".join(f"{key}={_encoded(value)}" for key in QUERY_KEYS)
                    requests.append((method, f"{path}?{every}", b""))
                if value in WORST:  # ... and each alone
                    requests += [(method, f"{path}?{key}={_encoded(value)}", b"")
                                 for key in QUERY_KEYS]
    with structlog.testing.capture_logs() as logs:
        for method, url, body in requests:
            headers = ADMIN_HEADERS if method != "GET" else {}
            response = await client.request(method, url, headers=headers, data=body)
            assert response.status < 500, (method, url[:200], await response.text())
            if url.startswith("/api") and response.status >= 400:
                error = (await response.json())["error"]
                assert error["status"] == response.status and error["message"]
            response.release()
    assert len(requests) > 1000
    assert not [e for e in logs if e["log_level"] in ("error", "critical")]
