"""Challenges in the store: create one within its bot's quota, read one back.

Each function runs on the store's thread (the server's writer, one at a
time); checking a quota and creating the challenge that uses it also hold
the bot's section of the store (arena/storage/section.py), so they cannot
interleave with a request of the same bot on another node or process.
"""

from __future__ import annotations

from typing import Any

from arena.storage.base import MatchStatus, NotFoundError, Store, TournamentRecord
from arena.storage.section import exclusive
from arena.tournament.challenge import (
    ChallengeLimits,
    ChallengeRequest,
    ChallengeView,
    challenge_record,
    challenge_schedule,
    check_quota,
    is_challenge,
    new_challenge_id,
    use_of,
)

Wire = dict[str, Any]


def challenges_of(store: Store, bot: str | None = None) -> list[TournamentRecord]:
    """Challenges (of ``bot`` when given, as challenger), newest first."""
    found = [r for r in store.list_tournaments() if is_challenge(r)
             and (bot is None or r.config.get("challenger") == bot)]
    return sorted(found, key=lambda r: r.created_at, reverse=True)


def create_challenge(store: Store, request: ChallengeRequest, *, limits: ChallengeLimits,
                     now: float, seats: int, house_bot: str) -> TournamentRecord:
    """Check the challenger's quota, then store the challenge and its slots
    (raises QuotaExceededError, nothing stored)."""
    with exclusive(store, f"challenge-quota:{request.challenger}"):
        earlier = [use_of(r, store.get_schedule(r.id))
                   for r in challenges_of(store, request.challenger)]
        check_quota(request.challenger, request.matches, earlier, now=now, limits=limits)
        cid = new_challenge_id()
        record = challenge_record(cid, request, now=now, house_bot=house_bot)
        store.create_tournament(record, challenge_schedule(cid, request, seats=seats,
                                                           house_bot=house_bot))
    return record


def get_challenge(store: Store, challenge_id: str) -> TournamentRecord:
    record = store.get_tournament(challenge_id)
    if not is_challenge(record):
        raise NotFoundError(f"no challenge with id {challenge_id!r}")
    return record


def challenge_wire(store: Store, record: TournamentRecord, *,
                   limits: ChallengeLimits | None = None) -> Wire:
    """A challenge as the API shows it: what was asked, its state, its slots."""
    view = ChallengeView.of(record)
    schedule = store.get_schedule(record.id)
    max_attempts = (limits or ChallengeLimits()).max_attempts
    played = [s.match_id for s in schedule if s.match_id is not None]
    given_up = sum(1 for s in schedule if s.match_id is None and s.attempts >= max_attempts)
    return {"id": view.id, "challenger": view.challenger, "game": view.game,
            "opponents": list(view.opponents), "matches": view.matches,
            "house_bot": view.house_bot, "state": view.status.value,
            "created_at": view.created_at, "finished_at": record.finished_at,
            "played": len(played), "given_up": given_up,
            "waiting": len(schedule) - len(played) - given_up,
            "match_ids": played, "url": f"/challenges/{view.id}"}


def ladder_games_of(store: Store, bot: str, limit: int = 200) -> set[str]:
    """Games in which ``bot`` played a finished match outside tournaments
    (among its last ``limit`` matches): it is on those ladders."""
    return {m.game for m in store.list_matches(bot=bot, status=MatchStatus.FINISHED, limit=limit)
            if m.tournament_id is None}
