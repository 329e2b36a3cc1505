"""What a bot can and cannot do inside its sandbox, one hostile act per test."""

from __future__ import annotations

import asyncio
import os
import socket
import textwrap
import time
from pathlib import Path

import pytest

from arena.hosting.sandbox import (Mount, Sandbox, SandboxLimits, SandboxSpec, python_mounts,
                                   sandbox_python)
from tests.hosting.conftest import needs_sandbox, run_in_sandbox

pytestmark = needs_sandbox


def probe(body: str) -> str:
    return textwrap.dedent(body)


async def test_the_bot_sees_only_its_own_loopback(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        import socket
        names = [line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]]
        print("interfaces", names)
        routes = open("/proc/net/route").readlines()[1:]
        print("routes", len(routes))
        # Only with no route at all is it safe to try: the kernel refuses at once.
        if not routes:
            s = socket.socket()
            try:
                s.connect(("192.0.2.1", 80))
                print("outside: connected")
            except OSError as exc:
                print("outside:", exc.errno)
    """))
    assert code == 0, out
    assert "interfaces ['lo']" in out
    assert "routes 0" in out
    assert "outside: 101" in out  # ENETUNREACH


async def test_the_arenas_http_port_is_not_reachable(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        code, out = await run_in_sandbox(tmp_path / "app", probe(f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2)
                print("reached")
            except OSError as exc:
                print("refused", exc.errno)
        """))
    finally:
        listener.close()
    assert "refused 111" in out, out


async def test_one_bot_cannot_reach_another(tmp_path: Path) -> None:
    server_app = tmp_path / "server"
    server_app.mkdir()
    (server_app / "probe.py").write_text(probe("""
        import socket, time
        s = socket.socket(); s.bind(("127.0.0.1", 9999)); s.listen(); print("listening", flush=True)
        time.sleep(30)
    """))

    other = Sandbox(SandboxSpec(command=[sandbox_python(), "/bot/probe.py"], app_dir=server_app,
                                mounts=python_mounts()))
    await other.start()
    try:
        await asyncio.sleep(0.5)
        code, out = await run_in_sandbox(tmp_path / "app", probe("""
            import socket
            try:
                socket.create_connection(("127.0.0.1", 9999), timeout=2); print("reached")
            except OSError as exc:
                print("refused", exc.errno)
        """))
    finally:
        await other.stop()
    assert "refused 111" in out, out


async def test_writes_outside_the_scratch_directory_fail(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        for path in ("/bot/x", "/usr/x", "/etc/x", "/x", "/arena/lib/x"):
            try:
                open(path, "w").write("x"); print("wrote", path)
            except OSError as exc:
                print("refused", path)
        open("/tmp/ok", "w").write("x"); print("scratch ok")
    """))
    assert "wrote" not in out, out
    assert "scratch ok" in out


async def test_the_scratch_directory_is_small(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        try:
            open("/tmp/big", "wb").write(b"x" * (8 << 20)); print("wrote 8 MiB")
        except OSError as exc:
            print("full", exc.errno)
    """), limits=SandboxLimits(tmp_bytes=1 << 20))
    assert "full 28" in out, out


async def test_the_arenas_database_and_other_bots_files_are_invisible(tmp_path: Path) -> None:
    database = tmp_path / "arena.db"
    database.write_text("secret standings")
    other_bot = tmp_path / "hosted" / "rival" / "v1" / "app"
    other_bot.mkdir(parents=True)
    (other_bot / "bot.py").write_text("secret strategy")
    code, out = await run_in_sandbox(tmp_path / "hosted" / "me" / "v1" / "app", probe(f"""
        import os
        for path in ({str(database)!r}, {str(other_bot / 'bot.py')!r}, "/root", "/proc/1/environ"):
            try:
                print("read", path, open(path).read()[:20] if os.path.isfile(path) else os.listdir(path))
            except OSError as exc:
                print("hidden", path, exc.errno)
    """))
    assert "secret" not in out, out
    assert out.count("hidden") >= 3, out


async def test_the_bot_runs_as_an_unprivileged_user(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        import os
        print("uid", os.getuid(), "caps", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")])
        try:
            os.setuid(0); print("became root")
        except PermissionError:
            print("no root")
    """))
    assert "no root" in out and "caps ['0000000000000000']" in out, out


async def test_a_fork_bomb_is_contained(tmp_path: Path) -> None:
    started = time.monotonic()
    boxes: list[Sandbox] = []
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        import os, time
        children = 0
        try:
            for _ in range(10_000):
                if os.fork() == 0:
                    time.sleep(30); os._exit(0)
                children += 1
        except OSError as exc:
            print("stopped at", children, "errno", exc.errno, flush=True)
        os._exit(0)
    """), limits=SandboxLimits(processes=32), started=boxes)
    assert "stopped at" in out, out
    assert int(out.split("stopped at")[1].split()[0]) < 40
    assert time.monotonic() - started < 15
    # The sleeping children died with the sandbox: nothing of its uid is left.
    assert not _sandbox_processes_left(boxes[0].uid)


async def test_memory_past_the_limit_is_refused(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        blocks = []
        try:
            for _ in range(64):
                blocks.append(bytearray(32 << 20))  # 2 GiB in all, touched
            print("allocated 2 GiB")
        except MemoryError:
            print("MemoryError")
    """), limits=SandboxLimits(memory_bytes=256 << 20))
    assert "allocated 2 GiB" not in out, out
    assert code != 0 or "MemoryError" in out


async def test_a_spinning_bot_is_killed_when_stopped(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "probe.py").write_text("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass\n")

    sandbox = Sandbox(SandboxSpec(command=[sandbox_python(), "/bot/probe.py"], app_dir=app,
                                  mounts=python_mounts(), limits=SandboxLimits(cpu_share=0.5)))
    await sandbox.start()
    await asyncio.sleep(1.0)
    started = time.monotonic()
    await sandbox.stop()
    assert time.monotonic() - started < 5
    assert sandbox.process is not None and sandbox.process.returncode is not None
    assert not _sandbox_processes_left(sandbox.uid)


def _sandbox_processes_left(uid_wanted: int) -> list[int]:
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
        except OSError:
            continue
        if uid == uid_wanted:
            left.append(int(entry))
    return left
