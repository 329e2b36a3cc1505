"""What the game-neutral checks need to know about each game's script.

The generic checks (deadline, unknown fields, two matches at once, errors
naming their match, a short deadline, reconnecting, reseating, bye) run the
same way in every game; each game says which match to play, which phase to
ask again and again, and what the bot sees before its first request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from arena.checkbot import script, thirteen
from arena.checkbot.hand import Phase
from arena.checkbot.session import ScriptMatch


class UnknownGameError(ValueError):
    """``--game`` names a game the checker has no script for."""


@dataclass(frozen=True, slots=True)
class GameScript:
    name: str
    first_phase: Phase  # the phase of match A's first request
    phase: Phase  # the phase the generic checks ask for
    opening: str  # the events before the first request, as a bot author reads them
    # Muushig lists every legal answer, so a bot always has another one to
    # send after illegal_action; a thirteen bot may resubmit (thirteen §5.4)
    # or leave the request to the server's default.
    retry_required: bool
    main_match: Callable[[str, int], ScriptMatch]
    # (bot name, decision_ms, first id, match id, players or None) -> a one-request match
    short_match: Callable[[str, int, int, str, int | None], ScriptMatch]


def _muushig_short(name: str, decision_ms: int, first_id: int, match_id: str, players: int | None) -> ScriptMatch:
    return script.match_b(name, decision_ms, first_id=first_id, match_id=match_id)


def _thirteen_short(name: str, decision_ms: int, first_id: int, match_id: str, players: int | None) -> ScriptMatch:
    return thirteen.match_b(name, decision_ms, first_id=first_id, match_id=match_id, players=players or 4)


GAMES: dict[str, GameScript] = {
    "muushig": GameScript(
        name="muushig", first_phase=Phase.DECIDE, phase=Phase.PLAY,
        opening="round_start, commit, hand_start", retry_required=True,
        main_match=script.match_a, short_match=_muushig_short,
    ),
    "thirteen": GameScript(
        name="thirteen", first_phase=Phase.ARRANGE, phase=Phase.ARRANGE,
        opening="commit, deal_start", retry_required=False,
        main_match=thirteen.match_a, short_match=_thirteen_short,
    ),
}


def game_script(name: str) -> GameScript:
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGameError(f"the checker knows the games {', '.join(GAMES)}, not {name!r}") from None
