"""A real Go bot, built with the ``go`` preset, starts and plays under both
memory limits; a Go program past its memory is stopped; a Go build never
reaches a network.

Go's runtime reserves hundreds of MiB of address space at start: the
sandbox must limit memory in a way it survives, with cgroups (this machine's)
and without (``RLIMIT_DATA``). The bot (``go_bot/``, standard library only)
speaks JSON Lines and answers every request with its first legal answer.
"""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from arena.hosting.builder import submit_and_build
from arena.hosting.cgroups import CgroupKind, prepare_parent
from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.presets import go_build_env
from arena.hosting.sandbox import Sandbox, SandboxLimits, SandboxSpec
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import Arena, needs_sandbox
from tests.hosting.test_build_network import Listener

pytestmark = needs_sandbox

GO_BOT = Path(__file__).with_name("go_bot")
LIMIT_MIB = SandboxLimits().memory_bytes >> 20  # 512: what a hosted run may use
TOO_MUCH_MIB = LIMIT_MIB + 256


def go_upload(manifest: str | None = None, extra: dict[str, str] | None = None,
              *, with_bot: bool = True) -> bytes:
    files = {p.name: p.read_text() for p in GO_BOT.iterdir() if with_bot and p.is_file()}
    if manifest is not None:
        files["arena-bot.toml"] = manifest
    files.update(extra or {})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"gobot/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture(params=["cgroups", "rlimit_data"])
def memory_mode(request: pytest.FixtureRequest) -> str:
    """Each test runs with the machine's cgroups and again without any, where
    the sandbox limits memory with RLIMIT_DATA."""
    if request.param == "cgroups":
        if prepare_parent(1.0).kind is CgroupKind.NONE:
            pytest.skip("this machine gives the arena no cgroups")
    else:
        request.getfixturevalue("no_cgroups")
        assert prepare_parent(1.0).kind is CgroupKind.NONE
    return str(request.param)


