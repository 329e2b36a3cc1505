"""Open mode's names held in the store for one server start (epoch), on
SQLite and PostgreSQL: the first token's claim holds in its epoch, another
token's claim in that epoch is told who holds it, and a restart (a new
epoch) takes the name over."""

from __future__ import annotations

from arena.storage import open_store
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
