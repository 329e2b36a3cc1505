"""Bringing a slot's bots to one node, when they are connected to several.

A tournament slot is played on a node where all its remote entrants are
connected (arena/tournament/shared.py). When the first open slot's entrants
are all connected but share no node, the tournament would wait until they
meet by chance. Each node's director therefore looks, every poll, at what
the tournaments it plays wait for (arena/tournament/waiting.py): if the
slot's bots should gather on another node (``gather_on``: the one holding
most of them), the node sends its own such bots that said ``movable`` in
their hello and wait in its lobby a ``move`` message naming where bots
reach that node (its ``advertise`` address, kept in its presence rows), and
closes their connection; the SDK connects there at once with the same
token. Bots that are not movable are left where they are, and the
tournament says which to connect where.

A node moves a bot at most once per ``MOVE_EVERY_S``: two tournaments that
want one bot on different nodes cannot bounce it to and fro every second.
"""

from __future__ import annotations

import time

import structlog

from arena.storage.base import TournamentRecord
from arena.tournament.host import MatchHost
from arena.tournament.waiting import waiting_for
from protocol.messages import Move

log = structlog.get_logger("arena.tournament.gathering")

MOVE_EVERY_S = 30.0


class Gatherer:
    """Moves this node's movable bots to the node their waiting slot needs."""

    def __init__(self, server: MatchHost, node: str, *, every_s: float = MOVE_EVERY_S) -> None:
        self.server = server
        self.node = node
        self.every_s = every_s
        self._moved: dict[str, float] = {}  # bot -> when this node last moved it (monotonic)

    async def gather(self, records: list[TournamentRecord]) -> list[str]:
        """One poll over these tournaments; returns the bots moved."""
        store, writer = self.server.store, self.server.writer
        now = time.monotonic()
        addresses: dict[str, str] | None = None
        moved: list[str] = []
        for record in records:
            waiting = await writer.read(waiting_for, store, record)
            if waiting is None or waiting.gather_on in (None, self.node):
                continue
            target = waiting.gather_on
            movers = {e.name for e in waiting.entrants
                      if self.node in e.connected_to and target not in e.connected_to
                      and now - self._moved.get(e.name, -self.every_s) >= self.every_s}
            if not movers:
                continue
            if addresses is None:
                addresses = await writer.read(store.node_addresses)
            host, _, port = addresses.get(target, "").rpartition(":")
            if not host or not port.isdigit():
                continue  # that node does not say where bots reach it
            reason = (f"tournament {record.id}: slot {waiting.slot} needs its bots on one "
                      f"node; it is played on {target}")
            for bot in self.server.move_bots(movers, Move(host, int(port), reason).to_wire()):
                self._moved[bot] = now
                moved.append(bot)
                log.info("bot_moved", bot=bot, tournament=record.id, slot=waiting.slot,
                         to=target, node=self.node)
        return moved
