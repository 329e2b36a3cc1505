"""Open mode's names held in the store for one server start (epoch), on
SQLite and PostgreSQL: the first token's claim holds in its epoch, another
token's claim in that epoch is told who holds it, and a restart (a new
epoch) takes the name over."""

from __future__ import annotations

from arena.storage import open_store
from arena.storage.open_names import STARTED_BY_ARENA
from tests.storage.conftest import db_location  # noqa: F401 - fixtures


def test_the_first_claim_holds_for_its_epoch_and_a_new_epoch_takes_over(db_location):  # noqa: F811
    store = open_store(db_location)
    try:
        assert store.open_name_owner("twin", "e1") is None
        assert store.claim_open_name("twin", "hash-a", "e1") == "hash-a"
        assert store.claim_open_name("twin", "hash-b", "e1") == "hash-a"  # taken
        assert store.claim_open_name("twin", "hash-a", "e1") == "hash-a"  # its own again
        assert store.open_name_owner("twin", "e1") == "hash-a"
        assert store.open_name_owner("twin", "e2") is None  # not held by the new start
        assert store.claim_open_name("twin", "hash-b", "e2") == "hash-b"  # restarted
        assert store.claim_open_name("twin", "hash-a", "e2") == "hash-b"
        assert store.claim_open_name("other", "hash-a", "e2") == "hash-a"
    finally:
        store.close()


def test_a_name_the_arena_starts_a_bot_under_is_the_arenas_for_its_epoch(db_location):  # noqa: F811
    store = open_store(db_location)
    try:
        assert store.claim_open_name("mybot", "hash-a", "e1") == "hash-a"
        store.reserve_started_name("mybot", "e1")  # the arena's own bot takes it over
        assert store.open_name_owner("mybot", "e1") == STARTED_BY_ARENA
        assert store.claim_open_name("mybot", "hash-a", "e1") == STARTED_BY_ARENA
        assert store.claim_open_name("mybot", "hash-b", "e1") == STARTED_BY_ARENA
        store.reserve_started_name("mybot", "e1")  # its next run: still the arena's
        assert store.open_name_owner("mybot", "e1") == STARTED_BY_ARENA
        assert store.claim_open_name("mybot", "hash-b", "e2") == "hash-b"  # restarted
        store.reserve_started_name("fresh", "e2")
        assert store.claim_open_name("fresh", "hash-a", "e2") == STARTED_BY_ARENA
    finally:
        store.close()
