"""What a sandbox is given of the machine's files, read off the bubblewrap
command line (no sandbox started): an /etc of its own, the interpreter at a
neutral path."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

from arena.hosting import rootfs
from arena.hosting.errors import SandboxError
from arena.hosting.rootfs import PYTHON_PREFIX, etc_files, python_runtime
from arena.hosting.sandbox import SandboxSpec, bwrap_argv, python_mounts

pytestmark = pytest.mark.skipif(not any(os.access(os.path.join(d, "bwrap"), os.X_OK)
                                        for d in os.get_exec_path()),
                                reason="bwrap_argv names bubblewrap's path")


@pytest.fixture(autouse=True)
def fresh_runtime() -> Iterator[None]:
    python_runtime.cache_clear()
    yield
    python_runtime.cache_clear()


def binds(argv: list[str]) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, arg in enumerate(argv)
            if arg in ("--ro-bind", "--bind")]


def test_the_hosts_etc_is_never_bound_whole(tmp_path: Path) -> None:
    argv = bwrap_argv(SandboxSpec(command=["true"], app_dir=tmp_path, mounts=python_mounts()),
                      61000, data_fds={path: 10 + i for i, path in enumerate(etc_files(61000))})
    targets = [target for _, target in binds(argv)]
    assert "/etc" not in targets
    assert all(not t.startswith("/etc/") or t in {
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
        "/etc/ssl/openssl.cnf", "/etc/localtime"} or t.startswith("/etc/java-")
        for t in targets), targets
    written = [argv[i + 2] for i, arg in enumerate(argv) if arg == "--ro-bind-data"]
    assert sorted(written) == ["/etc/group", "/etc/hosts", "/etc/nsswitch.conf", "/etc/passwd"]


def test_the_accounts_are_root_and_the_runs_own_user_id() -> None:
    files = etc_files(61234)
    assert files["/etc/passwd"].decode().splitlines() == [
        "root:x:0:0:root:/:/usr/sbin/nologin", "bot:x:61234:61234:hosted bot:/tmp:/bin/sh"]
    assert files["/etc/group"].decode().splitlines() == ["root:x:0:", "bot:x:61234:"]


def test_an_interpreter_outside_usr_is_mounted_at_arena_python() -> None:
    if os.path.realpath(sys.base_prefix).startswith("/usr"):
        pytest.skip("the arena runs on the system's Python here")
    runtime = python_runtime()
    assert runtime.executable.startswith(PYTHON_PREFIX + "/bin/python3")
    mounts = {m.target: m.source for m in runtime.mounts}
    assert mounts[PYTHON_PREFIX] == Path(os.path.realpath(sys.base_prefix))
    # Only the SDK and its packages, never the virtualenv's site-packages.
    assert sorted(t for t in mounts if t != PYTHON_PREFIX) == [
        "/arena/lib/msgpack", "/arena/lib/msgspec", "/arena/lib/protocol", "/arena/lib/structlog"]
    assert all(value.startswith(PYTHON_PREFIX) for _, value in runtime.env)


def test_the_systems_own_python_keeps_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.path.exists(f"/usr/bin/{version}"):
        pytest.skip(f"no /usr/bin/{version} on this machine")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    runtime = python_runtime()
    assert runtime.executable == f"/usr/bin/{version}"
    assert PYTHON_PREFIX not in {m.target for m in runtime.mounts} and runtime.env == ()


def test_a_missing_sdk_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rootfs, "SDK_PACKAGES", ("protocol", "no_such_package_here"))
    with pytest.raises(SandboxError, match="no_such_package_here"):
        python_runtime()


def test_mounted_folders_are_overlays_and_mounted_files_are_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.hosting import sandbox, stage
    from arena.hosting.sandbox import Mount

    monkeypatch.setattr(stage, "overlay_available", lambda: True)
    (tmp_path / "lib").mkdir()
    (tmp_path / "relay.py").write_text("print('relay')\n")
    spec = SandboxSpec(command=["true"], app_dir=tmp_path / "app",
                       mounts=[Mount(tmp_path / "lib", "/arena/lib/x"),
                               Mount(tmp_path / "relay.py", "/arena/relay.py"),
                               Mount(Path("/usr/share"), "/usr/share"),  # same path inside
                               Mount(tmp_path / "out", "/out", writable=True)],
                       socket=tmp_path / "run.sock")
    staged, files = sandbox._hidden_sources(spec)
    assert [(s.target, s.source) for s in staged] == [("/bot", tmp_path / "app"),
                                                       ("/arena/lib/x", tmp_path / "lib")]
    assert all(s.path.startswith(stage.STAGE_ROOT + "/") for s in staged)
    assert files == {"/arena/relay.py": b"print('relay')\n"}
    argv = bwrap_argv(spec, 61000, data_fds={"/arena/relay.py": 7},
                      staged={s.target: s.path for s in staged}, socket_fd=9)
    # Only the writable folder (a build's own tmpfs) and /usr keep their paths.
    named = [arg for arg in argv if str(tmp_path) in arg]
    assert named == [str(tmp_path / "out")], named
    assert argv[argv.index("ARENA_SOCKET") + 1] == "/proc/self/fd/9"


def test_without_overlayfs_folders_are_bound_as_they_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.hosting import sandbox, stage

    monkeypatch.setattr(stage, "overlay_available", lambda: False)
    staged, _ = sandbox._hidden_sources(SandboxSpec(command=["true"], app_dir=tmp_path))
    assert staged == []
