"""The sandbox's syscall filter: no nested user namespaces (which would give
a bot uid 0 with every capability inside one), no kernel keyrings, no BPF."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.hosting.conftest import needs_sandbox, run_in_sandbox

pytestmark = needs_sandbox


def probe(body: str) -> str:
    return textwrap.dedent(body)


async def test_a_nested_user_namespace_is_refused(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        import ctypes, os, subprocess
        libc = ctypes.CDLL(None, use_errno=True)
        CLONE_NEWUSER = 0x10000000
        if libc.unshare(CLONE_NEWUSER) == 0:
            print("unshare: got a user namespace")
        else:
            print("unshare refused", os.strerror(ctypes.get_errno()))
        done = subprocess.run(["unshare", "-U", "-r", "id", "-u"], capture_output=True, text=True)
        print("unshare -U -r:", done.returncode, done.stdout.strip(), done.stderr.strip())
    """))
    assert code == 0, out
    assert "unshare refused Operation not permitted" in out
    assert "unshare -U -r: 0 0" not in out and "unshare -U -r: 1" in out


async def test_threads_and_processes_still_work_under_the_filter(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        import subprocess, threading
        seen = []
        t = threading.Thread(target=lambda: seen.append("thread"))
        t.start(); t.join()
        print(seen[0], subprocess.run(["true"]).returncode)
    """))
    assert code == 0 and "thread 0" in out, out


async def test_kernel_keyrings_and_bpf_are_refused(tmp_path: Path) -> None:
    code, out = await run_in_sandbox(tmp_path / "app", probe("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        SYS_keyctl, SYS_bpf = 250, 321  # x86_64
        for name, number in (("keyctl", SYS_keyctl), ("bpf", SYS_bpf)):
            result = libc.syscall(number, 0, 0, 0, 0)
            print(name, result, os.strerror(ctypes.get_errno()))
    """))
    assert code == 0, out
    assert "keyctl -1 Operation not permitted" in out
    assert "bpf -1 Operation not permitted" in out
