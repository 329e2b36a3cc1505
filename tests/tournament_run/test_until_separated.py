"""``until_separated``: reserve deck sets are played only while the
standings are not separated, and never more than the cap."""

from __future__ import annotations

from arena.storage.base import TournamentStatus
from arena.tournament.extension import separated, stopping_level
from arena.tournament.runner import standings_rows
from arena.tournament.verify import verify_tournament
from tests.tournament_run.helpers import play, sample_entrant, write_config

TWO_PLAYERS = "[rules]\nplayers = 2\n"


async def test_a_clear_difference_stops_the_reserve_early(tmp_path):
    entrants = sample_entrant("strong", "python_heuristic") + sample_entrant("weak")
    path = write_config(tmp_path, entrants, extra=TWO_PLAYERS.replace(
        "[rules]", "[schedule]\nuntil_separated = true\nmax_extra_matches = 60\n[rules]"))
    store, tid, complete = await play(path, tmp_path / "a.db")
    assert complete and store.get_tournament(tid).status is TournamentStatus.FINISHED
    schedule = store.get_schedule(tid)
    reserve = [s for s in schedule if s.extra.get("reserve")]
    assert len(reserve) == 60
    played = [s for s in reserve if s.match_id]
    print("reserve matches played:", len(played))
    assert 0 < len(played) < 60 and len(played) % 2 == 0  # whole deck sets of two rotations
    rows = standings_rows(store, tid)
    assert [r.bot for r in rows] == ["strong", "weak"]
    assert separated(rows, stopping_level(30))
    assert verify_tournament(store, tid).ok
    store.close()


async def test_bots_that_cannot_be_told_apart_stop_at_the_cap(tmp_path):
    entrants = sample_entrant("one") + sample_entrant("two")
    path = write_config(tmp_path, entrants, extra=TWO_PLAYERS.replace(
        "[rules]", "[schedule]\nuntil_separated = true\nmax_extra_matches = 4\n[rules]"))
    store, tid, complete = await play(path, tmp_path / "a.db")
    assert complete
    schedule = store.get_schedule(tid)
    assert len(schedule) == 2 + 4 and all(s.match_id for s in schedule)
    store.close()


def test_a_file_without_the_rule_keeps_its_tournament_id(tmp_path):
    from arena.tournament.config import load_config
    from arena.tournament.runner import tournament_id

    (tmp_path / "plain").mkdir()
    (tmp_path / "ruled").mkdir()
    plain = write_config(tmp_path / "plain", sample_entrant("a"))
    wire = load_config(plain).to_wire()
    assert set(wire["schedule"]) == {"kind", "max_tables", "tables", "house_bot"}
    ruled = write_config(tmp_path / "ruled", sample_entrant("a"), extra="[schedule]\nuntil_separated = true")
    assert tournament_id(load_config(ruled)) != tournament_id(load_config(plain))
