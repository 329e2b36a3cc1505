"""Tokens the arena hands to the bots it starts itself (local and hosted bots).

Such a token is valid in this process only, and only until it is revoked:
a hosted run gives its token back when it stops, and removing or rotating a
bot revokes every token it holds at once, so nothing its old code kept can
say hello again. Each token also owns its bot's name in open mode (no remote
hello may take it) while it is valid; ``on_issue`` is told the name, which
the gate then holds for the arena in the store for the rest of the
server's start (other processes of the server look there, and the name
stays the arena's between a hosted bot's runs).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from arena.auth import hash_token
from arena.server.identity import OpenNames


class LocalTokens:
    def __init__(self, names: OpenNames,
                 on_issue: Callable[[str], None] = lambda name: None) -> None:
        self._names = names
        self._on_issue = on_issue  # told each name a token is issued for
        self._bot_of: dict[str, str] = {}  # token hash -> bot name

    def issue(self, name: str) -> str:
        token = secrets.token_urlsafe(18)
        token_hash = hash_token(token)
        self._bot_of[token_hash] = name
        self._names.reserve(name, token_hash)
        self._on_issue(name)
        return token

    def bot_of(self, token_hash: str) -> str | None:
        return self._bot_of.get(token_hash)

    def issued_to(self, name: str) -> int:
        """How many valid tokens ``name`` holds."""
        return sum(1 for bot in self._bot_of.values() if bot == name)

    def revoke(self, token: str) -> None:
        """One token is no longer valid (its run ended)."""
        self._drop(hash_token(token))

    def revoke_bot(self, name: str) -> int:
        """Every token ``name`` holds is no longer valid; how many there were."""
        hashes = [h for h, bot in self._bot_of.items() if bot == name]
        for token_hash in hashes:
            self._drop(token_hash)
        return len(hashes)

    def _drop(self, token_hash: str) -> None:
        name = self._bot_of.pop(token_hash, None)
        if name is None:
            return
        self._names.release(name, token_hash)
        for other, bot in self._bot_of.items():  # a token still valid keeps the name
            if bot == name:
                self._names.reserve(name, other)
                break
