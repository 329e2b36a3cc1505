"""The JSON API over a real SQLite store with hand-made matches."""

from __future__ import annotations

import gc
import hashlib
import time

import pytest
from aiohttp.test_utils import TestClient

import arena.pure
from arena.auth import hash_token
from arena.storage.base import ScheduledMatch, TournamentRecord, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.live import LiveHub

from .conftest import ADMIN
from .helpers import CARDS, HIDDEN_FIELDS, PLAYERS, finish_in_store, make_match, start_in_store


@pytest.fixture
async def client(store: SqliteStore, hub: LiveHub, metrics) -> TestClient:
    """These tests register bots as anybody may on an open server."""
    from aiohttp.test_utils import TestServer

    from arena.web.app import make_app
    app = make_app(store, hub=hub, metrics=metrics, admin_token=ADMIN, registration="open",
                   server_info={"software": "muushig-arena/test"})
    async with TestClient(TestServer(app)) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def error_of(response, status: int) -> str:
    assert response.status == status, await response.text()
    assert response.content_type == "application/json"
    body = await response.json()
    assert body["error"]["status"] == status
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["message"]


def tournament(store: SqliteStore, tid: str, *, status=TournamentStatus.RUNNING,
               seeds: tuple[str, ...] = ("s0", "s0", "s1")) -> None:
    store.create_tournament(
        TournamentRecord(id=tid, name=f"Cup {tid}", game="muushig", config={"seed": 1},
                         status=status, created_at=time.time()),
        [ScheduledMatch(tournament_id=tid, slot=i, players=PLAYERS, seed=seed)
         for i, seed in enumerate(seeds)])


# -- standings ---------------------------------------------------------------
async def test_ladder_counts_only_matches_outside_tournaments(client: TestClient,
                                                               store: SqliteStore) -> None:
    for i in range(3):
        finish_in_store(store, make_match(f"l{i}", seed=i), finished_at=1000.0 + i)
    tournament(store, "cup")
    finish_in_store(store, make_match("t0", players=["x1", "x2", "x3", "x4", "x5"]),
                    tournament_id="cup", seed="s1")
    body = await (await client.get("/api/standings")).json()
    assert body["scope"] == "ladder"
    assert body["total"] == 5
    assert {row["bot"] for row in body["standings"]} == set(PLAYERS)
    assert all(row["matches"] == 3 for row in body["standings"])
    rows = body["standings"]
    keys = [(-row["stars"], row["score_sum"]) for row in rows]
    assert keys == sorted(keys)  # stars first, then the lower summed score
    for i, row in enumerate(rows):  # equal keys share a place, numbered as in sport
        first = keys.index(keys[i])
        assert row["rank"] == first + 1

    cup = await (await client.get("/api/tournaments/cup/standings")).json()
    assert {row["bot"] for row in cup["standings"]} == {"x1", "x2", "x3", "x4", "x5"}
    everything = await (await client.get("/api/standings?scope=all")).json()
    assert everything["total"] == 10


async def test_standings_pagination(client: TestClient, store: SqliteStore) -> None:
    finish_in_store(store, make_match("m"))
    full = (await (await client.get("/api/standings")).json())["standings"]
    body = await (await client.get("/api/standings?limit=2&offset=1")).json()
    assert (body["limit"], body["offset"], body["total"]) == (2, 1, 5)
    assert body["standings"] == full[1:3]


async def test_standings_follow_new_finished_matches(client: TestClient,
                                                     store: SqliteStore) -> None:
    finish_in_store(store, make_match("a"))
    first = await (await client.get("/api/standings")).json()
    finish_in_store(store, make_match("b", seed=9))
    second = await (await client.get("/api/standings")).json()
    assert first["standings"][0]["matches"] == 1
    assert second["standings"][0]["matches"] == 2


# -- tournaments -------------------------------------------------------------------
async def test_tournaments_with_progress(client: TestClient, store: SqliteStore) -> None:
    tournament(store, "cup")
    finish_in_store(store, make_match("t0"), tournament_id="cup", seed="s0")
    store.complete_slot("cup", 0, "t0")
    body = await (await client.get("/api/tournaments")).json()
    assert body["total"] == 1
    assert body["tournaments"][0]["progress"] == {"done": 1, "total": 3}
    one = await (await client.get("/api/tournaments/cup")).json()
    assert one["tournament"]["status"] == "running"
    assert one["tournament"]["config"] == {}  # the seed is the organiser's
    schedule = await (await client.get("/api/tournaments/cup/schedule?limit=2")).json()
    assert schedule["total"] == 3 and len(schedule["slots"]) == 2
    assert schedule["slots"][0]["match_id"] == "t0"
    assert "seed" not in schedule["slots"][0]  # it fixes decks not yet played
    await error_of(await client.get("/api/tournaments/nope"), 404)
    await error_of(await client.get("/api/tournaments/nope/standings"), 404)


