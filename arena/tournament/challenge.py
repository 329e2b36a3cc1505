"""Challenges on demand: the rules, without I/O.

A bot's owner asks for N unrated matches of the bot against named
opponents of the same game. A challenge is kept as a tournament record of
kind ``challenge`` (its id starts with :data:`CHALLENGE_PREFIX`) with one
schedule slot per match, so its matches are stored under its id: the
ladder (matches outside tournaments) never sees them, and neither ratings
nor standings change. Its own result table is the tournament standings of
that id.

What this module decides (each a pure function, tested one rule at a time):

* who may be challenged (:func:`check_request`);
* the quota per bot: matches asked for in the last day, and matches asked
  for and not yet played (:func:`check_quota`);
* the share of the running tables challenges may take (:func:`may_start`);
* the seats of each match: the challenger and its opponents, empty seats
  filled with house bots, seats rotated from match to match
  (:func:`challenge_schedule`).
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from typing import Any

from arena.storage.base import ScheduledMatch, TournamentRecord, TournamentStatus
from arena.tournament.errors import TournamentError
from arena.tournament.schedule import house_bot_names

# Tournament ids made from a name (slug + hex) never contain "_"; ids an
# organiser gives over HTTP may not start with this prefix.
CHALLENGE_PREFIX = "challenge_"
KIND = "challenge"
DAY_S = 86_400.0


def is_challenge_id(tournament_id: str | None) -> bool:
    return tournament_id is not None and tournament_id.startswith(CHALLENGE_PREFIX)


def is_challenge(record: TournamentRecord) -> bool:
    return is_challenge_id(record.id) and record.config.get("kind") == KIND


def new_challenge_id() -> str:
    return CHALLENGE_PREFIX + secrets.token_hex(6)


class ChallengeError(TournamentError, ValueError):
    """A challenge that cannot be accepted as asked (the message says why)."""


class QuotaExceededError(ChallengeError):
    """The bot's quota does not hold this many more challenge matches now."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class ChallengeLimits:
    """How much of the arena challenges may take."""

    per_day: int = 100  # matches a bot may ask for in any 24 hours
    in_flight: int = 20  # matches a bot may have asked for and not yet played
    max_matches: int = 50  # in one challenge
    table_share: float = 0.25  # of the running tables, at most this share are challenges'...
    min_tables: int = 1  # ...but this many may always run, so an idle arena plays them
    max_attempts: int = 3  # a match aborted this often is given up
    claim_timeout_s: float = 30.0  # how long a match waits for a named bot to be free


@dataclass(frozen=True)
class ChallengeRequest:
    challenger: str
    game: str
    opponents: tuple[str, ...]
    matches: int
    house_bot: str | None = None


@dataclass(frozen=True)
class ChallengeUse:
    """One earlier challenge of the same bot, as the quota counts it."""

    created_at: float
    matches: int  # asked for
    unplayed: int  # asked for, not yet played (0 once it ended)


@dataclass(frozen=True)
class ChallengeView:
    """What a challenge's record says, read back."""

    id: str
    challenger: str
    game: str
    opponents: tuple[str, ...]
    matches: int
    status: TournamentStatus
    created_at: float
    house_bot: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, record: TournamentRecord) -> "ChallengeView":
        c = record.config
        return cls(id=record.id, challenger=str(c.get("challenger")), game=record.game,
                   opponents=tuple(c.get("opponents") or ()), matches=int(c.get("matches", 0)),
                   status=record.status, created_at=record.created_at,
                   house_bot=c.get("house_bot"))


def check_request(request: ChallengeRequest, *, seats: int, eligible: set[str],
                  limits: ChallengeLimits) -> None:
    """Raise ChallengeError unless ``request`` may be played: at least one
    opponent, no more than a table holds, each named once, none the
    challenger itself, each in ``eligible`` (the bots of the game on the
    ladder, hosted, or connected and opted in)."""
    if not 1 <= request.matches <= limits.max_matches:
        raise ChallengeError(f"matches must be 1 to {limits.max_matches}; got {request.matches}")
    if not request.opponents:
        raise ChallengeError("name at least one opponent")
    if len(request.opponents) > seats - 1:
        raise ChallengeError(f"a {request.game} table has {seats} seats: name at most "
                             f"{seats - 1} opponents; got {len(request.opponents)}")
    if len(set(request.opponents)) != len(request.opponents):
        raise ChallengeError("each opponent may be named once")
    if request.challenger in request.opponents:
        raise ChallengeError(f"{request.challenger!r} cannot challenge itself")
    strangers = [o for o in request.opponents if o not in eligible]
    if strangers:
        raise ChallengeError(
            f"not open to challenges in {request.game}: {', '.join(strangers)} (an opponent "
            "must be a bot of the game on the ladder, a hosted bot, or connected with "
            "\"ladder\": true in its hello)")


