"""Hosted versions as tournament entrants, end to end: two stored versions of
one uploaded bot, built and sandboxed, sit as ``mybot.v2`` and ``mybot.v1``
in a gauntlet whose challenger is v2, beside a sample bot and house bots;
every match starts the version's run, its seat is played by it (never by
autopilot), its stderr is kept with the version, and ``arena verify``
passes."""

from __future__ import annotations

import os

import shutil
import tempfile
from pathlib import Path

import pytest

from arena.hosting.builder import submit_and_build
from arena.hosting.hosted import HostedBots
from arena.hosting.versions import BuildStatus, VersionStore
from arena.storage import open_store
from arena.storage.base import MatchStatus, TournamentStatus
from arena.tournament.config import load_config
from arena.tournament.gauntlet_play import gauntlet_result
from arena.tournament.hosted_entrant import HostedEntrantsError
from arena.tournament.runner import TournamentRunner, create_or_load
from arena.tournament.verify import verify_tournament
from tests.hosting.conftest import needs_sandbox
from tests.tournament_run.helpers import ROOT, new_server, sample_entrant, write_config

HOSTED = ('[[entrant]]\nname = "mybot"\nhosted = true\nversion = 2\n'
          '[[entrant]]\nname = "mybot"\nhosted = true\nversion = 1\n')
GAUNTLET = ('[schedule]\nkind = "gauntlet"\nchallenger = "mybot.v2"\nmax_sets = 12\n'
            'alpha = 0.1\neffect = 0.45\n')


# The hosted seat is the runner's and the hosting layer's work, the same on
# both stores: the gauntlet's storing and dealing run on both backends in
# test_gauntlet_run.py, and the hosted versions' store in
# tests/storage/test_hosted_versions.py. This two-minute run plays on
# SQLite; ``ARENA_TESTS_ALL_BACKENDS=1`` adds PostgreSQL.
_BACKENDS = ["sqlite", "postgresql"] if os.environ.get("ARENA_TESTS_ALL_BACKENDS") else ["sqlite"]


@pytest.fixture(params=_BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "arena.db")


async def upload_two_versions(versions: VersionStore) -> None:
    """v1 plays at random, v2 is the heuristic sample: v2 should be better."""
    for sample in ("python_random", "python_heuristic"):
        data = (ROOT / "sample_bots" / sample / "bot.py").read_bytes()
        version = await submit_and_build(versions, "mybot", data, "bot.py")
        assert version.status is BuildStatus.READY, versions.build_log("mybot", version.version)


@needs_sandbox
@pytest.mark.timeout(600)
async def test_a_gauntlet_whose_challenger_is_a_hosted_version(db, tmp_path):
    store = open_store(db)
    versions = VersionStore(store, tmp_path / "hosted")
    await upload_two_versions(versions)
    path = write_config(tmp_path, HOSTED + sample_entrant("r1"), extra=GAUNTLET)
    config = load_config(path)
    assert config.entrant_names == ["mybot.v2", "mybot.v1", "r1"]
    record, _ = create_or_load(store, config)
    server = new_server(store)
    await server.start()
    sockets = Path(tempfile.mkdtemp(prefix="arena-t-"))  # short: a socket path is 107 bytes at most
    hosted = HostedBots(versions, sockets, server.start_unix, server.local_tokens)
    try:
        complete = await TournamentRunner(server, config, record, hosted=hosted).run()
    finally:
        await hosted.stop_all()
        await server.stop()
        shutil.rmtree(sockets, ignore_errors=True)
    assert complete and store.get_tournament(record.id).status is TournamentStatus.FINISHED
    assert hosted.runs == {}  # every run stopped after its match
    matches = store.list_matches(tournament_id=record.id, status=MatchStatus.FINISHED,
                                 limit=1000)
    assert matches
    for match in matches:
        for seat in ("mybot.v2", "mybot.v1"):
            if seat in match.players:  # played by its own run, not by autopilot
                assert not match.faults[match.players.index(seat)].autopilot, match.id
    # Each run's stderr is kept with its version, under the match it played.
    played = {seat: {m.id for m in matches if seat in m.players}
              for seat in ("mybot.v2", "mybot.v1")}
    assert set(versions.get("mybot", 2).matches) == played["mybot.v2"]
    assert set(versions.get("mybot", 1).matches) == played["mybot.v1"]
    result = gauntlet_result(store, config, record.id)
    assert result is not None and result["challenger"] == "mybot.v2"
    assert {row["opponent"] for row in result["opponents"]} == {"mybot.v1", "r1"}
    assert result["verdict"] == "better", result
    report = verify_tournament(store, record.id)
    assert report.ok, report.summary()
    store.close()


async def test_hosted_entrants_without_hosted_bots_are_refused_before_any_match(tmp_path):
    store = open_store(str(tmp_path / "a.db"))
    path = write_config(tmp_path, HOSTED + sample_entrant("r1"), extra=GAUNTLET)
    config = load_config(path)
    record, _ = create_or_load(store, config)
    server = new_server(store)
    with pytest.raises(HostedEntrantsError, match="mybot.v1, mybot.v2"):
        TournamentRunner(server, config, record)
    assert store.count_matches(tournament_id=record.id) == 0
    store.close()


@needs_sandbox
@pytest.mark.timeout(300)
async def test_arena_tournament_starts_the_hosted_versions_of_its_store(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "a.db"
    store = open_store(str(db))
    await upload_two_versions(VersionStore(store, tmp_path / "hosted"))  # the default cache
    store.close()
    path = write_config(tmp_path, '[[entrant]]\nname = "mybot"\nhosted = true\nversion = 1\n',
                        extra="duplicate = false")
    proc = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", str(path), "--db",
                           str(db), "--port", "0", "--http-port", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = open_store(str(db))
    [match] = store.list_matches(status=MatchStatus.FINISHED, limit=10)
    seat = match.players.index("mybot.v1")
    assert not match.faults[seat].autopilot and match.faults[seat].timeouts == 0
    assert VersionStore(store, tmp_path / "hosted").get("mybot", 1).matches == [match.id]
    [record] = store.list_tournaments()
    store.close()
    verify = subprocess.run([sys.executable, "-m", "arena.cli", "verify", record.id, "--db",
                             str(db)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # One process starts the runs: --workers is refused with the reason.
    workers = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", str(path), "--db",
                              str(tmp_path / "b.db"), "--port", "0", "--workers", "2"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert workers.returncode == 2 and "mybot.v1 are hosted versions" in workers.stderr