# -- matches ----------------------------------------------------------------------------
async def test_match_list_filters_and_pagination(client: TestClient, store: SqliteStore) -> None:
    for i in range(4):
        finish_in_store(store, make_match(f"f{i}"), finished_at=1000.0 + i)
    start_in_store(store, make_match("run", players=["solo", "beta", "gamma", "delta", "eps"]))
    tournament(store, "cup")
    finish_in_store(store, make_match("t0"), tournament_id="cup", seed="s1")

    body = await (await client.get("/api/matches?limit=2&offset=1")).json()
    assert (body["total"], body["limit"], body["offset"], len(body["matches"])) == (6, 2, 1, 2)
    running = await (await client.get("/api/matches?status=running")).json()
    assert [m["id"] for m in running["matches"]] == ["run"]
    assert running["matches"][0]["result"] is None
    by_bot = await (await client.get("/api/matches?bot=solo")).json()
    assert [m["id"] for m in by_bot["matches"]] == ["run"]
    in_cup = await (await client.get("/api/matches?tournament=cup")).json()
    assert [m["id"] for m in in_cup["matches"]] == ["t0"]
    finished = await (await client.get("/api/matches?status=finished&bot=alpha")).json()
    assert finished["total"] == 5
    assert all("seed" not in m for m in finished["matches"])


@pytest.mark.parametrize("query", [
    "limit=0", "limit=201", "limit=ten", "offset=-1", "offset=x", "status=playing",
    "bot=" + "x" * 65, "bot=bad%20name", "tournament=a/b",
])
async def test_bad_query_parameters_are_400(client: TestClient, query: str) -> None:
    message = await error_of(await client.get(f"/api/matches?{query}"), 400)
    assert query.split("=")[0] in message


async def test_finished_match_has_result_reveal_and_full_log(client: TestClient,
                                                            store: SqliteStore) -> None:
    m = make_match("done")
    finish_in_store(store, m)
    body = await (await client.get("/api/matches/done")).json()
    assert body["live"] is False and body["embargoed"] is False
    assert body["match"]["result"] == m.result
    assert body["match"]["reveal"] == m.reveal()
    assert [e["data"] for e in body["events"]] == m.record_log
    assert [e["seq"] for e in body["events"]] == list(range(len(m.record_log)))
    reveal = body["match"]["reveal"][0]
    digest = hashlib.sha256(f"{reveal['salt']}:{','.join(reveal['deck'])}".encode()).hexdigest()
    commits = [e["data"] for e in body["events"] if e["data"]["kind"] == "commit"]
    assert commits == [{"kind": "commit", "round": 0, "hand": 0, "commitment": digest}]
    assert body["match"]["latency"][1]["decisions"] == 3

    page = await (await client.get("/api/matches/done/events?limit=5&offset=3")).json()
    assert page["total"] == len(m.record_log)
    assert [e["data"] for e in page["events"]] == m.record_log[3:8]


def cards_in(text: str) -> set[str]:
    return {c for c in CARDS if f'"{c}"' in text}


async def test_running_match_shows_only_the_public_log(client: TestClient, store: SqliteStore,
                                                       hub: LiveHub) -> None:
    m = make_match("run1")
    # The store holds the full log so far (every hand); the hub the public one.
    start_in_store(store, m, upto=len(m.record_log) - 8)
    hub.match_started("run1", {"game": "muushig", "players": m.players,
                               "tournament_id": None, "started_at": time.time()})
    public = m.public_log[:len(m.public_log) - 6]
    for event in public:
        hub.match_events("run1", [(event, None)])
    played = {e["card"] for e in public if e["kind"] == "play"}
    assert m.hidden_cards() - played  # there is something to leak

    for path in ("/api/matches/run1", "/api/matches/run1/events", "/api/matches/live",
                 "/api/matches?status=running", "/api/matches", "/matches/run1"):
        response = await client.get(path)
        assert response.status == 200, path
        text = await response.text()
        assert not any(f'"{field}"' in text for field in HIDDEN_FIELDS), path
        assert cards_in(text) <= played | {m.face_up}, path

    detail = await (await client.get("/api/matches/run1/events?limit=10000")).json()
    assert detail["live"] is True
    assert [e["data"] for e in detail["events"]] == public
    body = await (await client.get("/api/matches/run1")).json()
    assert body["match"]["status"] == "running" and body["match"]["reveal"] is None
    live = await (await client.get("/api/matches/live")).json()
    assert [x["id"] for x in live["matches"]] == ["run1"]


