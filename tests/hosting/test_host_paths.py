"""A hosted bot learns nothing of the host's layout: not the accounts and
files of the host's /etc, not where the arena, its interpreter or the bot's
own files live on the host. The bots here look, as a curious stranger would:
they list and read /etc, read every command line they can see (their own,
their parent's, the sandbox's first process), resolve the interpreter and
print what Python says of its own install, and read the mount tables
(``/proc/self/mountinfo``, the first process's, ``/proc/self/mounts``),
where the kernel names the source folder of every mount."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import arena
import pytest
from arena.hosting.builder import submit_and_build
from arena.hosting.stage import STAGE_ROOT
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import Arena, needs_sandbox

pytestmark = needs_sandbox

# What a runtime needs of /etc, and nothing more (see arena/hosting/sandbox.py).
ALLOWED_ETC = {"alternatives", "group", "hosts", "java-17-openjdk", "ld.so.cache", "ld.so.conf",
               "ld.so.conf.d", "localtime", "nsswitch.conf", "passwd", "ssl"}

PROBE = r'''
import os, sys
def show(label, value):
    print("PROBE", label, repr(value), file=sys.stderr, flush=True)
show("etc", sorted(os.listdir("/etc")))
for name in ("shadow", "gshadow", "sudoers", "hostname", "machine-id", "ssh", "passwd", "group"):
    path = "/etc/" + name
    try:
        show(path, open(path).read() if os.path.isfile(path) else os.listdir(path))
    except OSError as exc:
        show(path, "unreadable %d" % exc.errno)
show("executable", sys.executable)
show("realpath", os.path.realpath(sys.executable))
show("prefixes", (sys.prefix, sys.base_prefix, sys.exec_prefix))
show("path", sys.path)
show("environ", dict(os.environ))
show("cwd", os.getcwd())
for table in ("/proc/self/mountinfo", "/proc/1/mountinfo", "/proc/self/mounts", "/proc/self/maps"):
    try:
        show(table, open(table).read())
    except OSError as exc:
        show(table, "unreadable %d" % exc.errno)
for pid in sorted({"self", str(os.getppid()), "1", *[p for p in os.listdir("/proc") if p.isdigit()]}):
    try:
        show("cmdline " + pid, open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" "))
    except OSError as exc:
        show("cmdline " + pid, "unreadable %d" % exc.errno)
    try:
        show("exe " + pid, os.readlink("/proc/%s/exe" % pid))
    except OSError as exc:
        show("exe " + pid, "unreadable %d" % exc.errno)
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
        show("fds " + pid, [os.readlink("/proc/%s/fd/%s" % (pid, fd)) for fd in fds])
    except OSError as exc:
        show("fds " + pid, "unreadable %d" % exc.errno)
'''

BOT = (PROBE + "\nfrom protocol.sdk import run_bot\nrun_bot(lambda phase, legal, state: legal[0])\n").encode()


def host_paths(arena_: Arena) -> list[str]:
    """Paths of this host a sandboxed program must not be able to name: the
    interpreter's install and the virtualenv, the arena's source, the
    store's folder and its build cache, the run sockets' folder, the home
    directory."""
    return sorted({str(Path(sys.prefix)), os.path.realpath(sys.base_prefix),
                   os.path.realpath(sys.executable), str(Path(arena.__file__).resolve().parents[1]),
                   str(arena_.versions.root.resolve()), str(arena_.versions.root.resolve().parent),
                   str(arena_.hosted.socket_dir.resolve()), tempfile.gettempdir() + "/arena-",
                   str(Path.home()) + "/", "/root/", "/root'"})


def probed(text: str) -> dict[str, str]:
    """The probe's lines by label (``cmdline 1`` and ``exe 1`` have two words)."""
    found = {}
    for line in text.splitlines():
        if not line.startswith("PROBE "):
            continue
        words = 3 if line.startswith(("PROBE cmdline ", "PROBE exe ", "PROBE fds ")) else 2
        parts = line.split(" ", words)
        if len(parts) == words + 1:
            found[" ".join(parts[1:words])] = parts[words]
    return found


def assert_no_host_paths(text: str, arena_: Arena) -> None:
    leaks = [path for path in host_paths(arena_) if path in text]
    assert not leaks, (leaks, text)


def assert_mount_tables_read(found: dict[str, str]) -> None:
    """The probe read the mount tables (runtimes read /proc: it stays) and
    its own memory map."""
    assert "python" in eval(found["/proc/self/maps"]), found["/proc/self/maps"]
    for table in ("/proc/self/mountinfo", "/proc/1/mountinfo", "/proc/self/mounts"):
        assert " /bot " in eval(found[table]), found[table]


def assert_minimal_etc(found: dict[str, str]) -> None:
    listed = set(eval(found["etc"]))  # a repr of a list of names
    assert listed <= ALLOWED_ETC, sorted(listed - ALLOWED_ETC)
    for secret in ("shadow", "gshadow", "sudoers", "hostname", "machine-id", "ssh"):
        assert "unreadable 2" in found[f"/etc/{secret}"], found[f"/etc/{secret}"]
    # The accounts are the sandbox's own: root and the bot, none of the host's.
    users = [line.split(":")[0] for line in eval(found["/etc/passwd"]).splitlines()]
    assert users == ["root", "bot"], users


async def test_a_playing_bot_sees_no_host_paths_and_only_a_minimal_etc(arena: Arena) -> None:
    version = await submit_and_build(arena.versions, "curious", BOT, "bot.py")
    assert version.status is BuildStatus.READY, arena.versions.build_log("curious", 1)
    outcome = await arena.play("curious")
    assert outcome.aborted is None
    # The run's stderr is kept in the store under its match.
    kept = arena.versions.stderr("curious", 1, outcome.match_id)
    assert kept is not None
    text = kept.decode()
    found = probed(text)
    assert "cmdline 1" in found and "executable" in found, text
    assert_mount_tables_read(found)
    assert_no_host_paths(text, arena)
    assert_minimal_etc(found)
    assert eval(found["executable"]).startswith("/arena/"), found["executable"]
    # The overlays were the sandbox's own: none is left in the host's namespace.
    assert STAGE_ROOT not in Path("/proc/self/mountinfo").read_text()


async def test_a_build_sees_no_host_paths_and_only_a_minimal_etc(arena: Arena) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in (("bot.py", BOT), ("probe.py", PROBE.encode()),
                           ("arena-bot.toml", b'lang = "python"\nbuild = "python3 probe.py"\n')):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    version = await submit_and_build(arena.versions, "builder", buffer.getvalue(), "bot.tar.gz")
    text = arena.versions.build_log("builder", 1)
    assert version.status is BuildStatus.READY, text
    found = probed(text)
    assert "cmdline 1" in found, text
    assert_mount_tables_read(found)
    # The build log names the build command; only what the probe printed counts.
    assert_no_host_paths("\n".join(l for l in text.splitlines() if l.startswith("PROBE")), arena)
    assert_minimal_etc(found)


async def test_a_sandbox_whose_folders_cannot_be_overlaid_is_refused_with_a_reason(
        tmp_path: Path) -> None:
    from arena.hosting.errors import SandboxError
    from arena.hosting.sandbox import Sandbox, SandboxSpec, python_mounts

    spec = SandboxSpec(command=["/bin/true"], app_dir=tmp_path / "gone", mounts=python_mounts())
    sandbox = Sandbox(spec)
    try:
        with pytest.raises(SandboxError, match="overlayfs"):
            await sandbox.start()
    finally:
        await sandbox.stop()
