"""One worker process of ``arena tournament FILE --workers N``.

A worker of ``arena serve --workers`` (arena/server/workers/child.py: its
own server on the shared store under its own node name, live events and
metrics to the parent over the channel) that also plays the tournament
its ``init`` names: as one node of the tournament's shared slot queue
(arena/tournament/shared.py), with its own copies of the local entrants
connected to its private loopback port. So N workers play N matches at
once even when the field has only one table's worth of bots, and every
slot is still played exactly once (the queue's leases and the finishing
transaction see to it, as between the nodes of several machines).

When its runner ends (no slot left to claim) it sends ``done`` with what
the organiser should hear (complete or not, its entrants' faults) and
stops; the parent does not restart a worker that said ``done``.
"""

from __future__ import annotations

import sys
from typing import Any

import structlog

from arena.server.workers.child import Worker, main as worker_main
from arena.tournament.config import config_from_wire
from arena.tournament.runner import join_tournament
from arena.tournament.shared import DEFAULT_LEASE_S, QueueSettings, SharedTournamentRunner

log = structlog.get_logger("arena.tournament.worker")


class TournamentWorker(Worker):
    def __init__(self, sock: Any, init: dict[str, Any]) -> None:
        super().__init__(sock, init)
        self.tournament_id = str(init["tournament"])
        self.lease_s = float(init.get("lease_s") or DEFAULT_LEASE_S)
        self.deal_key = bytes.fromhex(str(init["deal_key"]))

    async def play(self) -> None:
        try:
            runner = await self._runner()
            complete = await runner.run()
        except Exception as exc:  # said to the parent, which prints it and ends the run
            log.exception("tournament_worker_failed", tournament=self.tournament_id)
            self._send({"t": "done", "complete": False, "error": f"{type(exc).__name__}: {exc}",
                        "faults": [], "played": []})
            self.stopping.set()
            return
        self._send({"t": "done", "complete": complete, "faults": runner.faults_summary(),
                    "played": list(runner.played)})
        self.stopping.set()

    async def _runner(self) -> SharedTournamentRunner:
        stored = await self.server.writer.read(self.store.get_tournament, self.tournament_id)
        config = config_from_wire(stored.config)
        # Joined with the parent's key, checked against the published commitment.
        record = await self.server.writer.call(join_tournament, self.store, stored,
                                               self.deal_key)
        return SharedTournamentRunner(self.server, config, record, queue=QueueSettings(
            node=self.node, lease_s=self.lease_s, poll_s=min(1.0, self.lease_s / 10)))


def main(argv: list[str]) -> int:
    return worker_main(argv, TournamentWorker, usage="python -m arena.tournament.worker FD "
                       "(started by arena tournament --workers N)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