async def test_running_match_unknown_to_the_store_is_served_from_the_hub(
        client: TestClient, hub: LiveHub) -> None:
    hub.match_started("fresh", {"game": "muushig", "players": PLAYERS,
                                "tournament_id": None, "started_at": 5.0})
    hub.match_events("fresh", [({"kind": "round_start", "round": 0, "dealer": 0,
                              "scores": [15] * 5}, None)])
    body = await (await client.get("/api/matches/fresh")).json()
    assert body["live"] is True
    assert body["match"]["players"] == PLAYERS
    assert body["events"][0]["data"]["kind"] == "round_start"


async def test_duplicate_deals_are_embargoed_until_every_rotation_is_played(
        client: TestClient, store: SqliteStore) -> None:
    tournament(store, "dup", seeds=("s0", "s0", "s1"))
    m = make_match("rot0")
    finish_in_store(store, m, tournament_id="dup", seed="s0")
    store.complete_slot("dup", 0, "rot0")
    body = await (await client.get("/api/matches/rot0")).json()
    assert body["embargoed"] is True
    assert body["events"] == [] and body["match"]["reveal"] is None
    assert body["match"]["result"] == m.result

    finish_in_store(store, make_match("rot1"), tournament_id="dup", seed="s0")
    store.complete_slot("dup", 1, "rot1")
    body = await (await client.get("/api/matches/rot0")).json()
    assert body["embargoed"] is False
    assert body["match"]["reveal"] == m.reveal()


@pytest.mark.parametrize("status", [TournamentStatus.RUNNING, TournamentStatus.CANCELLED,
                                    TournamentStatus.PENDING])
async def test_an_unplayed_rotation_keeps_its_decks_embargoed_whatever_the_status_says(
        client: TestClient, store: SqliteStore, status: TournamentStatus) -> None:
    # Stopped (it stays "running"), cancelled or pending: a resume can still
    # deal rotation 1, so rotation 0's decks and log stay hidden.
    tournament(store, "stopped", status=status, seeds=("s0", "s0"))
    finish_in_store(store, make_match("r0"), tournament_id="stopped", seed="s0")
    store.complete_slot("stopped", 0, "r0")
    store.set_tournament_status("stopped", status)
    for path in ("/api/matches/r0", "/api/matches/r0/events"):
        body = await (await client.get(path)).json()
        assert body["embargoed"] is True and body["events"] == []
    assert (await (await client.get("/api/matches/r0")).json())["match"]["reveal"] is None
    page = await (await client.get("/matches/r0")).text()
    assert make_match("r0").reveal()[0]["salt"] not in page


async def test_a_finished_tournament_shows_every_deck(client: TestClient,
                                                       store: SqliteStore) -> None:
    tournament(store, "over", seeds=("s0",))
    m = make_match("o0")
    finish_in_store(store, m, tournament_id="over", seed="s0")
    store.complete_slot("over", 0, "o0")
    store.set_tournament_status("over", TournamentStatus.FINISHED)
    body = await (await client.get("/api/matches/o0")).json()
    assert body["embargoed"] is False and body["match"]["reveal"] == m.reveal()


async def test_unknown_things_are_404_json(client: TestClient) -> None:
    await error_of(await client.get("/api/matches/nope"), 404)
    await error_of(await client.get("/api/matches/nope/events"), 404)
    await error_of(await client.get("/api/bots/nobody"), 404)
    await error_of(await client.get("/api/no/such/route"), 404)
    await error_of(await client.get("/api/"), 404)
    message = await error_of(await client.put("/api/matches"), 405)
    assert "PUT" in message


