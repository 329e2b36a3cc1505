"""``arena tournament FILE --workers N``: the parent's side.

The parent keeps the web, the progress display and the final report; the
matches are played by N worker processes (arena/tournament/worker.py), each
one node of the tournament's shared slot queue with its own copies of the
entrants. The parent hears their live matches over their channels (the
live bridge's local transport, as for ``arena serve --workers``), so the
web follows every table; it reads the progress from the store. A worker
that dies is restarted and joins the queue again; the slot it held is
played again once its lease has run out (the queue's rule between nodes).
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
from typing import Any

import structlog

from arena.live_bridge import LiveBridge
from arena.logs import diverted_to
from arena.server.workers.live import ParentTransport
from arena.server.workers.metrics import CombinedMetrics
from arena.server.workers.pool import WorkerPool, WorkerStartError
from arena.storage.base import TournamentStatus
from arena.tournament.outcome import Outcome, print_interrupted
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import tournament_key
from arena.tournament.shared import DEFAULT_LEASE_S

log = structlog.get_logger("arena.tournament.workers")

PROGRESS_EVERY_S = 0.5


async def play_on_workers(arena: Any, config: TournamentConfig, record: Any, *, workers: int,
                          node: str | None, lease_s: float | None, display: Any, db: str,
                          relay: bool = False) -> Outcome | None:
    """Play the schedule on ``workers`` processes; None when they could not
    start (said on stderr)."""
    server, store, tid = arena.server, arena.server.store, record.id
    deal_key = tournament_key(store, record)  # checked here, before any worker deals
    live = ParentTransport()
    bridge = LiveBridge(server.hub, live, store.node or "arena", relay=relay, stale_s=10.0)
    worker_config = dataclasses.replace(server.config, host="127.0.0.1", port=0,
                                        http_port=None, run_tournaments=False, admin_token=None)
    # The key rides along on the private channel: on PostgreSQL the keyring
    # is this process's memory, not a folder the workers could read.
    init: dict[str, Any] = {"tournament": tid, "lease_s": lease_s or DEFAULT_LEASE_S,
                            "deal_key": deal_key.hex()}
    if (log_file := diverted_to()) is not None:
        init["log_file"] = log_file
    pool = WorkerPool(workers, worker_config, node_base=node, metrics=CombinedMetrics(),
                      live=live, on_gone=bridge.node_gone, child="arena.tournament.worker",
                      init_extra=init)
    await bridge.start()
    loop = asyncio.get_running_loop()
    # Ctrl-C is ours from before the workers start: a worker may play its
    # first match while another is still starting, and a signal then must
    # stop the run in order, not end the process with KeyboardInterrupt.
    current = asyncio.current_task()
    assert current is not None
    interrupted = stopping = False

    def interrupt() -> None:
        nonlocal interrupted
        if not interrupted and not stopping:  # once, and never into the workers' stop
            current.cancel()
        interrupted = True

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, interrupt)
    try:
        try:
            try:
                await pool.start()
            except WorkerStartError as exc:
                print(f"arena tournament: {exc}", file=sys.stderr)
                return None
            log.info("tournament_on_workers", tournament=tid, workers=workers)
            with display:
                follower = asyncio.create_task(_follow(server, store, config, tid, display))
                try:
                    await pool.all_done.wait()
                finally:
                    follower.cancel()
                    await asyncio.gather(follower, return_exceptions=True)
                await _report(server, store, config, tid, display)
        except asyncio.CancelledError:
            if not interrupted:
                raise
            current.uncancel()
    finally:
        stopping = True
        await pool.stop()
        await bridge.stop()
    status = (await server.writer.read(store.get_tournament, tid)).status
    complete = status is TournamentStatus.FINISHED and not interrupted
    if interrupted:
        print_interrupted(tid, db)
    faults: list[str] = []
    for state in pool.workers:
        result = state.result or {}
        if result.get("error"):
            print(f"arena tournament: worker {state.index}: {result['error']}", file=sys.stderr)
        faults += [f"{line} (worker {state.index})" for line in result.get("faults", ())]
    if complete:
        server.hub.standings_changed(tid)
    return Outcome(complete, deal_key, faults)


async def _follow(server: Any, store: Any, config: TournamentConfig, tid: str,
                  display: Any) -> None:
    while True:
        await _report(server, store, config, tid, display)
        await asyncio.sleep(PROGRESS_EVERY_S)


async def _report(server: Any, store: Any, config: TournamentConfig, tid: str,
                  display: Any) -> None:
    from arena.tournament import growth

    schedule = await server.writer.read(store.get_schedule, tid)
    done = sum(1 for slot in schedule if slot.match_id is not None)
    # A Swiss tournament or a gauntlet counts what it may still add.
    total = (await server.writer.read(growth.expected_total, store, config, schedule)
             if growth.grows(config) else len(schedule))
    server.hub.tournament_progress(tid, done, total)
    display.update(done, total)
