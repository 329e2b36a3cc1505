"""A real ``arena tournament`` process, started without ``--secret``, is
stopped mid-run (Ctrl-C, SIGTERM, or SIGKILL of its whole process group,
as when its machine dies) and resumed with the command it printed, on
both backends: every slot is played once, from the key drawn at the
start, and ``arena verify`` recomputes every deck on the store's URL."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.tournament.config import load_config
from arena.tournament.runner import tournament_id
from protocol.deals import key_commitment

from .nodes import ROOT, assert_each_slot_once, finished_slots, write_tournament

SIGNALS = {"ctrl-c": signal.SIGINT, "sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}


def _arena(*args: str, cwd: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_NODE"}
    env["PYTHONPATH"] = str(ROOT)
    with open(out, "ab") as sink:
        return subprocess.Popen([sys.executable, "-m", "arena.cli", *args], stdout=sink,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                cwd=cwd, start_new_session=True)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("how", sorted(SIGNALS))
def test_a_stopped_tournament_resumes_with_the_printed_command(backend, how, tmp_path,
                                                                request):
    db = str(request.getfixturevalue("pg_url")) if backend == "postgresql" \
        else str(tmp_path / "cup.db")
    # One table: five slots, a stop after the first leaves four to resume.
    config = write_tournament(tmp_path, tables=1)
    tid = tournament_id(load_config(config))
    out = tmp_path / "first.out"
    first = _arena("tournament", str(config), "--db", db, "--port", "0", "--http-port", "0",
                   "--no-keep-serving", cwd=tmp_path, out=out)
    store = open_store(db)
    try:
        deadline = time.monotonic() + 120
        while True:  # stop it once a slot is done and another match is in play
            assert first.poll() is None, out.read_text()[-3000:]
            assert time.monotonic() < deadline, out.read_text()[-3000:]
            try:
                if finished_slots(store, tid) >= 1 and store.count_matches(
                        tournament_id=tid, status=MatchStatus.RUNNING):
                    break
            except Exception:  # noqa: BLE001 - not created yet
                pass
            time.sleep(0.05)
        commitment = store.get_tournament(tid).config["deals"]["commitment"]
        if SIGNALS[how] is signal.SIGKILL:
            os.killpg(first.pid, signal.SIGKILL)  # the process and every bot it started
        else:
            first.send_signal(SIGNALS[how])
        first.wait(timeout=60)
        try:
            os.killpg(first.pid, signal.SIGKILL)  # any bot it left
        except ProcessLookupError:
            pass
        text = out.read_text()
        assert "--secret" not in text
        played_before = finished_slots(store, tid)
        assert played_before < len(store.get_schedule(tid))  # stopped mid-run
        if SIGNALS[how] is signal.SIGKILL:
            resume = ["tournament", "resume", tid, "--db", db]
        else:
            found = re.search(r"resume with: arena (tournament resume \S+ --db \S+)", text)
            assert found, text[-3000:]
            resume = found.group(1).split()
        resume += ["--port", "0", "--http-port", "0", "--no-keep-serving"]
        again_out = tmp_path / "resume.out"
        again = _arena(*resume, cwd=tmp_path, out=again_out)
        assert again.wait(timeout=150) == 0, again_out.read_text()[-3000:]
        shown = re.search(r"deal key \(revealed now that the tournament is over\): ([0-9a-f]+)",
                          again_out.read_text())
        assert shown and key_commitment(bytes.fromhex(shown.group(1))) == commitment
        assert_each_slot_once(store, tid)
        verify = subprocess.run([sys.executable, "-m", "arena.cli", "verify", tid, "--db", db],
                                capture_output=True, text=True, cwd=tmp_path, timeout=120,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert verify.returncode == 0, verify.stdout + verify.stderr
    finally:
        store.close()
