"""Hosted-bot sandbox costs: start time and memory of an idle hosted bot.

Prints, side by side with a baseline measured in the same run:

* sandbox start: time from asking for a sandboxed ``true`` to its exit,
  against the same command as a plain subprocess;
* hosted bot ready: time from starting the sandbox (relay + the Python
  sample bot) until its hello reaches the arena, against the same bot
  started as a local subprocess on TCP;
* memory of an idle hosted bot: resident memory (PSS) of every process of
  the sandbox, against the same bot as a plain subprocess.

Needs root and bubblewrap. ``python bench/hosting_bench.py [--runs N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.hosting.builder import submit_and_build  # noqa: E402
from arena.hosting.hosted import HostedBots  # noqa: E402
from arena.hosting.sandbox import Sandbox, SandboxSpec  # noqa: E402
from arena.hosting.versions import VersionStore  # noqa: E402
from arena.logs import configure_logging  # noqa: E402
from arena.server.config import ServerConfig  # noqa: E402
from arena.server.server import ArenaServer  # noqa: E402
from arena.storage.sqlite import SqliteStore  # noqa: E402

BOT = ROOT / "sample_bots" / "python_random" / "bot.py"


def pss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


async def time_true(runs: int, tmp: Path) -> tuple[float, float]:
    app = tmp / "empty"
    app.mkdir(exist_ok=True)
    sandboxed, plain = [], []
    for _ in range(runs):
        started = time.perf_counter()
        box = Sandbox(SandboxSpec(command=["/usr/bin/true"], app_dir=app))
        await box.start()
        await box.wait()
        await box.stop()
        sandboxed.append(time.perf_counter() - started)
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec("/usr/bin/true")
        await proc.wait()
        plain.append(time.perf_counter() - started)
    return statistics.median(sandboxed) * 1000, statistics.median(plain) * 1000


async def wait_connected(server: ArenaServer, name: str) -> None:
    while name not in server.lobby.idle_bots():
        await asyncio.sleep(0.002)


async def hosted_bot(runs: int, tmp: Path) -> dict[str, float]:
    db = tmp / "arena.db"
    store = SqliteStore(str(db))
    server = ArenaServer(ServerConfig(host="127.0.0.1", port=0, http_port=None, db=str(db),
                                      house_wait_s=None, matchmaking=False), store)
    await server.start()
    sockets = tmp / "sockets"
    sockets.mkdir()
    versions = VersionStore(store, tmp / "hosted")
    await submit_and_build(versions, "bench", BOT.read_bytes(), "bot.py")
    hosted = HostedBots(versions, sockets, server.start_unix, server.local_tokens)
    ready_sandboxed, ready_plain, pss_sandboxed, pss_plain = [], [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        run = await hosted.start("bench")
        await wait_connected(server, "bench")
        ready_sandboxed.append(time.perf_counter() - started)
        await asyncio.sleep(0.3)
        pss_sandboxed.append(pss_kib(tree(run.sandbox.pid)))
        await hosted.stop("bench")
        await asyncio.sleep(0.1)
        started = time.perf_counter()
        env = {**os.environ, "ARENA_HOST": "127.0.0.1", "ARENA_PORT": str(server.port),
               "ARENA_TOKEN": server.local_token("plain"), "ARENA_NAME": "plain"}
        proc = await asyncio.create_subprocess_exec(sys.executable, str(BOT), env=env)
        await wait_connected(server, "plain")
        ready_plain.append(time.perf_counter() - started)
        await asyncio.sleep(0.3)
        pss_plain.append(pss_kib(tree(proc.pid)))
        proc.kill()
        await proc.wait()
        await asyncio.sleep(0.1)
    await server.stop()
    store.close()
    return {"ready_sandboxed_ms": statistics.median(ready_sandboxed) * 1000,
            "ready_plain_ms": statistics.median(ready_plain) * 1000,
            "pss_sandboxed_mib": statistics.median(pss_sandboxed) / 1024,
            "pss_plain_mib": statistics.median(pss_plain) / 1024}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    configure_logging("warning")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        box_ms, plain_ms = await time_true(args.runs * 3, tmp)
        bot = await hosted_bot(args.runs, tmp)
    rows = [("sandbox start (true), ms", box_ms, plain_ms),
            ("hosted bot ready (hello received), ms", bot["ready_sandboxed_ms"], bot["ready_plain_ms"]),
            ("idle hosted bot memory (PSS), MiB", bot["pss_sandboxed_mib"], bot["pss_plain_mib"])]
    print(f"{'figure':42} {'sandboxed':>10} {'plain':>10} {'ratio':>7}")
    for label, ours, base in rows:
        print(f"{label:42} {ours:10.1f} {base:10.1f} {ours / base:7.2f}")


if __name__ == "__main__":
    asyncio.run(main())
