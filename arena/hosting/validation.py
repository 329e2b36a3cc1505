"""The validation match: a new version plays once, unrated, before the ladder.

A ready version (built, and it said hello) first plays one match against
house bots. It passes unless it

- crashed: its connection ended during the match (its program exited or was
  killed, for instance past its memory limit), or it never connected;
- timed out every decision: not one answer in time;
- answered illegally throughout: every answer it sent was refused.

A version that fails is ``failed`` with that reason and the match's id (the
match is stored like any other, so its owner can replay it); it never
reaches the ladder, and the version that played before keeps playing. The
match is stored under the tournament id :data:`VALIDATION_SCOPE`, which no
ladder counts (ladders read matches outside tournaments), so it is unrated.

:func:`judge` is the rule, pure; :func:`play_validation` plays the match.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

import structlog

from arena.hosting.errors import HostingError
from arena.hosting.hosted import HostedBots
from arena.hosting.versions import BotVersion

log = structlog.get_logger("arena.hosting.validation")

VALIDATION_SCOPE = "validation"  # the tournament id of every validation match


@dataclass(frozen=True)
class ValidationResult:
    passed: bool
    match_id: str | None
    reason: str | None = None  # why it failed, in a sentence
    answered: int = 0  # decisions answered legally and in time
    timeouts: int = 0
    illegal: int = 0

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


def judge(*, answered: int, timeouts: int, illegal: int, disconnects: int,
          aborted: str | None = None) -> str | None:
    """Why a version fails its validation match, or None if it passes."""
    if disconnects:
        return ("it crashed: its connection ended during the match (its program exited or "
                "was killed, for instance past its memory limit)")
    if answered == 0 and illegal > 0:
        return f"it answered illegally throughout ({illegal} refused answers, none accepted)"
    if answered == 0:
        return f"it timed out every decision ({timeouts} timeouts, no answer in time)"
    # (a bot that never answered aborts the match too: the reason above says more)
    if aborted is not None:
        return f"the match was aborted: {aborted}"
    return None


async def play_validation(server: Any, hosted: HostedBots, version: BotVersion, *,
                          claim_timeout_s: float = 20.0,
                          house_bot: str | None = None) -> ValidationResult:
    """Play ``version``'s validation match (its bot alone against house bots)
    and record the result on the version; returns it."""
    from arena.server.server import PlayerSpec

    bot, game = version.bot, version.game
    # One node of the store plays it; the others' ladders see the result.
    if not await asyncio.to_thread(hosted.versions.claim_validation, version):
        raise HostingError(f"{bot} v{version.version}: another node plays its validation "
                           "match, or it was played")
    seats = server.seats_for(None, game)
    kind = house_bot or server.spec_of(game).default_house_bot
    players = [PlayerSpec(bot)] + [PlayerSpec(f"house-{kind}-{i + 1}", house=kind)
                                   for i in range(seats - 1)]
    match_id: str | None = None
    try:
        await hosted.start(bot, version.version)
        outcome = await server.play_match(players, game=game, tournament_id=VALIDATION_SCOPE,
                                          claim_timeout_s=claim_timeout_s)
        match_id = outcome.match_id
        match = await server.writer.read(lambda: server.store.get_match(match_id))
        seat = match.players.index(bot)
        faults = match.faults[seat] if match.faults else None
        answered = len(match.latency_ms[seat]) if match.latency_ms else 0
        timeouts = faults.timeouts if faults else 0
        illegal = faults.illegal if faults else 0
        reason = judge(answered=answered, timeouts=timeouts, illegal=illegal,
                       disconnects=faults.disconnects if faults else 0, aborted=outcome.aborted)
        result = ValidationResult(reason is None, match_id, reason, answered, timeouts, illegal)
    except TimeoutError:
        result = ValidationResult(False, None, f"it crashed: it did not connect within "
                                               f"{claim_timeout_s:g} s of its start")
    finally:
        await hosted.stop(bot, match_id)
    await asyncio.to_thread(hosted.versions.record_validation, version, result.to_wire())
    log.info("validation_match", bot=bot, version=version.version, match=match_id,
             passed=result.passed, reason=result.reason)
    return result


def pending(versions: list[BotVersion]) -> list[BotVersion]:
    """Ready versions that have not played their validation match."""
    return [v for v in versions if v.validation is None]

