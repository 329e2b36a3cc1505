"""Who may register, and how fast anybody may guess tokens.

Before: ``POST /api/bots`` needed no credentials even with an admin token
set, and wrong tokens were answered without limit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.web.keys import RegistrationMode, WebLimits, admin_token_from
from arena.web.limits import RateLimiter
from arena.live import LiveHub

from .conftest import ADMIN


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def app_client(store: SqliteStore, **options) -> TestClient:
    app = make_app(store, hub=LiveHub(), metrics=Metrics(), admin_token=ADMIN, **options)
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.fixture
async def clients(store: SqliteStore) -> AsyncIterator[list[TestClient]]:
    made: list[TestClient] = []
    yield made
    for c in made:
        await c.close()


# -- registration modes -------------------------------------------------------------
async def test_the_default_mode_needs_the_admin_token(store: SqliteStore, clients) -> None:
    c = await app_client(store)
    clients.append(c)
    response = await c.post("/api/bots", json={"name": "anon"})
    assert response.status == 401
    assert (await response.json())["error"]["status"] == 401
    assert store.get_bot("anon") is None
    assert (await c.post("/api/bots", json={"name": "anon"}, headers=bearer(ADMIN))).status == 201
    health = await (await c.get("/api/health")).json()
    assert health["registration"] == "admin"


async def test_admin_mode_refuses_a_wrong_token(store: SqliteStore, clients) -> None:
    c = await app_client(store, registration="admin")
    clients.append(c)
    assert (await c.post("/api/bots", json={"name": "x"}, headers=bearer("nope"))).status == 401


async def test_admin_mode_without_an_admin_token_registers_nobody(store: SqliteStore) -> None:
    app = make_app(store, hub=LiveHub(), metrics=Metrics(), admin_token=None,
                   registration="admin")
    async with TestClient(TestServer(app)) as c:
        assert (await c.post("/api/bots", json={"name": "x"})).status == 403


async def test_open_mode_registers_anybody(store: SqliteStore, clients) -> None:
    c = await app_client(store, registration=RegistrationMode.OPEN)
    clients.append(c)
    assert (await c.post("/api/bots", json={"name": "anybody"})).status == 201


async def test_closed_mode_refuses_even_the_admin(store: SqliteStore, clients) -> None:
    c = await app_client(store, registration="closed")
    clients.append(c)
    for headers in ({}, bearer(ADMIN)):
        response = await c.post("/api/bots", json={"name": "late"}, headers=headers)
        assert response.status == 403
        assert "arena bots add" in (await response.json())["error"]["message"]


def test_an_unknown_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="open, admin, closed"):
        RegistrationMode.parse("sometimes")


# -- rate limits -----------------------------------------------------------------------
async def test_registration_is_rate_limited_per_address(store: SqliteStore, clients) -> None:
    limits = WebLimits(registrations_per_hour=3, registration_burst=3)
    c = await app_client(store, registration="open", limits=limits)
    clients.append(c)
    statuses = [(await c.post("/api/bots", json={"name": f"b{i}"})).status for i in range(3)]
    assert statuses == [201, 201, 201]
    response = await c.post("/api/bots", json={"name": "b3"})
    assert response.status == 429
    assert int(response.headers["Retry-After"]) >= 1
    assert (await response.json())["error"]["status"] == 429
    assert store.get_bot("b3") is None


async def test_wrong_tokens_are_rate_limited_per_address(store: SqliteStore, clients) -> None:
    limits = WebLimits(auth_failures_per_minute=5, auth_failure_burst=5)
    c = await app_client(store, registration="admin", limits=limits)
    clients.append(c)
    token = (await (await c.post("/api/bots", json={"name": "rot"}, headers=bearer(ADMIN))
                    ).json())["token"]
    statuses = [(await c.post("/api/bots/rot/token", headers=bearer(f"guess{i}"))).status
                for i in range(5)]
    assert statuses == [401] * 5
    for attempt in (bearer("guess-more"), bearer(token), bearer(ADMIN)):
        # Over the limit even a right token waits: a guesser learns nothing.
        response = await c.post("/api/bots/rot/token", headers=attempt)
        assert response.status == 429
        assert int(response.headers["Retry-After"]) >= 1
    wrong_admin = await c.delete("/api/bots/rot", headers=bearer("not-admin"))
    assert wrong_admin.status == 429


async def test_wrong_admin_tokens_count_as_failures(store: SqliteStore, clients) -> None:
    limits = WebLimits(auth_failures_per_minute=3, auth_failure_burst=3)
    c = await app_client(store, limits=limits)
    clients.append(c)
    statuses = [(await c.delete("/api/bots/x", headers=bearer("wrong"))).status
                for _ in range(4)]
    assert statuses == [401, 401, 401, 429]


def test_a_rate_limiter_counts_each_address_apart() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=1.0, burst=2, clock=lambda: now[0])
    assert limiter.take("1.2.3.4") is None
    assert limiter.take("1.2.3.4") is None
    wait = limiter.take("1.2.3.4")
    assert wait is not None and 0 < wait <= 1.0
    assert limiter.take("5.6.7.8") is None  # another address has its own budget
    now[0] = 1.0
    assert limiter.take("1.2.3.4") is None  # refilled


def test_a_rate_limiter_forgets_idle_addresses() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=1.0, burst=1, clock=lambda: now[0], max_keys=100)
    for i in range(1000):
        limiter.take(f"10.0.{i // 256}.{i % 256}")
        now[0] += 0.001
    assert len(limiter) <= 100


# -- the admin token stays out of `ps` -------------------------------------------------
def test_admin_token_from_the_environment() -> None:
    assert admin_token_from(None, None, {"ARENA_ADMIN_TOKEN": "from-env"}) == "from-env"
    assert admin_token_from(None, None, {}) is None


def test_admin_token_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "admin-token"
    path.write_text("from-file\n")
    assert admin_token_from(None, str(path), {"ARENA_ADMIN_TOKEN": "env"}) == "from-file"


def test_an_unreadable_or_empty_token_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        admin_token_from(None, str(tmp_path / "missing"), {})
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ValueError, match="empty"):
        admin_token_from(None, str(tmp_path / "empty"), {})


def test_arena_serve_reads_the_token_and_mode(tmp_path: Path, monkeypatch) -> None:
    from arena import app, cli

    seen = {}

    async def fake_serve(config, **options):
        seen["config"] = config
        return 0

    monkeypatch.setattr(app, "serve", fake_serve)
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", "env-token")
    assert cli.main(["serve", "--registration", "open", "--db", str(tmp_path / "a.db")]) == 0
    assert seen["config"].admin_token == "env-token"
    assert seen["config"].registration == "open"
    (tmp_path / "tok").write_text("file-token")
    assert cli.main(["serve", "--admin-token-file", str(tmp_path / "tok"),
                     "--db", str(tmp_path / "a.db")]) == 0
    assert seen["config"].admin_token == "file-token"
    assert seen["config"].registration == "admin"


async def test_a_proxy_login_header_does_not_count_as_a_wrong_token(store: SqliteStore,
                                                                    clients) -> None:
    limits = WebLimits(auth_failures_per_minute=1, auth_failure_burst=1)
    c = await app_client(store, limits=limits)
    clients.append(c)
    for _ in range(3):  # a site behind a login proxy: every request carries Basic
        response = await c.get("/api/matches", headers={"Authorization": "Basic dXNlcjpwdw=="})
        assert response.status == 200


async def test_unknown_tokens_on_public_reads_count_as_wrong_tokens(store: SqliteStore,
                                                                    clients) -> None:
    limits = WebLimits(auth_failures_per_minute=1, auth_failure_burst=2)
    c = await app_client(store, limits=limits)
    clients.append(c)
    statuses = [(await c.get("/api/tournaments/x", headers=bearer("guess"))).status
                for _ in range(3)]
    assert statuses == [404, 404, 429]  # no free oracle for the admin token
