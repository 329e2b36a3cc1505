"""The Python bot SDK: a bot is one function and one line to run it.

::

    from protocol.sdk import run_bot

    def choose(phase, legal, state):
        return legal[0]

    run_bot(choose)   # --host --port --token --name --max-matches, or ARENA_* env

See ``protocol/README.md`` for the protocol itself.
"""

from protocol.sdk.client import BotClient
from protocol.sdk.matches import (BotError, ConnectionLostError, HandshakeError, MatchInfo, PendingRequest,
                                  ServerUnreachableError)
from protocol.sdk.runner import BotConfigError, BotSettings, load_strategy, main, resolve_settings, run_bot
from protocol.sdk.strategy import FallbackReason, Strategy, default_action, is_legal, legal_index

__all__ = [
    "BotClient",
    "BotConfigError",
    "BotError",
    "BotSettings",
    "ConnectionLostError",
    "FallbackReason",
    "HandshakeError",
    "ServerUnreachableError",
    "MatchInfo",
    "PendingRequest",
    "Strategy",
    "default_action",
    "is_legal",
    "legal_index",
    "load_strategy",
    "main",
    "resolve_settings",
    "run_bot",
]
