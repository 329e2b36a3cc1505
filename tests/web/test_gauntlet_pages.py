"""A gauntlet on the web: the API record carries the decision and the result
per field member, live and once it has stopped (saying why); the page shows
them in a section refetched live; the schedule names each slot's deck set."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import parse_config
from arena.tournament.growth import extend_if_due
from arena.tournament.runner import create_or_load


def gauntlet(store: SqliteStore, tmp_path, **rule: object):
    config = parse_config({
        "name": "v7 run", "schedule": {"kind": "gauntlet", "challenger": "v7",
                                       "max_sets": 10, **rule},
        "entrant": [{"name": n, "remote": True} for n in ("v7", "a", "b", "c", "d")]},
        base_dir=tmp_path)
    record, _ = create_or_load(store, config)
    return config, record.id


def play_open_slots(store: SqliteStore, tid: str, challenger_stars: int) -> None:
    """Finish every open slot: the challenger takes ``challenger_stars``,
    the others none."""
    for slot in store.get_schedule(tid):
        if slot.match_id is not None:
            continue
        match_id = f"{tid}-m{slot.slot}"
        store.create_match(MatchRecord(id=match_id, game="muushig", players=list(slot.players),
                                       rules={}, limits={}, status=MatchStatus.RUNNING,
                                       started_at=1.0, tournament_id=tid, seed=slot.seed))
        stars = [challenger_stars if p == "v7" else 0 for p in slot.players]
        store.finish_match(match_id, result={"stars": stars, "sums": [0] * 5,
                                             "ranks": [1] * 5},
                           reveal=[], faults=[SeatFaults() for _ in range(5)], latency_ms=[[] for _ in range(5)],
                           finished_at=2.0, slot=(tid, slot.slot))


async def test_a_running_gauntlet_says_it_plays_on_and_counts_up_to_its_cap(
        client: TestClient, store: SqliteStore, tmp_path) -> None:
    _, tid = gauntlet(store, tmp_path)
    one = (await (await client.get(f"/api/tournaments/{tid}")).json())["tournament"]
    assert one["progress"] == {"done": 0, "total": 5 * 10, "set": 1, "max_sets": 10}
    assert one["config"]["schedule"]["challenger"] == "v7"
    assert one["config"]["schedule"]["max_sets"] == 10
    g = one["gauntlet"]
    assert g["verdict"] == "continue" and g["reason"].startswith("playing on")
    assert [r["opponent"] for r in g["opponents"]] == ["a", "b", "c", "d"]
    schedule = await (await client.get(f"/api/tournaments/{tid}/schedule")).json()
    assert {s["set"] for s in schedule["slots"]} == {1}
    html = await (await client.get(f"/tournaments/{tid}")).text()
    assert 'Gauntlet, deck set <span id="gauntlet-set">1</span> of at most 10' in html
    assert 'data-partial="/partials/gauntlet?tournament=' in html
    assert 'data-verdict="continue"' in html


async def test_a_stopped_gauntlet_states_its_verdict_why_and_each_opponent(
        client: TestClient, store: SqliteStore, tmp_path) -> None:
    config, tid = gauntlet(store, tmp_path, alpha=0.1, effect=0.45)
    while True:  # the challenger wins every set: five sets reach the rule's bound
        play_open_slots(store, tid, challenger_stars=3)
        if not extend_if_due(store, config, tid):
            break
    store.set_tournament_status(tid, TournamentStatus.FINISHED)
    one = (await (await client.get(f"/api/tournaments/{tid}")).json())["tournament"]
    g = one["gauntlet"]
    assert g["verdict"] == "better" and g["deck_sets"] == 5 and g["wins"] == [5, 0]
    assert "stopped: the challenger is ahead of the field after 5 deck set(s)" in g["reason"]
    assert "at most 0.1 of the time" in g["reason"]
    assert sum(r["deck_sets"] for r in g["opponents"]) == 5 * 4
    assert one["progress"] == {"done": 25, "total": 25, "set": 5, "max_sets": 10}
    html = await (await client.get(f"/tournaments/{tid}")).text()
    assert "Better than the field" in html and "25 of 25 matches played" in html
    partial = await (await client.get(f"/partials/gauntlet?tournament={tid}")).text()
    assert 'data-verdict="better"' in partial and "<th scope=\"row\">a</th>" in partial


async def test_other_tournaments_have_no_gauntlet_section(
        client: TestClient, store: SqliteStore, tmp_path) -> None:
    config = parse_config({"name": "plain", "entrant": [{"name": "x", "remote": True}]},
                          base_dir=tmp_path)
    record, _ = create_or_load(store, config)
    one = (await (await client.get(f"/api/tournaments/{record.id}")).json())["tournament"]
    assert "gauntlet" not in one
    html = await (await client.get(f"/tournaments/{record.id}")).text()
    assert 'id="gauntlet"' not in html


async def test_a_cancelled_gauntlet_says_it_was_cancelled_not_that_it_plays_on(
        client: TestClient, store: SqliteStore, tmp_path) -> None:
    _, tid = gauntlet(store, tmp_path)
    play_open_slots(store, tid, challenger_stars=3)
    store.cancel_tournament(tid)
    g = (await (await client.get(f"/api/tournaments/{tid}")).json())["tournament"]["gauntlet"]
    assert g["verdict"] == "continue"
    assert g["reason"] == ("cancelled by the organiser after 1 deck set(s), before the "
                           "stopping rule decided")