# -- bots -----------------------------------------------------------------------------------
async def test_bot_page_statistics(client: TestClient, store: SqliteStore) -> None:
    for i in range(3):
        finish_in_store(store, make_match(f"b{i}", seed=i), finished_at=2000.0 + i)
    body = await (await client.get("/api/bots/beta")).json()
    assert body["bot"]["name"] == "beta" and "token_hash" not in body["bot"]
    assert body["matches"] == 3
    assert [h["match"] for h in body["rating_history"]] == ["b0", "b1", "b2"]
    assert all({"mu", "sigma", "finished_at"} <= set(h) for h in body["rating_history"])
    assert [r["match"] for r in body["recent"]] == ["b2", "b1", "b0"]
    assert body["stars_per_match"] == pytest.approx(
        sum(r["stars"] for r in body["recent"]) / 3)
    assert body["standing"]["bot"] == "beta"
    assert body["latency"]["decisions"] == 9
    assert body["latency"]["median_ms"] == 11.0
    delta = await (await client.get("/api/bots/delta?recent=1")).json()
    assert delta["faults"]["timeouts"] == 3
    assert len(delta["recent"]) == 1
    await error_of(await client.get("/api/bots/beta?recent=-1"), 400)
    bots = await (await client.get("/api/bots?limit=2")).json()
    assert bots["total"] == 5 and [b["name"] for b in bots["bots"]] == ["alpha", "beta"]


# -- health, metrics --------------------------------------------------------------------------
async def test_health(client: TestClient, metrics) -> None:
    metrics.decisions_total += 1
    body = await (await client.get("/api/health")).json()
    assert body["status"] == "ok"
    assert body["server"] == {"software": "muushig-arena/test"}
    assert body["metrics"]["decisions_total"] == 1
    import arena.server.table  # noqa: F401 - a per-decision module, compiled or not
    assert body["compiled"] is bool(arena.pure.compiled_modules())
    assert body["collector"]["thresholds"] == list(gc.get_threshold())
    index = await (await client.get("/api")).json()
    assert "/api/matches/{id}" in index["endpoints"]


async def test_metrics_in_prometheus_text_format(client: TestClient, metrics) -> None:
    metrics.decisions_total += 1
    metrics.error("late")
    metrics.tables_running = 2
    response = await client.get("/metrics")
    assert response.status == 200
    assert response.content_type == "text/plain"
    text = await response.text()
    assert "# TYPE arena_decisions_total counter" in text
    assert "arena_tables_running 2" in text.splitlines()
    assert 'arena_errors_total{code="late"} 1' in text.splitlines()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            float(value)
            assert name.startswith("arena_")


# -- registration and auth ----------------------------------------------------------------------
async def test_registration_shows_the_token_once_and_stores_its_hash(
        client: TestClient, store: SqliteStore) -> None:
    response = await client.post("/api/bots", json={"name": "newbie"})
    assert response.status == 201
    body = await response.json()
    token = body["token"]
    assert body["bot"]["name"] == "newbie" and len(token) >= 24
    assert store.get_bot("newbie").token_hash == hash_token(token)
    for path in ("/api/bots/newbie", "/api/bots"):
        assert token not in await (await client.get(path)).text()
        assert hash_token(token) not in await (await client.get(path)).text()
    await error_of(await client.post("/api/bots", json={"name": "newbie"}), 409)


@pytest.mark.parametrize("body", [{"name": ""}, {"name": "x" * 33}, {"name": "bad name"},
                                  {"name": "ünï"}, {"name": 7}, {}, ["name"]])
async def test_registration_validates_names(client: TestClient, body: object) -> None:
    await error_of(await client.post("/api/bots", json=body), 400)


async def test_registration_rejects_a_body_that_is_not_json(client: TestClient) -> None:
    await error_of(await client.post("/api/bots", data=b"name=x"), 400)


async def test_admin_registration_needs_the_admin(store: SqliteStore, hub: LiveHub,
                                                  metrics) -> None:
    from aiohttp.test_utils import TestServer

    from arena.web.app import make_app
    app = make_app(store, hub=hub, metrics=metrics, admin_token=ADMIN, registration="admin")
    async with TestClient(TestServer(app)) as c:
        await error_of(await c.post("/api/bots", json={"name": "late"}), 401)
        r = await c.post("/api/bots", json={"name": "late"}, headers=bearer(ADMIN))
        assert r.status == 201


async def test_token_rotation(client: TestClient, store: SqliteStore) -> None:
    token = (await (await client.post("/api/bots", json={"name": "rot"})).json())["token"]
    other = (await (await client.post("/api/bots", json={"name": "other"})).json())["token"]
    await error_of(await client.post("/api/bots/rot/token"), 401)
    await error_of(await client.post("/api/bots/rot/token", headers=bearer("wrong")), 401)
    await error_of(await client.post("/api/bots/rot/token", headers={"Authorization": token}), 401)
    await error_of(await client.post("/api/bots/rot/token", headers=bearer(other)), 403)
    r = await client.post("/api/bots/rot/token", headers=bearer(token))
    assert r.status == 200
    new = (await r.json())["token"]
    assert new != token and store.get_bot("rot").token_hash == hash_token(new)
    await error_of(await client.post("/api/bots/rot/token", headers=bearer(token)), 401)
    r = await client.post("/api/bots/rot/token", headers=bearer(ADMIN))
    assert r.status == 200
    await error_of(await client.post("/api/bots/ghost/token", headers=bearer(ADMIN)), 404)


