"""``arena serve`` plays the tournaments created over HTTP and leaves those
of ``arena tournament`` alone: following the command's own hint
(``arena serve --db ...``) after a stopped tournament must not end it."""

from __future__ import annotations

import asyncio

from arena.storage.base import TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import load_config
from arena.tournament.director import TournamentDirector
from arena.tournament.runner import create_or_load
from tests.tournament_run.helpers import new_server, sample_entrant, write_config


async def test_the_director_never_cancels_a_tournament_of_arena_tournament(tmp_path):
    store = SqliteStore(tmp_path / "a.db")
    (tmp_path / "local").mkdir()
    (tmp_path / "remote").mkdir()
    local = load_config(write_config(tmp_path / "local", sample_entrant("r"), name="local cup"))
    remote = load_config(write_config(tmp_path / "remote",
                                      '[[entrant]]\nname = "far"\nremote = true\n',
                                      name="remote cup"))
    stopped, _ = create_or_load(store, local)
    store.set_tournament_status(stopped.id, TournamentStatus.RUNNING)  # as Ctrl-C leaves it
    pending, _ = create_or_load(store, remote)  # created, never started
    before = {t.id: t.status for t in store.list_tournaments()}
    server = new_server(store)
    await server.start()
    director = TournamentDirector(server, poll_s=0.01)
    task = asyncio.create_task(director.run())
    try:
        for _ in range(40):  # many polls of the director: nothing changes
            await asyncio.sleep(0.05)
            assert {t.id: t.status for t in store.list_tournaments()} == before
            assert not task.done()
            assert director.playing == {}  # nothing here is the director's to play
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await server.stop()
    assert before == {stopped.id: TournamentStatus.RUNNING, pending.id: TournamentStatus.PENDING}
    assert all(slot.match_id is None for slot in store.get_schedule(stopped.id))
    store.close()
