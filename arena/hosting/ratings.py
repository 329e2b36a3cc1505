"""The hosted ladder's ratings, kept up to date match by match.

The ladder asks for ratings on every tick (every 2 s by default). Computing
them from every stored match each time read the whole history on each tick
(up to 100,000 rows); :class:`LadderRatings` keeps the ratings and the ids
of the matches it has folded in, and on a tick reads one count and then only
the matches that finished since (newest first, so they are near the top of
the store's list). It reads everything again only when the store changed in
a way that folding cannot follow: a match finished out of order (another
node's clock), matches were deleted, or the new ones are not near the top.
The updates are those of the standings (:func:`fold_ratings`), so the result
equals a computation over all matches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from arena.storage.base import MatchRecord, MatchStatus
from arena.tournament.standings import counted, fold_ratings

log = structlog.get_logger("arena.hosting.ratings")

Ratings = dict[tuple[str, str], tuple[float, float]]  # (game, bot) -> (mu, sigma)


class MatchSource(Protocol):
    """What the ratings read of a store."""

    def count_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                      status: MatchStatus | None = None) -> int: ...

    def list_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                     status: MatchStatus | None = None, limit: int = 50,
                     offset: int = 0) -> list[MatchRecord]: ...

    def finished_matches(self, *, tournament_id: str | None = None,
                         bot: str | None = None) -> list[MatchRecord]: ...


def on_ladder(match: MatchRecord) -> bool:
    """Ladder matches are those outside tournaments (validation matches have
    a tournament id of their own, so they are unrated here)."""
    return match.tournament_id is None


def full_ladder_ratings(store: MatchSource) -> Ratings:
    """The ratings from every stored ladder match (one ordered read)."""
    matches = [m for m in store.finished_matches() if on_ladder(m)]
    return _flatten(fold_ratings(matches))


def _flatten(by_game: dict[str, dict[str, Any]]) -> Ratings:
    return {(game, bot): (r.mu, r.sigma) for game, bots in by_game.items()
            for bot, r in bots.items()}


def _order(match: MatchRecord) -> tuple[float, float, str]:
    return (match.finished_at or 0.0, match.started_at, match.id)  # as counted() sorts


@dataclass
class LadderRatings:
    """Callable: the current ladder ratings, read incrementally (runs on the
    store's thread, like every store read)."""

    store: MatchSource
    max_new_rows: int = 2000  # past this many rows of new matches, read everything
    full_reads: int = 0  # how often everything was read (the first call is one)
    _by_game: dict[str, dict[str, Any]] = field(default_factory=dict)
    _known: set[str] = field(default_factory=set)  # finished matches folded (any tournament)
    _last: tuple[float, float, str] = (0.0, 0.0, "")
    _current: Ratings = field(default_factory=dict)

    def __call__(self) -> Ratings:
        finished = self.store.count_matches(status=MatchStatus.FINISHED)
        if self.full_reads and finished == len(self._known):
            return self._current
        added = self._new_finished(finished - len(self._known)) if self.full_reads else None
        ladder = counted(m for m in (added or []) if on_ladder(m))
        if added is None or (ladder and _order(ladder[0]) <= self._last):
            self._read_all()
        else:
            self._known.update(m.id for m in added)
            if ladder:
                self._by_game = fold_ratings(ladder, self._by_game)
                self._last = _order(ladder[-1])
                self._current = _flatten(self._by_game)
        return self._current

    def _read_all(self) -> None:
        self.full_reads += 1
        matches = self.store.finished_matches()
        ladder = counted(m for m in matches if on_ladder(m))
        self._known = {m.id for m in matches}
        self._by_game = fold_ratings(ladder)
        self._last = _order(ladder[-1]) if ladder else (0.0, 0.0, "")
        self._current = _flatten(self._by_game)
        log.info("ladder_ratings_read", matches=len(matches), rated=len(ladder))

    def _new_finished(self, wanted: int) -> list[MatchRecord] | None:
        """The ``wanted`` finished matches not folded in yet, from the top of
        the store's list (newest started first); None when they are not
        within ``max_new_rows`` or matches went missing."""
        if wanted < 0:
            return None  # matches were deleted: the ratings must forget them
        found: list[MatchRecord] = []
        offset, size = 0, max(16, 2 * wanted)
        while offset < self.max_new_rows and len(found) < wanted:
            size = min(size, self.max_new_rows - offset)
            page = self.store.list_matches(status=MatchStatus.FINISHED, limit=size, offset=offset)
            found += [m for m in page if m.id not in self._known]
            if len(page) < size:
                break
            offset += size
            size = min(2 * size, 500)
        return found if len(found) >= wanted else None
