"""A server killed with SIGKILL mid-match loses nothing that had finished."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from protocol.sdk.client import BotClient


async def start_server(db: Path) -> tuple[asyncio.subprocess.Process, int]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.cli", "serve", "--open", "--port", "0", "--no-http",
        "--db", str(db), "--house-wait", "0", "--decision-ms", "2000", "--bank-ms", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
    assert "bots connect to" in line, line
    port = int(line.split("bots connect to ")[1].split(",")[0].rsplit(":", 1)[1])
    return proc, port


async def slow_strategy(phase, legal, state):
    await asyncio.sleep(0.01)
    return legal[0]


async def wait_for(predicate, timeout: float = 60.0, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(every)
    raise AssertionError("condition not reached in time")


async def test_sigkill_mid_match_then_restart_keeps_finished_matches(tmp_path):
    db = tmp_path / "arena.db"
    proc, port = await start_server(db)
    client = BotClient("127.0.0.1", port, "tok", "survivor", slow_strategy, reconnect=False,
                       threaded=False)
    client_task = asyncio.create_task(client.run())
    reader = SqliteStore(db)
    try:
        def two_finished_and_one_running():
            finished = reader.list_matches(status=MatchStatus.FINISHED)
            running = reader.list_matches(status=MatchStatus.RUNNING)
            return (finished, running) if len(finished) >= 2 and running else None

        finished, running = await wait_for(two_finished_and_one_running)
        before = {m.id: (reader.get_match(m.id), len(reader.get_events(m.id))) for m in finished}
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
    finally:
        client_task.cancel()
        await asyncio.gather(client_task, return_exceptions=True)
        if proc.returncode is None:  # the wait failed: no server outlives the test
            proc.kill()
            await proc.wait()

    proc2, _ = await start_server(db)
    try:
        after = SqliteStore(db)
        for match_id, (record, n_events) in before.items():
            again = after.get_match(match_id)
            assert again.status is MatchStatus.FINISHED
            assert again.result == record.result
            assert again.reveal == record.reveal
            assert len(after.get_events(match_id)) == n_events
        for match in running:
            assert after.get_match(match.id).status is MatchStatus.ABORTED
        assert not after.list_matches(status=MatchStatus.RUNNING)
        after.close()
    finally:
        proc2.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc2.wait(), 20) == 0
        reader.close()
