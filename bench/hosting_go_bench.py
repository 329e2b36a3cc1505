"""A hosted Go bot's costs, with the machine's cgroups and without (RLIMIT_DATA).

For each memory mode, ``--runs`` times: the build of the test Go bot
(``tests/hosting/go_bot``) with the ``go`` preset in the sandbox (the whole
build: unpack, ``go build`` from an empty cache, copy out, start check), the
start check alone (started in the play sandbox until its hello), and the
memory of the bot idle in the lobby: PSS of the Go process alone and of the
whole sandbox (bubblewrap, the relay, the bot). Medians are printed.

Needs root, bubblewrap and Go. ``python bench/hosting_go_bench.py [--runs N]``
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import arena.hosting.cgroups as cgroups  # noqa: E402
from arena.hosting.builder import submit_and_build  # noqa: E402
from arena.hosting.hosted import HostedBots  # noqa: E402
from arena.hosting.start_check import check_start  # noqa: E402
from arena.hosting.versions import BuildStatus, VersionStore  # noqa: E402
from arena.logs import configure_logging  # noqa: E402
from arena.server.config import ServerConfig  # noqa: E402
from arena.server.server import ArenaServer  # noqa: E402
from arena.storage.sqlite import SqliteStore  # noqa: E402
from bench.hosting_bench import pss_kib, tree, wait_connected  # noqa: E402

GO_BOT = ROOT / "tests" / "hosting" / "go_bot"


def upload() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(GO_BOT.iterdir()):
            archive.add(path, arcname=f"gobot/{path.name}")
    return buffer.getvalue()


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


async def measure(runs: int, tmp: Path) -> dict[str, float]:
    db = tmp / "arena.db"
    store = SqliteStore(str(db))
    server = ArenaServer(ServerConfig(host="127.0.0.1", port=0, http_port=None, db=str(db),
                                      house_wait_s=None, matchmaking=False), store)
    await server.start()
    sockets = tmp / "sockets"
    sockets.mkdir()
    versions = VersionStore(store, tmp / "hosted")
    hosted = HostedBots(versions, sockets, server.start_unix, server.local_tokens)
    builds, checks, ready, pss_bot, pss_all = [], [], [], [], []
    for run in range(runs):
        name = f"go{run}"
        started = time.perf_counter()
        version = await submit_and_build(versions, name, upload(), "gobot.tar.gz")
        builds.append(time.perf_counter() - started)
        assert version.status is BuildStatus.READY, versions.build_log(name, version.version)
        app = versions.local_dir(version) / "app"
        started = time.perf_counter()
        check = await check_start(version, app)
        checks.append(time.perf_counter() - started)
        assert check.said_hello, check.reason
        started = time.perf_counter()
        running = await hosted.start(name)
        await wait_connected(server, name)
        ready.append(time.perf_counter() - started)
        await asyncio.sleep(1.0)  # idle in the lobby
        pids = tree(running.sandbox.pid)  # type: ignore[arg-type]
        pss_bot.append(pss_kib([p for p in pids if comm(p) == "bot"]))
        pss_all.append(pss_kib(pids))
        await hosted.stop(name)
    await hosted.stop_all()
    await server.stop()
    store.close()
    return {"build_s": statistics.median(builds), "check_ms": statistics.median(checks) * 1000,
            "ready_ms": statistics.median(ready) * 1000,
            "pss_bot_mib": statistics.median(pss_bot) / 1024,
            "pss_all_mib": statistics.median(pss_all) / 1024}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    configure_logging("warning")
    results = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "cg").mkdir()
        results["cgroups"] = await measure(args.runs, tmp / "cg")
        blocked = tmp / "no-cgroups"
        blocked.write_text("")  # a file: no cgroup can be made under it
        cgroups.CGROUP_ROOT = blocked
        (tmp / "rl").mkdir()
        results["rlimit_data"] = await measure(args.runs, tmp / "rl")
    print(f"{'mode':12} {'build s':>8} {'check ms':>9} {'ready ms':>9} {'bot PSS MiB':>12} "
          f"{'sandbox PSS MiB':>16}")
    for mode, r in results.items():
        print(f"{mode:12} {r['build_s']:8.1f} {r['check_ms']:9.0f} {r['ready_ms']:9.0f} "
              f"{r['pss_bot_mib']:12.1f} {r['pss_all_mib']:16.1f}")


if __name__ == "__main__":
    asyncio.run(main())
