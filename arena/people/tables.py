"""The tables people sit at: opened from the play page, one per person.

:class:`PeopleTables` runs beside the server (a ``Service``): it opens a
table for a person (the person's seat drawn at random, house bots in the
others), gives the seat to the page that asks for it (a reload takes it
back from autopilot), and watches the pages: one that stopped reading for
``away_after_s`` is taken as gone (a closed tab whose goodbye was lost),
and autopilot plays for it.

People's matches are stored with the tournament id :data:`PEOPLE`: the
bots' ladder (matches without one) and tournaments never count them, and
the people's ladder counts only them.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog

from arena.people.choice import Opponents, TableChoice, house_strategies
from arena.server.person import PersonLink, start_person_table
from arena.server.session import TimeLimits

if TYPE_CHECKING:
    from arena.server.server import ArenaServer
    from arena.server.table import Table

log = structlog.get_logger("arena.people")

PEOPLE: Final = "people"  # the tournament id of people's matches, the ladder's scope


class PeopleTableError(Exception):
    """A person's table cannot be opened now (the message says why)."""


@dataclass(frozen=True)
class PeopleSettings:
    """A person's clock and the limits of people's tables.

    A person thinks in seconds, not milliseconds: ``decision_ms`` per
    decision plus a ``bank_ms`` to overdraw (the bots at the table keep the
    server's limits); ``house_pace_s`` between house moves lets the person
    see each card played."""

    decision_ms: int = 30_000
    bank_ms: int = 60_000
    timeouts_before_autopilot: int = 2
    house_pace_s: float = 0.7
    away_after_s: float = 20.0  # a page that has not read for this long is gone
    max_tables: int = 32  # people's tables at once, over all people
    keep_ended_s: float = 600.0  # an ended table's messages stay readable this long

    def limits(self) -> TimeLimits:
        return TimeLimits(self.decision_ms, self.bank_ms, self.timeouts_before_autopilot)


@dataclass
class PersonTable:
    """One person's table, and the page that holds the seat now."""

    table: "Table"
    game: str
    seat: int
    person: str
    token_hash: str
    link: PersonLink
    ended_at: float | None = None
    links: int = field(default=1)  # pages that held the seat, the first included

    @property
    def match_id(self) -> str:
        return self.table.match_id

    @property
    def over(self) -> bool:
        return self.table.finished.is_set()

    def wire(self) -> dict[str, Any]:
        return {"match": self.match_id, "game": self.game, "seat": self.seat,
                "players": self.table.players, "over": self.over}


