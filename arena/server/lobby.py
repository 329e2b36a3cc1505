"""The lobby: connected bots that hold no seat, and how they get one.

Two ways out of the lobby:

* matchmaking (``arena serve``): as soon as a full table's worth of bots of
  one game is waiting, they are seated at random; once somebody has waited
  ``house_wait_s``, the empty seats of their game's table are filled with
  house bots, so a single bot can always get a game. Each connection waits
  for the game its hello named (``game_of``); games are never mixed.
  A table that cannot be built (a full disk fails the write of its deal key)
  sends its bots back to their places in the lobby; matchmaking pauses for
  a backoff (``retry``) and tries again, logging the failure at most once a
  minute, so the arena plays again as soon as the cause is gone;
* claiming (``arena match``, tournaments): a caller waits for an idle
  connection of one named bot that waits for the match's game. Bots that a
  tournament reserves are never taken by matchmaking.

A connection in the lobby is *waiting* while one of these ways may still
seat it: its bot is reserved or being claimed, or matchmaking may pick it.
Any other lobby connection waits for nothing; the server closes it after
its idle limit (``waiting_ids`` tells which are waiting).
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import TYPE_CHECKING, Callable, Iterable, Union

import structlog

from arena.server.errors import ServerError
from arena.server.retry import Backoff, LogThrottle

if TYPE_CHECKING:
    from arena.server.connection import BotConnection

log = structlog.get_logger("arena.lobby")


class ClaimTimeoutError(ServerError, TimeoutError):
    """A named bot did not connect (or stayed busy) in time."""


def _same_game(conn: "BotConnection") -> str:
    return ""


class Lobby:
    def __init__(self, *, seats: Union[int, Callable[[str], int]], matchmaking: bool,
                 house_wait_s: float | None,
                 start_table: Callable[[list["BotConnection"], int], None],
                 game_of: Callable[["BotConnection"], str] = _same_game,
                 retry: Backoff | None = None) -> None:
        # ``seats``: a table's seat count, or a function of the game giving it.
        self._seats = seats
        self.game_of = game_of
        self.matchmaking = matchmaking
        self.house_wait_s = house_wait_s
        self._start_table = start_table  # (bots, house seats to add)
        self._idle: dict[int, BotConnection] = {}  # insertion order = waiting order
        self._since: dict[int, float] = {}
        self._changed = asyncio.Condition()
        self._house_timer: asyncio.TimerHandle | None = None
        self.reserved: set[str] = set()  # names held by at least one tournament
        self._reservations: collections.Counter[str] = collections.Counter()
        self._claims: collections.Counter[str] = collections.Counter()  # bot -> waiting claims
        self._retry = retry or Backoff()
        self._retry_timer: asyncio.TimerHandle | None = None
        self._failure_log = LogThrottle(every_s=60.0)

    def reserve(self, names: Iterable[str]) -> None:
        """Seat these bots only when a match asks for them by name. Counted:
        two tournaments may hold one name, and the first to end must not
        free it under the other."""
        for name in set(names):
            self._reservations[name] += 1
            self.reserved.add(name)

    def release(self, names: Iterable[str]) -> None:
        for name in set(names):
            self._reservations[name] -= 1
            if self._reservations[name] <= 0:
                del self._reservations[name]
                self.reserved.discard(name)

    def seats(self, game: str) -> int:
        return self._seats if isinstance(self._seats, int) else self._seats(game)

    def __len__(self) -> int:
        return len(self._idle)

    def idle_bots(self) -> list[str]:
        return [conn.bot or "?" for conn in self._idle.values()]

    def idle_connections(self) -> list["BotConnection"]:
        return list(self._idle.values())

    def ladder_bots(self) -> list[tuple[str, str]]:
        """(bot, game) of the idle connections whose hello opted in to the ladder."""
        return [(conn.bot, self.game_of(conn)) for conn in self._candidates()
                if conn.ladder and conn.bot is not None]

    def for_people(self, game: str) -> list["BotConnection"]:
        """The idle connections of ``game`` whose hello opted in to playing
        people (``hello.people``), longest waiting first; no other bot is
        ever seated with a person."""
        return [c for c in self._candidates()
                if getattr(c, "people", False) and c.bot is not None
                and self.game_of(c) == game and c.bot not in self._claims]

    def take_for_people(self, game: str, most: int,
                        bots: Iterable[str] | None = None) -> list["BotConnection"]:
        """Up to ``most`` of :meth:`for_people`, taken out: with ``bots``, one
        connection of each bot named (those waiting), else the longest waiting."""
        waiting = self.for_people(game)
        if bots is not None:
            named, waiting = set(bots), []
            for conn in self.for_people(game):
                if conn.bot in named:
                    named.discard(conn.bot)
                    waiting.append(conn)
        taken = waiting[:most]
        for conn in taken:
            self.remove(conn)
        return taken

    def waiting_since(self, conn: "BotConnection") -> float | None:
        """When ``conn`` came into the lobby (``time.monotonic``), if it is there."""
        return self._since.get(conn.id)

    def add(self, conn: "BotConnection") -> None:
        if conn.closed or conn.id in self._idle:
            return
        self._idle[conn.id] = conn
        self._since[conn.id] = time.monotonic()
        self._notify()
        self._matchmake()

    def remove(self, conn: "BotConnection") -> None:
        self._idle.pop(conn.id, None)
        self._since.pop(conn.id, None)

    def waiting_ids(self) -> set[int]:
        """Ids of the lobby's connections that some way out may still seat."""
        matchmade = {c.id for c in self._candidates()} if self.matchmaking else set()
        return {conn.id for conn in self._idle.values()
                if conn.id in matchmade or conn.bot in self.reserved or conn.bot in self._claims}

    async def claim(self, bot: str, timeout_s: float, game: str | None = None) -> "BotConnection":
        """Take an idle connection of ``bot`` out of the lobby; with ``game``,
        only one that waits for that game."""
        self._claims[bot] += 1  # meanwhile its waiting connections are not idle
        try:
            return await self._claim(bot, timeout_s, game)
        finally:
            self._claims[bot] -= 1
            if self._claims[bot] <= 0:
                del self._claims[bot]

    async def _claim(self, bot: str, timeout_s: float, game: str | None) -> "BotConnection":
        deadline = time.monotonic() + timeout_s
        async with self._changed:
            while True:
                for conn in self._idle.values():
                    if conn.bot == bot and not conn.closed and not conn.awaiting_life \
                            and (game is None or self.game_of(conn) == game):
                        self.remove(conn)
                        return conn
                left = deadline - time.monotonic()
                if left <= 0:
                    wanted = "" if game is None else f" for {game}"
                    raise ClaimTimeoutError(f"bot {bot!r} did not connect{wanted} within "
                                            f"{timeout_s:g} s")
                try:  # not wait_for: on 3.11 it may swallow a cancel that meets the wake-up
                    async with asyncio.timeout(left):
                        await self._changed.wait()
                except TimeoutError:
                    pass

    def _notify(self) -> None:
        async def wake() -> None:
            async with self._changed:
                self._changed.notify_all()

        asyncio.get_running_loop().create_task(wake())

    def alive(self, conn: "BotConnection") -> None:
        """A connection that was awaiting life spoke: it may be seated again."""
        if conn.id in self._idle:
            self._notify()
            self._matchmake()

    def _candidates(self) -> list["BotConnection"]:
        # Not awaiting_life: a bot that let its seat time out to autopilot
        # is not seated again until it shows it is alive.
        return [c for c in self._idle.values()
                if not c.closed and c.bot not in self.reserved and not c.awaiting_life]

    def _by_game(self) -> dict[str, list["BotConnection"]]:
        """Matchmaking candidates per game, each in waiting order."""
        groups: dict[str, list[BotConnection]] = {}
        for conn in self._candidates():
            groups.setdefault(self.game_of(conn), []).append(conn)
        return groups

    def _matchmake(self) -> None:
        if not self.matchmaking or not self._may_start():
            return
        for game, candidates in self._by_game().items():
            seats = self.seats(game)
            while len(candidates) >= seats:
                group, candidates = candidates[:seats], candidates[seats:]
                if not self._start(group, 0):
                    return
        self._arm_house_timer()

    def _arm_house_timer(self) -> None:
        if self._house_timer is not None or self.house_wait_s is None or not self._candidates():
            return
        oldest = min(self._since[c.id] for c in self._candidates())
        delay = max(0.0, oldest + self.house_wait_s - time.monotonic())
        self._house_timer = asyncio.get_running_loop().call_later(delay, self._fill_with_house)

    def _fill_with_house(self) -> None:
        self._house_timer = None
        if not self._may_start():
            return
        now = time.monotonic()
        for game, candidates in self._by_game().items():
            if self.house_wait_s is None or \
                    now - self._since[candidates[0].id] < self.house_wait_s - 1e-3:
                continue
            seats = self.seats(game)
            group = candidates[:seats]
            log.info("house_fill", game=game, bots=[c.bot for c in group],
                     house=seats - len(group))
            if not self._start(group, seats - len(group)):
                return
        self._arm_house_timer()

    # -- tables that cannot be built ------------------------------------------------
    def _may_start(self) -> bool:
        """False while a failed table's backoff runs; its end tries again."""
        if self._retry.ready(time.monotonic()):
            return True
        self._arm_retry_timer()
        return False

    def _start(self, group: list["BotConnection"], house: int) -> bool:
        """Seat ``group`` (with ``house`` house bots) at a new table; on any
        failure put the group back where it waited and back off."""
        since = {conn.id: self._since[conn.id] for conn in group}
        for conn in group:
            self.remove(conn)
        try:
            self._start_table(group, house)
        except Exception as exc:  # whatever broke, the bots must not be lost
            self._put_back(group, since)
            self._start_failed(group, exc)
            return False
        ended = self._retry.succeeded()
        if ended:
            self._failure_log.reset()
            log.info("table_start_recovered", failures=ended)
        return True

    def _put_back(self, group: list["BotConnection"], since: dict[int, float]) -> None:
        # In front of the bots that came later: the waiting order is kept.
        back = {conn.id: conn for conn in group if not conn.closed}
        self._idle = {**back, **{i: c for i, c in self._idle.items() if i not in back}}
        self._since.update({i: since[i] for i in back})

    def _start_failed(self, group: list["BotConnection"], exc: Exception) -> None:
        now = time.monotonic()
        delay = self._retry.failed(now)
        held_back = self._failure_log.allow(now)
        if held_back is not None:
            log.error("table_start_failed", cause=f"{type(exc).__name__}: {exc}",
                      bots=[c.bot for c in group], retry_in_s=round(delay, 3),
                      failures=self._retry.failures, not_logged=held_back)
        self._arm_retry_timer()

    def _arm_retry_timer(self) -> None:
        if self._retry_timer is None:
            delay = self._retry.remaining(time.monotonic())
            self._retry_timer = asyncio.get_running_loop().call_later(delay, self._try_again)

    def _try_again(self) -> None:
        self._retry_timer = None
        self._matchmake()
