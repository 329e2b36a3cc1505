"""What a directed match is made of, and what it gives back: plain records
shared by the server and the code that asks it for matches."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from arena.server.server import ArenaServer


def new_match_id() -> str:
    """Sortable by start time, unguessable enough to share."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class PlayerSpec:
    """Who plays a seat of a directed match: a named bot, or a house bot."""

    name: str
    house: str | None = None  # house bot kind ("heuristic", "random"), else remote
    # A remote bot that is not there in time: with ``stand_in`` its seat is
    # played by autopilot in its name (a disconnect fault), else the claim
    # fails. ``claim_timeout_s`` overrides play_match's for this bot;
    # ``token_hash`` lets the bot take the seat back if it connects later.
    stand_in: bool = False
    claim_timeout_s: float | None = None
    token_hash: str | None = None


@dataclass
class MatchOutcome:
    match_id: str
    result: dict[str, Any] | None
    aborted: str | None
    players: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # seats given to autopilot at the start


class Service(Protocol):
    """Something that runs beside the server (the web app, the tournament
    director): started once the bot port listens, stopped before storage is
    flushed, so it may still write while stopping."""

    async def start(self, server: "ArenaServer") -> None: ...  # noqa: F821

    async def stop(self) -> None: ...