def check_quota(bot: str, matches: int, earlier: list[ChallengeUse], *, now: float,
                limits: ChallengeLimits) -> None:
    """Raise QuotaExceededError if ``matches`` more would take ``bot`` over
    its matches per day or its matches waiting to be played."""
    waiting = sum(u.unplayed for u in earlier)
    if waiting + matches > limits.in_flight:
        raise QuotaExceededError(
            f"bot {bot!r} has {waiting} challenge matches waiting to be played and may have "
            f"at most {limits.in_flight}: ask for at most {max(0, limits.in_flight - waiting)} "
            "now, or wait for some to be played", retry_after_s=60.0)
    recent = sorted((u for u in earlier if u.created_at > now - DAY_S),
                    key=lambda u: u.created_at)
    used = sum(u.matches for u in recent)
    if used + matches > limits.per_day:
        # The day frees up as the oldest challenges in it age out.
        freed, retry = used, DAY_S
        for u in recent:
            freed -= u.matches
            if freed + matches <= limits.per_day:
                retry = u.created_at + DAY_S - now
                break
        raise QuotaExceededError(
            f"bot {bot!r} asked for {used} challenge matches in the last 24 hours and may ask "
            f"for at most {limits.per_day}: ask for at most {max(0, limits.per_day - used)} "
            f"now, or again in {math.ceil(retry)} s", retry_after_s=max(1.0, retry))


def may_start(challenge_tables: int, other_tables: int, limits: ChallengeLimits) -> bool:
    """Whether one more challenge table may start while these run: challenge
    tables stay within ``table_share`` of all running tables (the new one
    counted), or within ``min_tables``."""
    total = challenge_tables + other_tables + 1
    allowed = max(limits.min_tables, math.floor(limits.table_share * total))
    return challenge_tables + 1 <= allowed


def challenge_schedule(challenge_id: str, request: ChallengeRequest, *, seats: int,
                       house_bot: str) -> list[ScheduledMatch]:
    """One slot per match: the challenger, its opponents and house bots in
    the empty seats, rotated one seat per match so every bot plays every
    position in turn."""
    names = [request.challenger, *request.opponents]
    table = names + house_bot_names(house_bot, seats - len(names))
    return [ScheduledMatch(tournament_id=challenge_id, slot=i,
                           players=table[i % seats:] + table[:i % seats],
                           seed=f"{challenge_id}:{i}", extra={"rotation": i % seats})
            for i in range(request.matches)]


def challenge_record(challenge_id: str, request: ChallengeRequest, *, now: float,
                     house_bot: str) -> TournamentRecord:
    config = {"kind": KIND, "name": f"challenge by {request.challenger}",
              "game": request.game, "challenger": request.challenger,
              "opponents": list(request.opponents), "matches": request.matches,
              "house_bot": house_bot}
    return TournamentRecord(id=challenge_id, name=str(config["name"]), game=request.game,
                            config=config, status=TournamentStatus.PENDING, created_at=now)


def use_of(record: TournamentRecord, schedule: list[ScheduledMatch]) -> ChallengeUse:
    ended = record.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
    unplayed = 0 if ended else sum(1 for s in schedule if s.match_id is None)
    return ChallengeUse(created_at=record.created_at,
                        matches=int(record.config.get("matches", len(schedule))),
                        unplayed=unplayed)


def next_slots(schedule: list[ScheduledMatch], playing: set[int],
               limits: ChallengeLimits) -> list[ScheduledMatch]:
    """Slots still to play, in order: no match yet, not playing now, not
    given up after ``max_attempts`` aborted tries."""
    return [s for s in schedule if s.match_id is None and s.slot not in playing
            and s.attempts < limits.max_attempts]


def is_done(schedule: list[ScheduledMatch], limits: ChallengeLimits) -> bool:
    """Every slot played or given up."""
    return all(s.match_id is not None or s.attempts >= limits.max_attempts for s in schedule)