@pytest.fixture(scope="module")
def go_binary(go_toolchain: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go bot built here once, as the preset builds it (offline, static)."""
    out = tmp_path_factory.mktemp("gobin")
    env = {**go_build_env(GO_BOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(out), "GOCACHE": str(out / "cache"), "GOPATH": str(out / "go"),
           "GOTMPDIR": str(out)}
    subprocess.run([go_toolchain, "build", "-trimpath", "-o", str(out / "bot"), "."],
                   cwd=GO_BOT, env=env, check=True, timeout=300)
    return out / "bot"


async def test_a_go_bot_builds_starts_validates_and_plays_a_ladder_match(
        arena: Arena, go_toolchain: str, memory_mode: str) -> None:
    version = await submit_and_build(arena.versions, "gobot", go_upload(), "gobot.tar.gz")
    log = arena.versions.build_log("gobot", 1)
    assert version.status is BuildStatus.READY, log
    assert version.lang == "go" and version.run == ["./bot"]
    assert "GOPROXY=off" in log and "CGO_ENABLED=0" in log and "go build" in log, log
    await arena.validate("gobot")  # its validation match, against house bots
    ladder = Ladder(arena.server, arena.hosted, settings=LadderSettings(claim_timeout_s=30))
    task = ladder.start_one()
    assert task is not None
    match_id = await asyncio.wait_for(task, 240)
    assert match_id is not None
    match = arena.store.get_match(match_id)
    assert match.result is not None
    seat = match.players.index("gobot")
    faults = match.faults[seat]
    assert faults.timeouts == faults.illegal == faults.disconnects == 0 and not faults.autopilot
    stderr = (arena.versions.stderr("gobot", 1, match_id) or b"").decode()
    assert "hello sent" in stderr and "answers" in stderr, stderr


async def run_binary(binary: Path, app: Path, args: list[str]) -> tuple[int, str]:
    """The binary at /bot/bot in a play sandbox, with nothing to connect to."""
    app.mkdir()
    (app / "bot").write_bytes(binary.read_bytes())
    (app / "bot").chmod(0o755)
    log = app.parent / "out.log"
    with open(log, "wb") as out:
        sandbox = Sandbox(SandboxSpec(command=["/bot/bot", *args], app_dir=app),
                          stderr=out.fileno())
        await sandbox.start()
    try:
        code = await sandbox.wait(120)
    finally:
        await sandbox.stop()
    return code, log.read_text(errors="replace")


async def test_the_go_runtime_fills_memory_up_to_the_limit(
        go_binary: Path, tmp_path: Path, memory_mode: str) -> None:
    code, out = await run_binary(go_binary, tmp_path / "app", ["-eat-mib", str(LIMIT_MIB // 2)])
    assert f"ate {LIMIT_MIB // 2} MiB" in out, out
    assert "cannot connect" in out, out  # then went on, found no arena, and said so


async def test_a_go_program_past_its_memory_limit_is_stopped(
        go_binary: Path, tmp_path: Path, memory_mode: str) -> None:
    code, out = await run_binary(go_binary, tmp_path / "app", ["-eat-mib", str(TOO_MUCH_MIB)])
    assert code != 0 and f"ate {TOO_MUCH_MIB} MiB" not in out, out
    if memory_mode == "rlimit_data":  # the runtime is refused memory and says so
        assert "out of memory" in out, out


async def test_a_go_version_that_cannot_start_under_its_limit_is_failed(
        arena: Arena, go_toolchain: str, memory_mode: str) -> None:
    manifest = f'lang = "go"\nrun = "./bot -eat-mib {TOO_MUCH_MIB}"\n'
    version = await submit_and_build(arena.versions, "gohog", go_upload(manifest), "g.tar.gz")
    assert version.status is BuildStatus.FAILED
    assert "did not start" in (version.reason or ""), version.reason
    assert f"ate {TOO_MUCH_MIB} MiB" not in arena.versions.build_log("gohog", 1)


REQUIRES_A_MODULE = "module example.org/needy\n\ngo 1.19\n\nrequire example.org/lib v1.0.0\n"
USES_THE_MODULE = ('package main\n\nimport "example.org/lib"\n\n'
                   'func main() { lib.Hello() }\n')


async def test_a_go_module_with_requirements_and_no_vendor_folder_fails_saying_why(
        arena: Arena, go_toolchain: str) -> None:
    data = go_upload(extra={"go.mod": REQUIRES_A_MODULE, "main.go": USES_THE_MODULE},
                     with_bot=False)
    version = await submit_and_build(arena.versions, "needy", data, "needy.tar.gz")
    assert version.status is BuildStatus.FAILED
    assert "vendor" in (version.reason or "") and "no network" in (version.reason or "")


async def test_a_go_build_that_downloads_modules_reaches_no_network(
        arena: Arena, go_toolchain: str) -> None:
    async with Listener() as listener:
        # The author's own build asks a module proxy on the machine's
        # loopback, then the public one: neither is reachable from a build.
        manifest = (f'lang = "go"\nbuild = "GOPROXY=http://127.0.0.1:{listener.port} '
                    'go mod download; GOPROXY=https://proxy.golang.org GOFLAGS=-mod=mod '
                    'go build -o bot ."\n')
        data = go_upload(manifest, {"go.mod": REQUIRES_A_MODULE, "main.go": USES_THE_MODULE},
                         with_bot=False)
        version = await submit_and_build(arena.versions, "fetcher", data, "f.tar.gz")
        await asyncio.sleep(0.2)
    assert listener.reached == 0
    assert version.status is BuildStatus.FAILED
    assert "exited with code" in (version.reason or "")
    log = arena.versions.build_log("fetcher", 1)
    assert f"dial tcp 127.0.0.1:{listener.port}: connect: connection refused" in log, log
    assert "proxy.golang.org: no suitable address found" in log, log


VENDORED_LIB = ('package lib\n\nimport (\n\t"fmt"\n\t"net"\n\t"os"\n)\n\n'
                "// Hello connects and says hello, then waits.\n"
                "func Hello() {\n"
                '\tconn, err := net.Dial("tcp", net.JoinHostPort(os.Getenv("ARENA_HOST"), '
                'os.Getenv("ARENA_PORT")))\n'
                "\tif err != nil {\n\t\tos.Exit(1)\n\t}\n"
                '\tfmt.Fprintf(conn, "{\\"type\\":\\"hello\\",\\"protocol\\":1,\\"token\\":%q}\\n", '
                'os.Getenv("ARENA_TOKEN"))\n'
                "\tselect {}\n}\n")


async def test_a_go_module_with_its_vendor_folder_builds_offline(
        arena: Arena, go_toolchain: str) -> None:
    modules = "# example.org/lib v1.0.0\n## explicit\nexample.org/lib\n"
    data = go_upload(extra={"go.mod": REQUIRES_A_MODULE, "main.go": USES_THE_MODULE,
                            "vendor/modules.txt": modules,
                            "vendor/example.org/lib/lib.go": VENDORED_LIB}, with_bot=False)
    version = await submit_and_build(arena.versions, "vendored", data, "v.tar.gz")
    log = arena.versions.build_log("vendored", 1)
    assert version.status is BuildStatus.READY, log
    assert "GOFLAGS=-mod=vendor" in log, log
