"""Helpers of the node tests: a tournament file of local bots, arena node
processes (each in its own process group, so a SIGKILL takes its bots down
with it, as when a machine dies), and the checks every test makes."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.games.muushig.replay import replay_record
from arena.storage.base import MatchStatus, Store
from arena.tournament.runner import standings_rows
from arena.tournament.standings import compute_standings

ROOT = Path(__file__).resolve().parents[2]
SECRET = "5e" * 32  # every node of a shared tournament deals from one key


def write_tournament(folder: Path, *, tables: int = 8, name: str = "nodes") -> Path:
    """Two local Python bots and three house bots at ``tables`` duplicate
    tables: five matches per table (seats rotated)."""
    bots = ROOT / "sample_bots"
    path = folder / "t.toml"
    path.write_text(f"""name = "{name}"
game = "muushig"
seed = 11
duplicate = true
parallel = 2

[limits]
decision_ms = 1000
bank_ms = 0

[schedule]
kind = "balanced"
tables = {tables}
house_bot = "heuristic"

[[entrant]]
name = "py-random"
command = ["{sys.executable}", "{bots / 'python_random' / 'bot.py'}"]

[[entrant]]
name = "py-heuristic"
command = ["{sys.executable}", "{bots / 'python_heuristic' / 'bot.py'}"]
""")
    return path


_PAGE = re.compile(r"standings on http://127\.0\.0\.1:(\d+)/")


@dataclass
class Node:
    name: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    _http_port: int | None = None

    @property
    def http_port(self) -> int:
        """The web port the node chose (it listens on port 0 and prints the
        page it serves): no port is picked here and then raced for."""
        deadline = time.monotonic() + 60
        while self._http_port is None:
            found = _PAGE.search(self.log_path.read_text(errors="replace"))
            if found is not None:
                self._http_port = int(found.group(1))
            elif time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"node {self.name} printed no web page:\n"
                                     + self.log_path.read_text(errors="replace")[-2000:])
            else:
                time.sleep(0.05)
        return self._http_port

    def kill(self) -> float:
        """SIGKILL the node and every bot it started; when it happened."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        at = time.time()
        self.proc.wait(timeout=10)
        return at

    def live_matches(self) -> list[dict[str, Any]]:
        url = f"http://127.0.0.1:{self.http_port}/api/matches/live?limit=100"
        with urllib.request.urlopen(url, timeout=2) as response:
            return json.loads(response.read())["matches"]

    def log_events(self, event: str) -> list[dict[str, Any]]:
        found = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{") and f'"{event}"' in line:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("event") == event:
                    found.append(entry)
        return found


def start_node(config: Path, url: str, name: str, folder: Path, *, lease_s: float = 2.0,
               secret: str | None = SECRET, ahead_s: int = 0) -> Node:
    """``arena tournament CONFIG --node NAME`` on ``url``, logging to
    ``folder/NAME.log``. ``secret``: the deal key every node is given (None:
    the first node draws one and the database keeps it); ``ahead_s``: the
    whole process's clock runs that far ahead (Debian's faketime)."""
    log_path = folder / f"{name}.log"
    env = dict(os.environ, PYTHONPATH=str(ROOT), ARENA_NODE=name)
    prefix = ["faketime", "-f", f"+{ahead_s}s"] if ahead_s else []
    keyed = ["--secret", secret] if secret is not None else []
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "arena.cli", "tournament", str(config), "--db", url,
             "--node", name, *keyed, "--lease", str(lease_s), "--port", "0",
             "--http-port", "0", "--no-keep-serving"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            cwd=folder, start_new_session=True)
    return Node(name=name, proc=proc, log_path=log_path)


def stop_all(nodes: list[Node]) -> None:
    for node in nodes:
        if node.proc.poll() is None:
            node.kill()
        else:
            try:
                os.killpg(node.proc.pid, signal.SIGKILL)  # bots it may have left
            except ProcessLookupError:
                pass


def lease_holders(store: Store, tid: str) -> dict[int, str | None]:
    """slot -> the node holding its lease (None when free or finished)."""
    with store.db.tx() as db:  # type: ignore[attr-defined]
        rows = db.execute("SELECT slot, lease_node, match_id FROM schedule WHERE "
                          "tournament_id = ?", (tid,)).fetchall()
    return {row["slot"]: (row["lease_node"] if row["match_id"] is None else None)
            for row in rows}


def finished_slots(store: Store, tid: str) -> int:
    return sum(1 for s in store.get_schedule(tid) if s.match_id is not None)


def assert_each_slot_once(store: Store, tid: str) -> None:
    """Every slot holds one finished match, and no other finished match of
    the tournament exists (a replayed slot's first try never counts)."""
    schedule = store.get_schedule(tid)
    assert schedule and all(s.match_id is not None for s in schedule)
    finished = store.finished_matches(tournament_id=tid)
    assert sorted(m.id for m in finished) == sorted(s.match_id for s in schedule)
    for s in schedule:
        match = store.get_match(s.match_id)
        assert match.status is MatchStatus.FINISHED and match.seed == s.seed
    assert store.count_matches(tournament_id=tid, status=MatchStatus.RUNNING) == 0


def assert_standings_from_logs(store: Store, tid: str) -> None:
    """Replaying every finished match from its stored log gives its stored
    result, and the standings of the replayed results are the stored ones."""
    replayed = []
    for listed in store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED,
                                     limit=100_000):  # the order standings_rows reads
        match = store.get_match(listed.id)
        engine = replay_record(match.rules or None, [e.data for e in store.get_events(match.id)])
        assert engine.result() == match.result, match.id
        replayed.append(dataclasses.replace(match, result=engine.result()))
    assert len(replayed) == len(store.get_schedule(tid))
    assert compute_standings(replayed) == standings_rows(store, tid)
