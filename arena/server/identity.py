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
  bots are owned by their local tokens, and held for the arena in the
  store for the rest of the server's start (every process refuses them,
  also between a hosted bot's runs). A hello without a name is called
  ``bot-`` and the first 6 hex digits of its token's hash. A name is also
  claimed in the store's bots table, the one namespace of people and bots
  (see :func:`stored_name_problem`), so an open server's bot never takes a
  person's name and a person never takes the name of a bot that played here.
  The first token's hold is recorded in the store too, for this start of the
  server (``arena.storage.open_names``): the processes of ``arena serve
  --workers`` each admit bots, and each checks it.
"""

from __future__ import annotations

import re
from typing import Callable

from arena.server.errors import ServerError
from arena.storage.base import PERSON_KIND, BotRecord
from protocol.names import MAX_BOT_NAME, bot_name_problem

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,%d}$" % MAX_BOT_NAME)


class IdentityError(ServerError):
    """A hello's token and name do not agree with who owns them."""


class OpenNames:
    def __init__(self) -> None:
        self._name_of: dict[str, str] = {}  # token hash -> name
        self._owner_of: dict[str, str] = {}  # name -> token hash
        self._started: set[str] = set()  # names owned by a local token (the arena's bots)

    def reserve(self, name: str, token_hash: str) -> None:
        """The arena's own bot: its local token owns its name."""
        self._owner_of[name] = token_hash
        self._name_of.setdefault(token_hash, name)
        self._started.add(name)

    def release(self, name: str, token_hash: str) -> None:
        """A local token was revoked: it no longer owns its name."""
        if self._name_of.get(token_hash) == name:
            del self._name_of[token_hash]
        if self._owner_of.get(name) == token_hash:
            del self._owner_of[name]
            self._started.discard(name)

    def resolve(self, token_hash: str, requested: str | None,
                claim: Callable[[str], None] | None = None) -> str:
        """The bot name for this token in open mode; binds it on first use,
        once ``claim`` (which raises IdentityError to refuse) has taken it
        in the store."""
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
            raise IdentityError(started_name(name) if name in self._started
                                else name_taken(name))
        if claim is not None:
            claim(name)
        self._name_of[token_hash] = name
        self._owner_of[name] = token_hash
        return name


def name_taken(name: str) -> str:
    return (f"name {name!r} is taken on this server by another token (in open mode the "
            "first token to use a name owns it until the server restarts); pick another name")


def started_name(name: str) -> str:
    return (f"name {name!r} is taken: it is the name of a bot this arena starts itself (a "
            "hosted bot or a tournament's local entrant) until the server restarts; pick "
            "another name")


def stored_name_problem(record: BotRecord, token_hash: str) -> str | None:
    """Why an open server's hello may not use the name ``record`` holds in
    the store, or None. People and bots share one namespace: a person's
    name is never a bot's, and a registered bot's name is used only with
    its own token. A name stored without a token (a bot that said hello to
    an open server before, even before a restart) stays free to use."""
    name = record.name
    if record.kind == PERSON_KIND:
        return (f"name {name!r} belongs to a person who plays on this server's web page "
                "(people and bots share one namespace); pick another name")
    if record.removed:
        return f"name {name!r} belonged to a bot removed from this server; pick another name"
    if record.token_hash is not None and record.token_hash != token_hash:
        return (f"name {name!r} is a registered bot's on this server and this is not its "
                "token; pick another name")
    return None