class PeopleTables:
    """Opens people's tables on the server and keeps their pages' links."""

    def __init__(self, settings: PeopleSettings | None = None) -> None:
        self.settings = settings or PeopleSettings()
        self.server: "ArenaServer | None" = None
        self._by_match: dict[str, PersonTable] = {}
        self._by_person: dict[str, PersonTable] = {}  # the person's table not yet ended
        self._rng = random.Random()
        self._watch: asyncio.Task[None] | None = None

    # -- Service ----------------------------------------------------------------
    async def start(self, server: "ArenaServer") -> None:
        self.server = server
        self._watch = asyncio.get_running_loop().create_task(self._watch_pages())

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.wait([self._watch], timeout=5)
            self._watch = None

    # -- tables -------------------------------------------------------------------
    def sit(self, game: str, person: str, token_hash: str,
            choice: TableChoice = TableChoice()) -> PersonTable:
        """The person's table of ``game``: the one they are playing (this
        page takes the seat back), else a new one with the bots of ``choice``."""
        now = time.monotonic()
        current = self._by_person.get(person)
        if current is not None and not current.over:
            if current.game != game:
                raise PeopleTableError(
                    f"{person!r} is playing {current.game} (match {current.match_id}); "
                    "finish it or let it end before sitting at another table")
            return self._take_back(current, now)
        server = self.server
        if server is None or server.stopping:
            raise PeopleTableError("the server is not taking new tables now")
        playing = sum(1 for t in self._by_match.values() if not t.over)
        if playing >= self.settings.max_tables:
            raise PeopleTableError(f"all {self.settings.max_tables} tables for people are "
                                   "taken; try again in a few minutes")
        spec = server.spec_of(game)
        seat = self._rng.randrange(spec.n_seats)
        link = PersonLink(person, token_hash, now)
        bots = self._lobby_bots(game, spec.n_seats - 1, choice)
        others: list[Any] = [*bots, *([None] * (spec.n_seats - 1 - len(bots)))]
        self._rng.shuffle(others)
        table = start_person_table(server, link, game=game, seat=seat,
                                   limits=self.settings.limits(), tournament_id=PEOPLE,
                                   house_pace_s=self.settings.house_pace_s, others=others,
                                   house_kind=choice.house)
        held = PersonTable(table=table, game=game, seat=seat, person=person,
                           token_hash=token_hash, link=link)
        self._by_match[table.match_id] = held
        self._by_person[person] = held
        log.info("person_seated", person=person, game=game, match=table.match_id, seat=seat)
        return held

    def _lobby_bots(self, game: str, seats: int, choice: TableChoice) -> list[Any]:
        """The lobby's bots ``choice`` seats (all or none: checked before any
        is taken out); only bots whose hello opted in to playing people."""
        assert self.server is not None
        lobby = self.server.lobby
        if choice.opponents is Opponents.HOUSE:
            return []
        if choice.opponents is Opponents.ANY:
            return lobby.take_for_people(game, seats)
        waiting = {c.bot for c in lobby.for_people(game)}
        if not choice.bots:
            if not waiting:
                raise PeopleTableError(f"no bot that opted in to playing people waits for "
                                       f"{game} now; play the house bots, or try again later")
            return lobby.take_for_people(game, seats)
        missing = [b for b in choice.bots if b not in waiting]
        if missing:
            raise PeopleTableError(
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not waiting for "
                f"{game} among the bots that opted in to playing people (those waiting: "
                f"{', '.join(sorted(b for b in waiting if b)) or 'none'})")
        if len(choice.bots) > seats:
            raise PeopleTableError(f"a table of {game} has {seats} seats besides yours; "
                                   f"{len(choice.bots)} bots were named")
        return lobby.take_for_people(game, seats, choice.bots)

    def choices(self, game: str) -> dict[str, Any]:
        """What a person may choose for a table of ``game`` now."""
        server = self.server
        assert server is not None
        spec = server.spec_of(game)
        default = server.seating.house_kind(spec)
        strategies = house_strategies(spec)
        now = time.monotonic()
        lobby = server.lobby
        return {
            "game": game,
            "seats": spec.n_seats - 1,
            "house": [{"strategy": s, "strength": i + 1, "of": len(strategies),
                       "default": s == default} for i, s in enumerate(strategies)],
            "lobby": [{"bot": c.bot, "waiting_s": round(now - (lobby.waiting_since(c) or now), 1)}
                      for c in lobby.for_people(game)],
        }

    def now(self) -> float:
        """The clock pages' reads are timed on."""
        return time.monotonic()

    def get(self, match_id: str) -> PersonTable | None:
        return self._by_match.get(match_id)

    def playing(self, person: str) -> PersonTable | None:
        """The table ``person`` sits at now, if one is running."""
        held = self._by_person.get(person)
        return None if held is None or held.over else held

    def _take_back(self, held: PersonTable, now: float) -> PersonTable:
        """A new page for the seat: the old one is let go, the new one seated."""
        if held.table.session.over:
            return held  # its messages, match_end included, stay readable
        old = held.link
        old.leave()
        link = PersonLink(held.person, held.token_hash, now)
        if held.table.reattach(link):  # type: ignore[arg-type]
            held.link = link
            held.links += 1
        return held

    async def _watch_pages(self) -> None:
        period = max(0.05, min(1.0, self.settings.away_after_s / 4))
        while True:
            await asyncio.sleep(period)
            self.check_pages(time.monotonic())

    def check_pages(self, now: float) -> None:
        """Pages gone quiet leave their seats; ended tables are forgotten
        once ``keep_ended_s`` has passed."""
        settings = self.settings
        for match_id, held in list(self._by_match.items()):
            if held.over:
                if held.ended_at is None:
                    held.ended_at = now
                    if self._by_person.get(held.person) is held:
                        del self._by_person[held.person]
                elif now - held.ended_at > settings.keep_ended_s:
                    del self._by_match[match_id]
                continue
            link = held.link
            if not link.closed and now - link.last_read > settings.away_after_s:
                log.info("person_away", person=held.person, match=match_id)
                link.leave()
