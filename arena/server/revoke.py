"""Closing the connections of a bot that was removed or whose token changed.

A token is checked once, at hello. Removing a bot or rotating its token
must also end what that token opened already: otherwise a remote bot
connected before keeps its seat and plays on under a name its owner gave
up. The server closes them with ``auth_failed`` and the reason (a seat they
held plays on by the match rules for a lost connection).
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.errors import ErrorCode

from arena.server.connection import BotConnection


def disconnect(connections: Iterable[BotConnection], bot: str, reason: str,
               keep_token: str | None = None) -> int:
    """Close every open connection of ``bot`` except those that said hello
    with the token hash ``keep_token`` (its new token, after a rotation);
    returns how many were closed."""
    closing = [c for c in connections
               if c.bot == bot and not c.closed and c.identity is not None
               and (keep_token is None or c.identity.token_hash != keep_token)]
    for conn in closing:
        conn.fail(ErrorCode.AUTH_FAILED, reason)
    return len(closing)