async def test_faults_are_shown_to_the_bot_itself(client: TestClient, store: SqliteStore) -> None:
    token = (await (await client.post("/api/bots", json={"name": "delta"})).json())["token"]
    finish_in_store(store, make_match("fm"))
    await error_of(await client.get("/api/bots/delta/faults"), 401)
    r = await client.get("/api/bots/delta/faults", headers=bearer(token))
    assert r.status == 200
    body = await r.json()
    assert body["total"] == 1
    entry = body["matches"][0]
    assert entry["seats"] == [3]
    assert entry["faults"] == [{"timeouts": 1, "illegal": 0, "disconnects": 0,
                                "autopilot": False}]
    assert [(e["kind"], e["phase"]) for e in entry["events"]] == [("timeout", "exchange")]
    admin = await client.get("/api/bots/delta/faults", headers=bearer(ADMIN))
    assert admin.status == 200


async def test_admin_actions_need_the_admin_token(client: TestClient, store: SqliteStore) -> None:
    token = (await (await client.post("/api/bots", json={"name": "doomed"})).json())["token"]
    await error_of(await client.delete("/api/bots/doomed"), 401)
    await error_of(await client.delete("/api/bots/doomed", headers=bearer(token)), 403)
    await error_of(await client.delete("/api/bots/doomed", headers=bearer("nope")), 401)
    r = await client.delete("/api/bots/doomed", headers=bearer(ADMIN))
    assert r.status == 200 and (await r.json())["bot"]["removed"] is True
    assert store.get_bot("doomed").removed
    # a removed bot's token no longer works
    await error_of(await client.post("/api/bots/doomed/token", headers=bearer(token)), 401)
    await error_of(await client.delete("/api/bots/ghost", headers=bearer(ADMIN)), 404)


CONFIG = {"name": "Spring cup", "seed": 3, "entrant": [
    {"name": "alpha", "remote": True}, {"name": "beta", "remote": True}]}


async def test_creating_a_tournament_stores_it_pending(client: TestClient,
                                                       store: SqliteStore) -> None:
    await error_of(await client.post("/api/tournaments", json=CONFIG), 401)
    r = await client.post("/api/tournaments?id=spring", json=CONFIG, headers=bearer(ADMIN))
    assert r.status == 201, await r.text()
    body = await r.json()
    assert body["tournament"]["id"] == "spring"
    assert body["tournament"]["status"] == "pending"
    assert store.get_tournament("spring").config["seed"] == 3
    await error_of(await client.post("/api/tournaments?id=spring", json=CONFIG,
                                     headers=bearer(ADMIN)), 409)
    toml = b'name = "Autumn"\n[[entrant]]\nname = "alpha"\nremote = true\n'
    r = await client.post("/api/tournaments", data=toml, headers={
        **bearer(ADMIN), "Content-Type": "application/toml"})
    assert r.status == 201
    assert (await r.json())["tournament"]["name"] == "Autumn"


@pytest.mark.parametrize("config", [
    {"seed": 1, "entrant": [{"name": "a", "remote": True}]},  # no name
    {"name": "x", "entrant": [{"name": "a", "command": ["./a"]}]},  # runs a program
    {"name": "x", "entrant": [{"name": "a", "hosted": True, "version": 2}]},  # a sandbox
    {"name": "x", "game": "chess", "entrant": [{"name": "a", "remote": True}]},
    {"name": "x", "entrant": [{"name": "a", "remote": True}], "bogus": 1},
])
async def test_bad_tournament_configs_are_400(client: TestClient, config: dict) -> None:
    await error_of(await client.post("/api/tournaments", json=config, headers=bearer(ADMIN)), 400)


async def test_no_admin_token_means_no_admin_actions(store: SqliteStore, hub: LiveHub,
                                                     metrics) -> None:
    from aiohttp.test_utils import TestServer

    from arena.web.app import make_app
    app = make_app(store, hub=hub, metrics=metrics, admin_token=None)
    async with TestClient(TestServer(app)) as c:
        await error_of(await c.post("/api/tournaments", json=CONFIG,
                                    headers=bearer("anything")), 403)
