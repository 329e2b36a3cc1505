"""Deals come from a secret key: unpredictable from public data, shared by
duplicate rotations hand by hand, committed before play, revealed after it,
and verifiable from the store."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from arena.storage.base import TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.metrics import Metrics
from arena.web.app import make_app
from arena.live import LiveHub
from protocol.deals import key_commitment
from tests.tournament_run.helpers import all_decks, play, predicted_first_deck, sample_entrant, write_config


import asyncio
import shutil

import pytest


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One small duplicate tournament, played once; tests work on copies."""
    folder = tmp_path_factory.mktemp("played")
    path = write_config(folder, sample_entrant("r"))
    store, tid, complete = asyncio.run(play(path, folder / "a.db"))
    assert complete
    store.close()
    return folder, tid


def copy_of(played, tmp_path) -> tuple[SqliteStore, str]:
    folder, tid = played
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return SqliteStore(target / "a.db"), tid


def test_no_deck_can_be_computed_from_the_public_config(played, tmp_path):
    store, tid = copy_of(played, tmp_path)
    for slot in store.get_schedule(tid):
        first = store.get_match(slot.match_id).reveal[0]["deck"]
        assert first != predicted_first_deck(slot.seed)
    store.close()


async def test_the_same_file_on_fresh_stores_deals_different_decks(played, tmp_path):
    first, tid = copy_of(played, tmp_path)
    (tmp_path / "two").mkdir()
    second, tid2, _ = await play(played[0] / "t.toml", tmp_path / "two" / "a.db")
    assert tid == tid2  # same file, same id
    decks_one, decks_two = all_decks(first, tid), all_decks(second, tid)
    common = set(decks_one) & set(decks_two)
    assert common and all(decks_one[k] != decks_two[k] for k in common)
    first.close()
    second.close()


def test_duplicate_rotations_get_the_same_deck_for_the_same_round_and_hand(played, tmp_path):
    store, tid = copy_of(played, tmp_path)
    by_hand: dict[tuple[int, int], set[tuple[str, ...]]] = {}
    shared = 0
    for (_, rnd, hand), deck in all_decks(store, tid).items():
        by_hand.setdefault((rnd, hand), set()).add(tuple(deck))
    for decks in by_hand.values():
        assert len(decks) == 1
    # Rounds end at different hands in different rotations, so the k-th deal
    # is not the unit: make sure this run really had rounds of unequal length.
    lengths = {}
    for slot in store.get_schedule(tid):
        reveal = store.get_match(slot.match_id).reveal
        lengths[slot.slot] = tuple(sum(1 for e in reveal if e["round"] == r) for r in range(5))
        shared += len(reveal)
    assert len(set(lengths.values())) > 1
    store.close()


async def test_the_secret_passed_back_replays_the_exact_decks(played, tmp_path):
    from arena.storage.deal_keys import DealKeyring

    first, tid = copy_of(played, tmp_path)
    key = DealKeyring.for_store(first).load(tid)
    (tmp_path / "two").mkdir()
    second, _, _ = await play(played[0] / "t.toml", tmp_path / "two" / "a.db", secret=key)
    one, two = all_decks(first, tid), all_decks(second, tid)
    assert all(one[k] == two[k] for k in set(one) & set(two))
    assert (first.get_tournament(tid).config["deals"]["commitment"]
            == second.get_tournament(tid).config["deals"]["commitment"])
    first.close()
    second.close()


async def test_the_commitment_is_published_and_the_key_never_served_while_running(played, tmp_path):
    store, tid = copy_of(played, tmp_path)
    from arena.storage.deal_keys import DealKeyring

    key = DealKeyring.for_store(store).load(tid)
    assert key is not None
    assert store.get_tournament(tid).config["deals"]["commitment"] == key_commitment(key)
    store.set_tournament_status(tid, TournamentStatus.RUNNING)  # as seen during play
    client = TestClient(TestServer(make_app(store, hub=LiveHub(), metrics=Metrics())))
    await client.start_server()
    try:
        seen = ""
        for url in (f"/api/tournaments/{tid}", f"/api/tournaments/{tid}/schedule",
                    f"/api/tournaments/{tid}/standings", "/api/tournaments", "/api/matches"):
            response = await client.get(url)
            seen += await response.text()
        assert key_commitment(key) in seen
        assert key.hex() not in seen
    finally:
        await client.close()
    # Nor does the database hold it: a copy of the .db file gives nothing away.
    store.close()
    files = list((tmp_path / "copy").glob("a.db*"))
    assert files
    for file in files:
        assert key.hex().encode() not in file.read_bytes()
        assert key not in file.read_bytes()


def test_verify_recomputes_every_deck_and_checks_every_commitment(played, tmp_path):
    store, tid = copy_of(played, tmp_path)
    from arena.tournament.verify import verify_tournament

    report = verify_tournament(store, tid)
    assert report.ok, report.problems
    assert report.matches == 5 and report.deals == sum(
        len(store.get_match(s.match_id).reveal) for s in store.get_schedule(tid))
    store.close()


def test_verify_catches_a_deck_that_was_not_derived_from_the_key(played, tmp_path):
    store, tid = copy_of(played, tmp_path)
    slot = store.get_schedule(tid)[2]
    match = store.get_match(slot.match_id)
    reveal = [dict(e) for e in match.reveal]
    reveal[1]["deck"] = list(reversed(reveal[1]["deck"]))
    with store.db.tx() as db:  # an organiser editing the database afterwards
        db.execute("UPDATE matches SET reveal = ? WHERE id = ?",
                   (__import__("json").dumps(reveal), match.id))
    from arena.tournament.verify import verify_tournament

    report = verify_tournament(store, tid)
    assert not report.ok
    assert any(match.id in p and "not derived from the key" in p for p in report.problems)
    assert any(match.id in p and "commitment" in p for p in report.problems)
    store.close()


def test_verify_refuses_a_tournament_that_is_not_over(played, tmp_path):
    store, tid = copy_of(played, tmp_path)
    store.set_tournament_status(tid, TournamentStatus.RUNNING)
    from arena.tournament.verify import verify_tournament

    report = verify_tournament(store, tid)
    assert not report.ok and "not finished" in report.problems[0]
    store.close()


async def test_a_ladder_match_deals_from_its_own_key_and_verifies(tmp_path):
    from arena.server.server import PlayerSpec
    from tests.tournament_run.helpers import new_server

    store = SqliteStore(tmp_path / "l.db")
    server = new_server(store)
    await server.start()
    try:
        outcome = await server.play_match([PlayerSpec(f"house-random-{i}", house="random")
                                           for i in range(5)])
    finally:
        await server.stop()
    assert outcome.result is not None
    from arena.tournament.verify import verify_match

    report = verify_match(store, outcome.match_id)
    assert report.ok, report.problems
    assert report.deals == len(store.get_match(outcome.match_id).reveal)
    store.close()
