"""Everything a hosted bot writes is bounded: its stderr, its build log, its
build's files; and nothing the arena does with them runs on the event loop."""

from __future__ import annotations

import asyncio
import io
import sys
import tarfile
import threading
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import pytest

from arena.app import Arena as App, http_port_of
from arena.auth import hash_token
from arena.hosting.builder import BuildLimits, build, submit, submit_and_build
from arena.hosting.logs import KEEP_STDERR, LOG_CAP_BYTES
from arena.hosting.versions import BuildStatus, VersionStore
from arena.server.config import ServerConfig
from arena.storage.sqlite import SqliteStore
from arena.web.hosting_api import Hosting
from tests.hosting.conftest import SAYS_HELLO, Arena, needs_sandbox, versions_at

pytestmark = needs_sandbox
MiB = 1 << 20


# What a command bot runs to pass the start check (see conftest.SAYS_HELLO).
HELLO = SAYS_HELLO + "import time\ntime.sleep(3600)\n"
RUN_HELLO = "python3 hello.py"


def command_bot(build: str | None, run: str, files: dict[str, str] | None = None) -> bytes:
    """A tar.gz with an arena-bot.toml (lang = "command") and some files."""
    manifest = 'lang = "command"\n' + (f"build = {build!r}\n" if build else "") + f"run = {run!r}\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in {"arena-bot.toml": manifest, "hello.py": HELLO, **(files or {})}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class LoopWatch:
    """Records file opens and ownership changes made on the event loop's thread
    (an audit hook: it sees every open() and chown, whoever calls them)."""

    hooked = False
    active: "LoopWatch | None" = None

    def __init__(self, under: Path) -> None:
        self.under = str(under)
        self.loop_thread = threading.get_ident()
        self.seen: list[tuple[str, str]] = []

    def __enter__(self) -> "LoopWatch":
        if not LoopWatch.hooked:
            sys.addaudithook(LoopWatch._hook)
            LoopWatch.hooked = True
        LoopWatch.active = self
        return self

    def __exit__(self, *exc: object) -> None:
        LoopWatch.active = None

    @staticmethod
    def _hook(event: str, args: tuple[Any, ...]) -> None:
        watch = LoopWatch.active
        if watch is None or threading.get_ident() != watch.loop_thread:
            return
        if event in ("open", "os.chown", "os.scandir", "os.listdir") and args \
                and str(args[0]).startswith(watch.under):
            watch.seen.append((event, str(args[0])))


async def test_a_bots_stderr_in_a_match_is_capped(arena: Arena) -> None:
    spam = SAYS_HELLO + "import sys, time\nline = 'x' * 1023 + '\\n'\nfor _ in range(8 * 1024):\n" \
           "    sys.stderr.write(line)\nsys.stderr.flush()\ntime.sleep(3600)\n"
    assert (await submit_and_build(arena.versions, "noisy", spam.encode(), "bot.py")).status \
        is BuildStatus.READY
    run = await arena.hosted.start("noisy")
    for _ in range(200):  # until the bot has written all 8 MiB (or been cut off)
        await asyncio.sleep(0.05)
        size = run.stderr_path.stat().st_size
        if size >= LOG_CAP_BYTES:
            break
    await asyncio.sleep(0.5)
    await arena.hosted.stop("noisy", "m-1")
    kept = arena.versions.stderr("noisy", 1, "m-1") or b""
    assert LOG_CAP_BYTES <= len(kept) <= LOG_CAP_BYTES + 256
    assert kept.rstrip().endswith(b"bytes; the rest was not kept]")


async def test_a_build_log_is_capped(arena: Arena) -> None:
    data = command_bot("head -c 8388608 /dev/zero | tr '\\0' x; echo done", RUN_HELLO)
    version = await submit_and_build(arena.versions, "chatty", data, "bot.tar.gz")
    assert version.status is BuildStatus.READY
    kept = arena.versions.build_log_bytes("chatty", 1) or b""
    assert 8 << 10 < len(kept) <= LOG_CAP_BYTES + 1024


