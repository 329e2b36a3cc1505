"""Where local bots' output goes when the store has no folder of its own.

A tournament on an in-memory store (``arena match`` by default) keeps its
bots' logs in a temporary folder, which ``arena logs`` cannot find (there
is no database beside it): the runner removes it when the run ends, unless
a bot crashed, whose log is what its author needs (the crash is logged with
the folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from arena.storage.sqlite import SqliteStore
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentRunner, create_or_load

from .helpers import new_server, play, sample_entrant, write_config

CRASHER = ("import os\n"
           "from protocol.sdk import run_bot\n"
           "count = 0\n"
           "def play(phase, legal, state):\n"
           "    global count\n"
           "    count += 1\n"
           "    if count == 20:\n"
           "        os._exit(3)\n"
           "    return legal[0]\n"
           "run_bot(play)\n")


async def play_in_memory(config_path: Path) -> tuple[bool, Path]:
    store = SqliteStore(":memory:")
    config = load_config(config_path)
    record, _ = create_or_load(store, config)
    server = new_server(store)
    await server.start()
    try:
        runner = TournamentRunner(server, config, record)
        complete = await runner.run()
    finally:
        await server.stop()
        store.close()
    return complete, runner.log_dir


def left_in(folder: Path) -> list[Path]:
    return sorted(folder.glob("arena-bot-logs-*"))


async def test_an_in_memory_tournament_leaves_no_log_folder_behind(tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    path = write_config(tmp_path, sample_entrant("steady"), extra="duplicate = false")
    complete, log_dir = await play_in_memory(path)
    assert complete
    assert log_dir.parent == temp  # the logs were written there while it played
    assert left_in(temp) == []


async def test_a_crashed_bots_log_is_kept(tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    crasher = tmp_path / "crasher.py"
    crasher.write_text(CRASHER)
    path = write_config(tmp_path, sample_entrant("steady")
                        + f'[[entrant]]\nname = "crasher"\ncommand = ["python", "{crasher}"]\n',
                        extra="duplicate = false")
    complete, log_dir = await play_in_memory(path)
    assert complete
    assert left_in(temp) == [log_dir]
    assert list((log_dir / "crasher").glob("*.log"))


async def test_a_file_stores_logs_stay_beside_it(tmp_path):
    path = write_config(tmp_path, sample_entrant("steady"), extra="duplicate = false")
    store, _, complete = await play(path, tmp_path / "a.db")
    store.close()
    assert complete
    assert list((tmp_path / "bot-logs" / "steady").glob("*.log"))


def test_only_an_in_memory_store_counts_as_gone_with_the_process(tmp_path):
    from arena.storage.deal_keys import store_directory, store_in_memory

    class ServerStore:  # a database server's store: no path of its own
        pass

    memory, on_disk = SqliteStore(":memory:"), SqliteStore(tmp_path / "a.db")
    try:
        assert store_in_memory(memory) and store_directory(memory) is None
        assert not store_in_memory(on_disk) and store_directory(on_disk) == tmp_path
        assert not store_in_memory(ServerStore()) and store_directory(ServerStore()) is None
    finally:
        memory.close()
        on_disk.close()
