"""Sandbox user ids are unique across every arena process on the machine
(RLIMIT_NPROC counts per user id, machine-wide)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.hosting.uids import UidPool

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys
from pathlib import Path
from arena.hosting.uids import UidPool
pool = UidPool(Path(sys.argv[1]))
leases = [pool.lease() for _ in range(10)]
print(" ".join(str(l.uid) for l in leases), flush=True)
sys.stdin.read()  # hold them until told
"""


def test_two_arena_processes_never_share_a_sandbox_uid(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        first, second = ({int(u) for u in p.stdout.readline().split()} for p in procs)  # type: ignore[union-attr]
    finally:
        for p in procs:
            p.communicate("", timeout=30)
    assert len(first) == len(second) == 10
    assert first.isdisjoint(second)


def test_a_released_uid_is_leased_again_and_a_dead_process_frees_its_own(tmp_path: Path) -> None:
    pool = UidPool(tmp_path, first=70000, count=2)
    a, b = pool.lease(), pool.lease()
    assert {a.uid, b.uid} == {70000, 70001}
    a.release()
    assert pool.lease().uid == a.uid
    gone = subprocess.run([sys.executable, "-c", HOLDER.replace("range(10)", "range(0)"),
                           str(tmp_path)], cwd=ROOT, input="", capture_output=True, text=True)
    assert gone.returncode == 0


def test_a_full_pool_says_so(tmp_path: Path) -> None:
    import pytest

    from arena.hosting.errors import SandboxError

    pool = UidPool(tmp_path, first=70000, count=1)
    pool.lease()
    with pytest.raises(SandboxError, match="1 sandbox user ids"):
        pool.lease()