def test_only_the_newest_stderr_logs_of_a_version_are_kept(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    version = submit(versions, "bot", b"print(1)\n", "bot.py")
    for i in range(KEEP_STDERR + 2):
        versions.keep_stderr("bot", version.version, f"m-{i}", b"%d" % i)
    assert versions.stderr("bot", 1, "m-0") is None and versions.stderr("bot", 1, "m-1") is None
    assert versions.stderr("bot", 1, "m-2") == b"2"
    assert versions.stderr("bot", 1, f"m-{KEEP_STDERR + 1}") == b"%d" % (KEEP_STDERR + 1)


async def test_a_build_cannot_fill_the_disk(arena: Arena) -> None:
    limits = BuildLimits(disk_bytes=64 * MiB, files=5000)
    data = command_bot("head -c 100000000 /dev/zero > big", "true")
    version = submit(arena.versions, "filler", data, "bot.tar.gz")
    version = await build(arena.versions, version, limits)
    assert version.status is BuildStatus.FAILED
    assert "64 MiB" in (version.reason or "")
    app = arena.versions.local_dir(version) / "app"
    assert sum(p.stat().st_size for p in app.rglob("*") if p.is_file()) < MiB


async def test_a_build_cannot_make_unbounded_files(arena: Arena) -> None:
    limits = BuildLimits(disk_bytes=64 * MiB, files=5000)
    data = command_bot("i=0; while [ $i -lt 6000 ]; do : > f$i; i=$((i+1)); done", "true")
    version = await build(arena.versions, submit(arena.versions, "many", data, "b.tgz"), limits)
    assert version.status is BuildStatus.FAILED
    assert "5,000 files" in (version.reason or "")


async def test_what_a_build_leaves_is_plain_files_owned_by_the_arena(arena: Arena) -> None:
    data = command_bot("chmod 777 .; ln -s /etc/passwd leak; ln -s run.sh ok; mkfifo pipe; "
                       "chmod 777 run.sh", "./run.sh", {"run.sh": "#!/bin/sh\nexec python3 hello.py\n"})
    version = await submit_and_build(arena.versions, "messy", data, "b.tgz")
    assert version.status is BuildStatus.READY, arena.versions.build_log("messy", 1)
    app = arena.versions.local_dir(version) / "app"
    names = sorted(p.name for p in app.iterdir())
    assert names == ["arena-bot.toml", "hello.py", "ok", "run.sh"]
    assert (app / "ok").is_symlink() and (app / "ok").resolve() == (app / "run.sh").resolve()
    assert all(p.lstat().st_uid == 0 for p in [app, *app.iterdir()])
    assert (app.stat().st_mode & 0o777) == 0o755 and ((app / "run.sh").stat().st_mode & 0o777) == 0o755


async def test_a_build_walks_no_files_on_the_event_loop(arena: Arena) -> None:
    files = {f"d/f{i}.txt": "x" for i in range(300)}
    data = command_bot("touch built", RUN_HELLO, files)
    version = submit(arena.versions, "walker", data, "bot.tar.gz")
    with LoopWatch(arena.versions.root) as watch:
        version = await build(arena.versions, version)
    assert version.status is BuildStatus.READY
    assert [e for e in watch.seen if e[0] in ("os.chown", "os.scandir", "os.listdir")] == []


@pytest.fixture
async def web(tmp_path: Path) -> AsyncIterator[tuple[str, VersionStore]]:
    db = tmp_path / "arena.db"
    store = SqliteStore(str(db))
    store.add_bot("owner-bot", hash_token("secret-token"))
    hosting = Hosting(VersionStore(store, tmp_path / "hosted"))
    server = App(ServerConfig(host="127.0.0.1", port=0, http_port=0, db=str(db),
                              house_wait_s=None), store, hosting=hosting).server
    await server.start()
    try:
        yield f"http://127.0.0.1:{http_port_of(server)}", hosting.versions
    finally:
        await server.stop()
        store.close()


async def test_logs_are_served_off_the_loop_with_a_tail_and_ranges(web) -> None:
    base, versions = web
    version = submit(versions, "owner-bot", b"print(1)\n", "bot.py")
    directory = versions.root.parent
    body = b"".join(b"line %06d\n" % i for i in range(100_000))  # 1.2 MB, from before the cap
    versions.keep_build_log(version, body)
    versions.keep_stderr("owner-bot", 1, "m-1", body)
    owner = {"Authorization": "Bearer secret-token"}
    async with aiohttp.ClientSession() as http:
        for path in ("log", "stderr/m-1"):
            url = f"{base}/api/bots/owner-bot/versions/1/{path}"
            with LoopWatch(directory) as watch:
                async with http.get(url, headers=owner) as response:
                    assert response.status == 200 and await response.read() == body
                async with http.get(url, params={"tail": "24"}, headers=owner) as response:
                    assert response.status == 200
                    assert await response.read() == b"line 099998\nline 099999\n"
                async with http.get(url, headers={**owner, "Range": "bytes=12-22"}) as response:
                    assert response.status == 206 and await response.read() == b"line 000001"
            assert watch.seen == [], f"{path} read on the event loop: {watch.seen}"
            async with http.get(url, params={"tail": "x"}, headers=owner) as response:
                assert response.status == 400
