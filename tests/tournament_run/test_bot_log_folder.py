"""Where local bots' output goes when the store has no folder of its own.

A tournament on an in-memory store (``arena match`` by default) or on a
database server keeps its bots' logs in a temporary folder, which ``arena
logs`` cannot find (there is no database file beside it): the runner
removes it when the run ends -- finished, stopped midway or refused before
it began -- unless a bot crashed, whose log is what its author needs (the
crash is logged with the folder). Otherwise every run would leave one more
folder in the system's temporary directory."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentError, TournamentRunner, create_or_load
from arena.tournament.shared import QueueSettings, SharedTournamentRunner

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


SLOW = ("import time\n"
        "from protocol.sdk import run_bot\n"
        "def play(phase, legal, state):\n"
        "    time.sleep(0.05)  # still playing when the run is stopped\n"
        "    return legal[0]\n"
        "run_bot(play)\n")


async def play_in_memory(config_path: Path, location: str = ":memory:") -> tuple[bool, Path]:
    store = open_store(location)
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


async def test_an_in_memory_tournament_leaves_no_log_folder_behind(tmp_path, temp):
    path = write_config(tmp_path, sample_entrant("steady"), extra="duplicate = false")
    complete, log_dir = await play_in_memory(path)
    assert complete
    assert log_dir.parent == temp  # the logs were written there while it played
    assert left_in(temp) == []


async def test_a_crashed_bots_log_is_kept(tmp_path, temp):
    crasher = tmp_path / "crasher.py"
    crasher.write_text(CRASHER)
    path = write_config(tmp_path, sample_entrant("steady")
                        + f'[[entrant]]\nname = "crasher"\ncommand = ["python", "{crasher}"]\n',
                        extra="duplicate = false")
    complete, log_dir = await play_in_memory(path)
    assert complete
    assert left_in(temp) == [log_dir]
    assert list((log_dir / "crasher").glob("*.log"))


async def test_a_database_servers_node_leaves_no_log_folder_behind(tmp_path, temp, pg_url):
    path = write_config(tmp_path, sample_entrant("steady"), extra="duplicate = false")
    complete, log_dir = await play_in_memory(path, pg_url)
    assert complete
    assert log_dir.parent == temp
    assert left_in(temp) == []


async def _wait_for_a_match_log(temp: Path) -> None:
    deadline = time.monotonic() + 60
    while not list(temp.glob("arena-bot-logs-*/slow/2*.log")):
        assert time.monotonic() < deadline, "the slow bot never played a match"
        await asyncio.sleep(0.05)


@pytest.mark.timeout(90)
async def test_a_run_stopped_midway_leaves_no_log_folder_behind(tmp_path, temp):
    """Ctrl-C on ``arena tournament``, or ``arena serve`` stopping while it
    directs a tournament: the run is cancelled mid-match."""
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    path = write_config(tmp_path, f'[[entrant]]\nname = "slow"\ncommand = ["python", "{slow}"]\n',
                        extra="duplicate = false")
    store = SqliteStore(":memory:")
    config = load_config(path)
    record, _ = create_or_load(store, config)
    server = new_server(store)
    await server.start()
    try:
        run = asyncio.create_task(TournamentRunner(server, config, record).run())
        await _wait_for_a_match_log(temp)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    finally:
        await server.stop()
        store.close()
    assert left_in(temp) == []


def test_a_runner_refused_before_it_ran_leaves_no_log_folder_behind(tmp_path, temp):
    path = write_config(tmp_path, sample_entrant("steady"),
                        extra="duplicate = false\n[schedule]\nuntil_separated = true")
    store = SqliteStore(":memory:")
    try:
        config = load_config(path)
        record, _ = create_or_load(store, config)
        server = new_server(store)
        with pytest.raises(TournamentError, match="one node"):
            SharedTournamentRunner(server, config, record, queue=QueueSettings(node="n1"))
    finally:
        store.close()
    assert left_in(temp) == []


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
