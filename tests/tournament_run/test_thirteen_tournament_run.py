"""A thirteen-card tournament played end to end by ``arena tournament``
(the sample bots of the game started by the arena, house bots of the game
filling the table), then checked by ``arena verify``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter

from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from tests.tournament_run.helpers import ROOT, write_config

JS_READY = shutil.which("node") is not None and \
    (ROOT / "sample_bots" / "js_thirteen" / "node_modules").is_dir()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=180)


def entrants() -> str:
    py = ROOT / "sample_bots" / "python_thirteen" / "bot.py"
    text = f'[[entrant]]\nname = "py13"\ncommand = ["python", "{py}"]\n'
    if JS_READY:
        js = ROOT / "sample_bots" / "js_thirteen" / "bot.js"
        return text + f'[[entrant]]\nname = "js13"\ncommand = ["node", "{js}"]\n'
    return text + f'[[entrant]]\nname = "py13b"\ncommand = ["python", "{py}"]\n'


def test_a_duplicate_thirteen_tournament_is_played_and_verifies(tmp_path):
    path = write_config(tmp_path, entrants(), name="thirteen night",
                        extra='game = "thirteen"\nduplicate = true\n[rules]\ndeals = 2\n')
    db = tmp_path / "t.db"
    played = cli("tournament", str(path), "--db", str(db), "--port", "0", "--no-http")
    assert played.returncode == 0, played.stderr

    store = SqliteStore(db)
    try:
        (tournament,) = store.list_tournaments()
        schedule = store.get_schedule(tournament.id)
        matches = [store.get_match(slot.match_id) for slot in schedule]
    finally:
        store.close()
    # Duplicate: the one table played once per seat rotation.
    assert len(matches) == 4
    assert all(m.status is MatchStatus.FINISHED and m.game == "thirteen" for m in matches)
    names = set(matches[0].players)
    assert len(names) == 4 and {n for n in names if n.startswith("house-strong-")} == \
        names - {"py13", "js13", "py13b"}
    # Every bot holds every seat once, on the same decks.
    assert {Counter(m.players[seat] for m in matches)[name]
            for seat in range(4) for name in names} == {1}
    decks = {tuple(tuple(e["deck"]) for e in m.reveal) for m in matches}
    assert len(decks) == 1 and all(len(m.reveal) == 2 for m in matches)
    assert all(sum(m.result["totals"]) == 0 for m in matches)

    verified = cli("verify", tournament.id, "--db", str(db))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    one = cli("verify", "--match", matches[1].id, "--db", str(db))
    assert one.returncode == 0, one.stdout + one.stderr


async def test_a_server_whose_default_game_is_muushig_plays_a_thirteen_tournament(tmp_path):
    # The tournament director runs stored tournaments of any game on the
    # server of ``arena serve``: each match is of the tournament's game.
    from tests.tournament_run.helpers import play

    path = write_config(tmp_path, entrants(), name="thirteen on serve",
                        extra='game = "thirteen"\nduplicate = false\n[rules]\ndeals = 1\n')
    store, tid, complete = await play(path, tmp_path / "s.db",
                                      server_overrides={"game": "muushig"})
    try:
        (slot,) = store.get_schedule(tid)
        match = store.get_match(slot.match_id)
    finally:
        store.close()
    assert complete and match.game == "thirteen" and len(match.players) == 4
