"""The hosted ladder: ready hosted bots keep playing rated matches.

Every ``interval_s`` the ladder starts a match if fewer than
``max_tables`` of its own are running. Who plays (:func:`choose_table`, pure):

1. the *anchor* is the bot most in need of a game — a version still in its
   placement matches first, then the one that played least recently; remote
   bots whose hello said ``"ladder": true`` take part like hosted ones;
2. the other seats go to the bots whose ratings are closest to the anchor's,
   a bot that played a lot recently weighing as if it were further away, with
   a little noise so the same five do not meet forever;
3. seats nobody can take are filled with house bots, so a lone hosted bot
   still plays.

A version not yet validated plays its validation match
(:mod:`.validation`: unrated, against house bots) before any ladder table;
one such match at a time, counted among the ladder's tables.

Each table plays one game: the anchor's (a hosted version says its game in
``arena-bot.toml``; Muushig by default). Ladder matches are ordinary matches
outside tournaments, so they count on the ladder standings of their game.

Every node of a store runs a ladder, and any node can start any hosted bot:
a hosted bot plays one match of the whole store at a time. The ladder
leaves out the bots another node has seated and claims the seats of its
table's hosted bots before it starts them (:mod:`.seats`); a table whose
seat another node took first is not played, and the next tick chooses again.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import structlog

from arena.hosting.errors import HostingError, SeatTakenError
from arena.hosting.hosted import HostedBots
from arena.hosting.seats import SeatSettings, seated
from arena.hosting.validation import ValidationResult, pending, play_validation
from arena.hosting.versions import BotVersion
from arena.storage.base import StorageError

log = structlog.get_logger("arena.hosting.ladder")


@dataclass(frozen=True)
class LadderEntrant:
    name: str
    game: str = "muushig"
    rating_mu: float = 25.0
    rating_sigma: float = 25.0 / 3
    matches: int = 0  # of its active version
    last_played: float = 0.0


@dataclass(frozen=True)
class LadderSettings:
    interval_s: float = 2.0  # one new match at most this often
    max_tables: int = 2
    placement_matches: int = 5
    recent_penalty: float = 2.0  # rating points per match played in the last window
    house_bot: str | None = None
    claim_timeout_s: float = 20.0
    # A hosted bot's seat: its lease and when a node that cannot renew it gives it up.
    seats: SeatSettings = field(default_factory=SeatSettings)


@dataclass(frozen=True)
class LadderSnapshot:
    """What one tick of the ladder knows, read off the event loop: the
    ratings and removed bots, the version each hosted bot plays (one row per
    bot, not its whole history) and the hosted bots other nodes have seated."""

    ratings: dict[tuple[str, str], tuple[float, float]]
    ready: list[BotVersion]
    removed: frozenset[str] = frozenset()
    seated_elsewhere: frozenset[str] = frozenset()


def choose_table(entrants: list[LadderEntrant], seats: int, *, settings: LadderSettings,
                 rng: random.Random, recent: dict[str, int] | None = None) -> list[str]:
    """Names of the hosted bots for the next table (at most ``seats``)."""
    if not entrants:
        return []
    recent = recent or {}

    def need(e: LadderEntrant) -> tuple[int, float, float]:
        in_placement = e.matches < settings.placement_matches
        return (0 if in_placement else 1, e.last_played, rng.random())

    anchor = min(entrants, key=need)
    entrants = [e for e in entrants if e.game == anchor.game]  # a table plays one game

    def distance(e: LadderEntrant) -> float:
        return (abs(e.rating_mu - anchor.rating_mu) + settings.recent_penalty * recent.get(e.name, 0)
                + rng.uniform(0, 1.0))

    others = sorted((e for e in entrants if e.name != anchor.name), key=distance)
    return [anchor.name, *(e.name for e in others[: seats - 1])]


class Ladder:
    """Runs the hosted ladder on one arena server.

    ``server`` is an :class:`~arena.server.server.ArenaServer`
    (``play_match``, ``seats_for``, ``writer``); ``ratings()`` returns the
    current ladder ratings ``{(game, bot): (mu, sigma)}`` and runs on
    the store's thread (the service passes a :class:`~.ratings.LadderRatings`,
    which reads only the matches that finished since its last call).
    """

    def __init__(self, server: Any, hosted: HostedBots, *, settings: LadderSettings = LadderSettings(),
                 ratings: Callable[[], dict[tuple[str, str], tuple[float, float]]] = dict,
                 rng: random.Random | None = None) -> None:
        self.server = server
        self.hosted = hosted
        self.settings = settings
        self.ratings = ratings
        self.rng = rng or random.Random()
        self.playing: set[str] = set()
        self._recent: list[tuple[float, list[str]]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self.finished: list[str] = []  # match ids, newest last
        self.validated: list[ValidationResult] = []  # validation matches, newest last
        self._validating = False
        # Versions whose validation match this node could not play, already
        # logged: another node plays it for minutes, and every tick asks.
        self._not_validated: set[tuple[str, int]] = set()

    async def read_snapshot(self) -> LadderSnapshot:
        """Store reads on the store's thread, version files on another: never
        on the loop that times the bots."""
        ratings, removed = await self.server.writer.read(self._store_reads)
        ready, seated_elsewhere = await asyncio.to_thread(self._hosted_reads)
        return LadderSnapshot(ratings, ready, removed, frozenset(seated_elsewhere))

    def _hosted_reads(self) -> tuple[list[BotVersion], set[str]]:
        # Seated elsewhere, or here by a tournament's entrants: not free.
        return (self.hosted.ready_bots(),
                self.hosted.versions.seated_elsewhere() | self.hosted.seated_here())

    def _store_reads(self) -> tuple[dict[tuple[str, str], tuple[float, float]], frozenset[str]]:
        removed = frozenset(b.name for b in self.server.store.list_bots() if b.removed)
        return self.ratings(), removed

    def entrants(self, snapshot: LadderSnapshot | None = None) -> list[LadderEntrant]:
        """Who may be seated now (``snapshot`` None: read here, for tests)."""
        if snapshot is None:
            snapshot = LadderSnapshot({}, self.hosted.ready_bots())
        ratings, removed = snapshot.ratings, snapshot.removed
        found = []
        for version in snapshot.ready:
            if version.bot in self.playing or version.bot in removed or not version.validated \
                    or version.bot in snapshot.seated_elsewhere:
                continue
            mu, sigma = ratings.get((version.game, version.bot), (25.0, 25.0 / 3))
            last = max((t for t, names in self._recent if version.bot in names), default=0.0)
            found.append(LadderEntrant(version.bot, version.game, mu, sigma,
                                       len(version.matches), last))
        hosted = {e.name for e in found} | self.playing | snapshot.seated_elsewhere
        for name, game in self.server.ladder_bots():  # remote bots that opted in
            if name in hosted or name in removed:
                continue
            mu, sigma = ratings.get((game, name), (25.0, 25.0 / 3))
            last = max((t for t, names in self._recent if name in names), default=0.0)
            # Remote bots need no placement: they are rated on the lobby's ladder.
            found.append(LadderEntrant(name, game, mu, sigma, 1 << 30, last))
        return found

    def _recent_counts(self, window_s: float = 600.0) -> dict[str, int]:
        cutoff = time.time() - window_s
        self._recent = [(t, names) for t, names in self._recent if t >= cutoff]
        counts: dict[str, int] = {}
        for _, names in self._recent:
            for name in names:
                counts[name] = counts.get(name, 0) + 1
        return counts

    async def run(self) -> None:
        try:
            while True:
                if len(self._tasks) < self.settings.max_tables:
                    snapshot = await self.read_snapshot()
                    if self.validate_one(snapshot) is None:
                        self.start_one(snapshot)
                await asyncio.sleep(self.settings.interval_s)
        finally:
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.wait(self._tasks, timeout=5)

    def validate_one(self, snapshot: LadderSnapshot) -> asyncio.Task[Any] | None:
        """Start the validation match of a ready version that has not played
        one (one at a time); None if there is none to play."""
        if self._validating:
            return None
        waiting = [v for v in pending(snapshot.ready)
                   if v.bot not in self.playing and v.bot not in snapshot.removed
                   and v.bot not in snapshot.seated_elsewhere]
        if not waiting:
            return None
        version = min(waiting, key=lambda v: v.created_at)
        self.playing.add(version.bot)
        self._validating = True
        task = asyncio.get_running_loop().create_task(self._validate(version))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _validate(self, version: BotVersion) -> None:
        try:
            # Its bot may play its previous version on another node now.
            async with seated(self.hosted.versions, [version.bot],
                              lease_s=self.settings.seats.lease_s,
                              give_up_s=self.settings.seats.give_up_s, on_lost=self._seat_lost):
                result = await play_validation(self.server, self.hosted, version,
                                               claim_timeout_s=self.settings.claim_timeout_s,
                                               house_bot=self.settings.house_bot)
            self.validated.append(result)
        except HostingError as exc:
            # Another node plays it, or it was removed or replaced meanwhile:
            # the next tick sees that. Said once per version, not every tick.
            key = (version.bot, version.version)
            loud = key not in self._not_validated and not isinstance(exc, SeatTakenError)
            if loud:
                self._not_validated.add(key)
            (log.warning if loud else log.debug)(
                "validation_not_played", bot=version.bot, version=version.version,
                error=str(exc))
        except StorageError as exc:  # the store is away: a later tick tries again
            log.warning("validation_not_played", bot=version.bot, version=version.version,
                        error=str(exc))
        finally:
            self.playing.discard(version.bot)
            self._validating = False

    async def _seat_lost(self, bot: str) -> None:
        """Its seat could not be kept: its run stops before another node may
        start one (the match goes on, the bot's seat played by autopilot)."""
        await self.hosted.stop(bot)

    def start_one(self, snapshot: LadderSnapshot | None = None) -> asyncio.Task[Any] | None:
        entrants = self.entrants(snapshot)
        games = {e.name: e.game for e in entrants}
        # At most as many as the largest table; choose_table keeps one game.
        names = choose_table(entrants, max(self.server.seats_for(None, game) for game in
                                           set(games.values())) if entrants else 0,
                             settings=self.settings, rng=self.rng, recent=self._recent_counts())
        if not names:
            return None
        game = games[names[0]]
        seats = self.server.seats_for(None, game)
        names = names[:seats]
        self.playing.update(names)
        hosted = {v.bot for v in (snapshot.ready if snapshot else self.hosted.ready_bots())}
        task = asyncio.get_running_loop().create_task(
            self._play(names, seats, game, hosted & set(names)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _play(self, names: list[str], seats: int, game: str,
                    hosted: set[str]) -> str | None:
        from arena.server.server import PlayerSpec

        kind = self.settings.house_bot or self.server.spec_of(game).default_house_bot
        players = [PlayerSpec(name) for name in names]
        players += [PlayerSpec(f"house-{kind}-{i + 1}", house=kind) for i in range(seats - len(names))]
        self.rng.shuffle(players)
        match_id: str | None = None
        try:
            # Remote bots that opted in are on this node's lobby alone: only
            # hosted ones need a seat of the store.
            async with seated(self.hosted.versions, hosted, lease_s=self.settings.seats.lease_s,
                              give_up_s=self.settings.seats.give_up_s,
                              on_lost=self._seat_lost):
                try:
                    for name in names:
                        if name in hosted:  # remote bots are connected already
                            await self.hosted.start(name)
                    outcome = await self.server.play_match(
                        players, game=game, claim_timeout_s=self.settings.claim_timeout_s)
                    match_id = outcome.match_id
                finally:  # stopped before its seat is given back
                    for name in names:
                        await self.hosted.stop(name, match_id)
            self._recent.append((time.time(), names))
            self.finished.append(match_id)
            log.info("ladder_match", match=match_id, bots=names, aborted=outcome.aborted)
            return match_id
        except SeatTakenError as exc:  # another node seated it first: the next tick chooses again
            log.info("ladder_match_not_played", bots=names, error=str(exc))
            return None
        except (HostingError, TimeoutError, StorageError) as exc:
            log.warning("ladder_match_not_played", bots=names, error=str(exc))
            return None
        finally:
            self.playing.difference_update(names)
