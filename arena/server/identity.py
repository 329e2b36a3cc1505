"""Who a hello speaks for: token → bot (pure logic).

A token names exactly one bot, and a bot name belongs to exactly one token:

* registered mode: the store says which bot a token belongs to; the hello's
  ``name`` is ignored;
* the arena's own local bots: the token the arena handed out names its bot;
* open mode (no registration): the first token that says hello with a name
  owns that name until the server restarts. A hello with an owned name and
  another token, or with a token and a name other than the one it owns, is
  refused with ``auth_failed`` naming the conflict — so nobody can take
  another bot's seat or share its display name. Names of the arena's own
  bots are owned by their local tokens. A hello without a name is called
  ``bot-`` and the first 6 hex digits of its token's hash.
"""

from __future__ import annotations

import re

from arena.server.errors import ServerError
from protocol.names import MAX_BOT_NAME, bot_name_problem

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,%d}$" % MAX_BOT_NAME)


class IdentityError(ServerError):
    """A hello's token and name do not agree with who owns them."""


class OpenNames:
    def __init__(self) -> None:
        self._name_of: dict[str, str] = {}  # token hash -> name
        self._owner_of: dict[str, str] = {}  # name -> token hash

    def reserve(self, name: str, token_hash: str) -> None:
        """The arena's own bot: its local token owns its name."""
        self._owner_of[name] = token_hash
        self._name_of.setdefault(token_hash, name)

    def release(self, name: str, token_hash: str) -> None:
        """A local token was revoked: it no longer owns its name."""
        if self._name_of.get(token_hash) == name:
            del self._name_of[token_hash]
        if self._owner_of.get(name) == token_hash:
            del self._owner_of[name]

    def resolve(self, token_hash: str, requested: str | None) -> str:
        """The bot name for this token in open mode; binds it on first use."""
        owned = self._name_of.get(token_hash)
        if owned is not None:
            if requested is not None and requested != owned:
                raise IdentityError(
                    f"this token is bot {owned!r} on this server; it cannot also be "
                    f"{requested!r} (say hello with name {owned!r}, or leave the name out)")
            return owned
        name = requested if requested is not None else f"bot-{token_hash[:6]}"
        problem = bot_name_problem(name)
        if problem is not None:
            raise IdentityError(problem)
        if name in self._owner_of:
            raise IdentityError(
                f"name {name!r} is taken on this server by another token (in open mode the "
                "first token to use a name owns it until the server restarts); pick another name")
        self._name_of[token_hash] = name
        self._owner_of[name] = token_hash
        return name
