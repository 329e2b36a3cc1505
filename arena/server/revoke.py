"""Closing the connections of a bot that was removed or whose token changed.

A token is checked once, at hello. Removing a bot or rotating its token
must also end what that token opened already: otherwise a remote bot
connected before keeps its seat and plays on under a name its owner gave
up. The server closes them with ``auth_failed`` and the reason (a seat they
held plays on by the match rules for a lost connection).

The web that removes or rotates closes them at once (in its process and its
workers). :class:`TokenSweep` catches what it cannot see: a removal or
rotation on another node of the store, or ``arena bots remove`` beside a
running server; every ``period_s`` it compares the bots connected here with
the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import structlog

from protocol.errors import ErrorCode

from arena.server.connection import BotConnection
from arena.server.local_tokens import LocalTokens

if TYPE_CHECKING:
    from arena.server.server import ArenaServer

log = structlog.get_logger("arena.server")

REMOVED = "bot {bot!r} was removed; connection closed"
REPLACED = "the bot's token was replaced; connect again with the new token; connection closed"


def disconnect(connections: Iterable[BotConnection], bot: str, reason: str,
               keep_token: str | None = None, local: LocalTokens | None = None) -> int:
    """Close the open connections of ``bot``: every one if ``keep_token`` is
    None (removed), else those whose hello had another token than the hash
    ``keep_token`` (replaced), except tokens the arena handed its own runs
    (``local``: those end with their runs); returns how many were closed."""
    closing = [c for c in connections
               if c.bot == bot and not c.closed and c.identity is not None
               and (keep_token is None or (c.identity.token_hash != keep_token and (
                   local is None or local.bot_of(c.identity.token_hash) is None)))]
    for conn in closing:
        conn.fail(ErrorCode.AUTH_FAILED, reason)
    return len(closing)


class TokenSweep:
    """A server service: every ``period_s``, closes connections of bots the
    store says are removed, or that said hello with a token the store no
    longer has for them. Off in open mode (names are not registered there)."""

    def __init__(self, period_s: float = 5.0) -> None:
        self.period_s = period_s
        self._task: asyncio.Task[None] | None = None

    async def start(self, server: "ArenaServer") -> None:
        if not server.config.open:
            self._task = asyncio.get_running_loop().create_task(self._run(server))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self, server: "ArenaServer") -> None:
        while True:
            await asyncio.sleep(self.period_s)
            connected = server.connected_bots()
            if not connected:
                continue
            try:
                records: list[Any] = await server.writer.read(server.store.list_bots)
            except Exception as exc:  # noqa: BLE001 - a store away or failing: next round
                log.debug("token_sweep_skipped", error=str(exc))
                continue
            for record in records:
                if record.name not in connected or record.kind == "house":
                    continue
                closed = (server.disconnect_bot(record.name, REMOVED.format(bot=record.name))
                          if record.removed else
                          server.disconnect_bot(record.name, REPLACED, record.token_hash))
                if closed:
                    log.info("stale_connections_closed", bot=record.name, count=closed,
                             removed=record.removed)
