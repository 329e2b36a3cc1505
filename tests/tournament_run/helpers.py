"""Small tournaments played in-process on a real server (house bots and the
Python sample bots), on either store: a SQLite path or a PostgreSQL URL."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import ScheduledMatch, Store
from arena.storage.writer import StoreWriter
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentRunner, create_or_load

ROOT = Path(__file__).resolve().parents[2]


def sample_entrant(name: str, bot: str = "python_random") -> str:
    return (f'[[entrant]]\nname = "{name}"\n'
            f'command = ["python", "{ROOT / "sample_bots" / bot / "bot.py"}"]\n')


def write_config(folder: Path, entrants: str, *, seed: int = 7, extra: str = "",
                 name: str = "trust", decision_ms: int = 1000) -> Path:
    path = folder / "t.toml"
    path.write_text(f'name = "{name}"\nseed = {seed}\n{extra}\n[limits]\n'
                    f'decision_ms = {decision_ms}\n'
                    f'bank_ms = 0\n{entrants}')
    return path


def new_server(store: Store, **overrides: Any) -> ArenaServer:
    return ArenaServer(ServerConfig(**{"port": 0, "http_port": None, "matchmaking": False,
                                       **overrides}), store)


async def play(path: Path, db: str | Path, *, secret: bytes | None = None,
               server_overrides: dict[str, Any] | None = None) -> tuple[Store, str, bool]:
    """Play (or resume) the tournament of config ``path`` in the store at
    ``db`` (what ``--db`` takes); the store is left open for the test."""
    store = open_store(db)
    config = load_config(path)
    record, _ = (create_or_load(store, config, secret=secret) if secret is not None
                  else create_or_load(store, config))
    server = new_server(store, **(server_overrides or {}))
    await server.start()
    try:
        complete = await TournamentRunner(server, config, record).run()
    finally:
        await server.stop()
    return store, record.id, complete


def all_decks(store: Store, tid: str) -> dict[tuple[int, int, int], list[str]]:
    """(slot, round, hand) -> deck of every finished slot."""
    decks = {}
    for slot in store.get_schedule(tid):
        match = store.get_match(slot.match_id)
        for entry in match.reveal:
            decks[(slot.slot, entry["round"], entry["hand"])] = list(entry["deck"])
    return decks


def predicted_first_deck(seed_label: str) -> list[str]:
    """The attack of issue 9: the engine's own first deal with Mersenne
    Twister seeded by the public per-table label."""
    from arena.games.muushig.engine import MuushigEngine

    engine = MuushigEngine(None, random.Random(seed_label), None)
    engine.start()
    return list(engine.deals()[0].deck)


class Killed(BaseException):
    """Stands for SIGKILL: nothing after this point runs."""


async def play_until_killed(path: Path, db: str | Path, monkeypatch: pytest.MonkeyPatch, *,
                            finishes: int) -> None:
    """Play the tournament until the ``finishes``-th match's finish is
    stored, and die right there (the finish durable, nothing after it run)."""
    original = StoreWriter.finish_match
    finished = 0

    async def finish_then_die(self: StoreWriter, *args: Any, **kwargs: Any) -> Any:
        nonlocal finished
        await original(self, *args, **kwargs)
        finished += 1
        if finished == finishes:
            raise Killed

    with monkeypatch.context() as patched:
        patched.setattr(StoreWriter, "finish_match", finish_then_die)
        with pytest.raises(Killed):
            await play(path, db)


def stored_schedule(db: str | Path) -> list[ScheduledMatch]:
    """The schedule of the store's one tournament, as a killed run left it."""
    store = open_store(db)
    try:
        [record] = store.list_tournaments()
        return store.get_schedule(record.id)
    finally:
        store.close()


async def resume(path: Path, db: str | Path, before: list[ScheduledMatch]) -> tuple[Store, str]:
    """Play the killed tournament of ``before`` (its stored schedule) on: it
    completes as the same tournament, the slots stored before the kill
    seated and dealt as they were."""
    store, tid, complete = await play(path, db)
    assert complete and tid == before[0].tournament_id
    after = store.get_schedule(tid)
    assert [(s.players, s.seed) for s in after[:len(before)]] == \
        [(s.players, s.seed) for s in before]
    return store, tid
