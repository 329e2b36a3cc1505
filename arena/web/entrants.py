"""Who a name in a match is, for the pages (pure functions, no I/O).

A match names a bot per seat. Most of those names never get a row in the
bots table: tournament entrants started by the arena, bots admitted in open
mode, house bots. The web still gives every one of them a page, derived from
its matches.

House bots fill empty seats under numbered names (``house-heuristic-1`` ...
``house-heuristic-4``), one per seat, so that a match never seats one name
twice. They are one player, not four: the web shows them as one *house
entrant* per strategy, ``house-<strategy>``, counted once per seat it held
(the rule the standings apply to any bot seated twice in one match).
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.storage.base import BotRecord, MatchRecord, TournamentRecord
from arena.tournament.plan import house_strategy
from arena.tournament.schedule import HOUSE_PREFIX
# One rule for the standings and the pages (arena.tournament.standings).
from arena.tournament.standings import as_entrants as as_entrants, entrant_of as entrant_of

HOUSE = "house"
LOCAL = "local"
REMOTE = "remote"


def is_house_entrant(name: str) -> bool:
    return name.startswith(HOUSE_PREFIX) and house_strategy(name) is None


def local_entrants(tournaments: Iterable[TournamentRecord]) -> set[str]:
    """Names the arena started itself: entrants with a ``command`` in a
    stored tournament config, and hosted versions seated as entrants."""
    names: set[str] = set()
    for t in tournaments:
        for entrant in (t.config or {}).get("entrants") or []:
            if isinstance(entrant, dict) and (entrant.get("command") or entrant.get("hosted")):
                names.add(str(entrant.get("name")))
    return names


def derived_bot(name: str, *, first_seen: float, local: set[str]) -> BotRecord:
    """A bot known only from its matches, as the bots table would hold it."""
    if is_house_entrant(name):
        kind = HOUSE
    elif name in local:
        kind = LOCAL
    else:
        kind = REMOTE
    return BotRecord(name=name, token_hash=None, created_at=first_seen, kind=kind)


def house_seat_names(entrant: str, matches: Iterable[MatchRecord]) -> list[str]:
    """The numbered seat names a house entrant played under, in order."""
    names = {p for m in matches for p in m.players if p != entrant and entrant_of(p) == entrant}
    return sorted(names, key=lambda n: (len(n), n))
