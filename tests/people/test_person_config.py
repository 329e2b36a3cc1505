"""A person's clock is the operator's to set: ``arena serve
--person-decision-ms/--person-bank-ms`` reach the people's tables."""

from __future__ import annotations

from pathlib import Path

from arena.app import Arena
from arena.cli import _parser
from arena.cli_options import server_config
from arena.storage.sqlite import SqliteStore


def test_serve_options_set_a_persons_clock(tmp_path: Path) -> None:
    args = _parser().parse_args(["serve", "--db", str(tmp_path / "a.db"),
                                 "--person-decision-ms", "45000", "--person-bank-ms", "0"])
    config = server_config(args)
    store = SqliteStore(tmp_path / "a.db")
    try:
        arena = Arena(config, store)
        assert arena.people is not None
        limits = arena.people.settings.limits()
        assert (limits.decision_ms, limits.bank_ms) == (45_000, 0)
        assert config.decision_ms == 1000  # the bots' clock is apart
    finally:
        store.close()
