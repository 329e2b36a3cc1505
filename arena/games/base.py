"""The game-neutral interface every game engine offers the arena.

The server, tables, storage and web know games only through this module: a
new game plugs in by registering a :class:`GameSpec` in ``arena.games`` and
never touches the server.

Rules for engines (the "sans-IO" discipline):

* No asyncio, sockets, clock, logging set-up or module-level ``random``.
  Chance comes from an injected ``random.Random`` or from explicit deck
  orders, so a match replays exactly from (decks, actions).
* Actions and legal lists are in wire form (protocol.md §3): plain strings,
  lists, ``None`` -- exactly what a bot sends and receives.
* Forced decisions are applied by the engine itself and announced as events;
  ``current_seat`` only ever names a seat with a real choice.
* Check, then apply: ``check_action`` / ``check_for`` turn a wire action
  into a :class:`CheckedAction` (or raise :class:`IllegalActionError`), and
  ``apply`` takes only that, for the decision it was checked in; ``play`` /
  ``play_for`` do both for callers that need no split.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Final, Generic, Sequence, TypeVar, final

# The interface itself lives in arena.games.interface; these names are
# imported from here throughout.
from arena.games.interface import (
    DealInfo,
    GameAction,
    GameEngine,
    GameEvent,
    Wire,
)

__all__ = ["CheckedAction", "DealInfo", "GameAction", "GameEngine", "GameError", "GameEvent",
           "GameSpec", "HouseBot", "IllegalActionError", "NotYourTurnError", "RuleConfigError",
           "SequentialGame", "StaleActionError", "Wire"]


class GameError(Exception):
    """Base of every error an engine raises."""


class IllegalActionError(GameError):
    """A bot's answer is not one of the legal actions.

    The message says why in terms a bot author can act on, e.g.
    "must follow suit: you hold a heart (8H, KH)".
    """


class NotYourTurnError(GameError):
    """An action was applied for a seat that is not to move, or after the end."""


class RuleConfigError(GameError):
    """A rules dictionary names an unknown option or an invalid value."""


class StaleActionError(GameError):
    """A :class:`CheckedAction` was applied outside the decision it was
    checked in: after the state moved on, a second time, or to another
    match. A caller's mistake, never a bot's: check the answer again."""


Detail = TypeVar("Detail")


@final
class CheckedAction(Generic[Detail]):
    """A legal action, checked for one decision of one match.

    What ``check_action`` / ``check_for`` return and the only thing
    ``apply`` takes, so an answer is checked once and cannot be applied to a
    decision it was not checked for. ``action`` is the canonical wire form
    (what events and records show); ``detail`` is what the check worked out
    that ``apply`` uses instead of checking again (the Muushig engine's fast
    code, a thirteen split). ``decision`` is the engine's own count of the
    decision it answers, compared by ``apply`` with the pending one.

    Read-only by agreement, like an event. A plain class, not a frozen
    dataclass: one is made per decision, and a compiled dataclass still
    builds its instances through an interpreted ``__init__``.
    """

    __slots__ = ("engine", "seat", "decision", "action", "detail")

    def __init__(self, engine: object, seat: int, decision: int, action: GameAction,
                 detail: Detail) -> None:
        self.engine = engine
        self.seat = seat
        self.decision = decision
        self.action = action
        self.detail = detail

    def __repr__(self) -> str:
        return f"CheckedAction(seat={self.seat}, decision={self.decision}, action={self.action!r})"


def stale_action(checked: CheckedAction[Any], engine: object, decision: int,
                 unit: str = "decision") -> StaleActionError:
    """Why ``engine``, at ``decision`` (its count of decisions, or of
    ``unit``), refuses ``checked``. Called once the refusal is certain: the
    tests themselves are inlined in each engine's ``apply``."""
    if checked.engine is not engine:
        where = "another match"
    elif checked.decision < decision:
        where = (f"{unit} {checked.decision}, and {unit} {decision} is pending "
                 "(it was applied already, or the match moved on)")
    else:
        where = f"{unit} {checked.decision}, which is not pending ({unit} {decision} is)"
    return StaleActionError(f"seat {checked.seat}'s {checked.action!r} was checked for {where}: "
                            "check the answer again before applying it")


class SequentialGame:
    """The seat-addressed API, for a game where one seat acts at a time.

    The table asks ``to_act`` which seats owe a decision and addresses each
    call to a seat, so a game with simultaneous decisions plugs in the same
    way. A sequential engine mixes this in and keeps its one-seat API
    (``current_seat``, ``phase``, ``legal_actions``, ``check_action``,
    ``apply``, ``default_action``); a call for any other seat than the one
    to move raises :class:`NotYourTurnError`. ``apply`` needs no seat: a
    checked action knows the seat it was checked for.
    """

    # The one-seat API each engine defines; these bodies only name it (a
    # compiled engine overrides methods, not annotations).
    current_seat: int | None

    @property
    def phase(self) -> str | None:
        raise NotImplementedError

    def legal_actions(self) -> list[GameAction]:
        raise NotImplementedError

    def check_action(self, action: GameAction) -> CheckedAction[Any]:
        raise NotImplementedError

    def apply(self, checked: CheckedAction[Any]) -> Sequence[GameEvent]:
        raise NotImplementedError

    def default_action(self) -> GameAction:
        raise NotImplementedError

    def play(self, action: GameAction) -> Sequence[GameEvent]:
        """Check ``action`` for the seat to act and apply it."""
        return self.apply(self.check_action(action))

    @property
    def to_act(self) -> tuple[int, ...]:
        seat = self.current_seat
        return () if seat is None else (seat,)

    def _not_to_act(self, seat: int) -> NotYourTurnError:
        return NotYourTurnError(f"seat {seat} owes no decision now "
                                f"(seat {self.current_seat} is to act)")

    # The check is inlined: these run once or twice per decision.
    def phase_for(self, seat: int) -> str:
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return self.phase or ""

    def request_for(self, seat: int) -> Wire:
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return {"legal": self.legal_actions()}

    def check_for(self, seat: int, action: GameAction) -> CheckedAction[Any]:
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return self.check_action(action)

    def play_for(self, seat: int, action: GameAction) -> Sequence[GameEvent]:
        """Check ``seat``'s ``action`` and apply it."""
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return self.play(action)

    def default_for(self, seat: int) -> GameAction:
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return self.default_action()


# A house bot has the same shape as an SDK bot function: it sees only what a
# remote bot sees and returns a wire action. Its second argument is the
# request's ``legal`` list when the request has one, else its
# ``constraints`` map.
HouseBot = Callable[[str, list[GameAction], Wire], GameAction]


@dataclass(frozen=True)
class GameSpec:
    """How the arena creates matches and house bots of one game."""

    name: str
    n_seats: int
    # new_match(rules, rng, decks): ``rng`` is used for shuffles only, one per
    # deal, so the same seed gives the same sequence of decks whatever the
    # players do (duplicate tournaments rely on this). ``decks``, if given,
    # supplies explicit deck orders (wire card strings) used before ``rng``;
    # a replay passes the recorded decks and re-applies the recorded actions.
    new_match: Callable[[Wire | None, random.Random | None, list[list[str]] | None], GameEngine]
    # A factory takes ``(rng)`` or ``(rng, rules)`` (to play by the match's flags).
    house_bots: dict[str, Callable[..., HouseBot]]
    default_house_bot: str
    description: str = ""
    # Descriptions the game gives of itself, read by game-neutral code:
    # ``rule_defaults``; ``web`` (its replay viewer and result columns, read by
    # arena.web); ``standings`` (which result keys rank bots over matches, in
    # which order, and where the places are: arena.tournament.ranking).
    extra: dict[str, Any] = field(default_factory=dict)
    # replay_inputs(log): the decks and the ``(seat, action)`` steps a stored
    # match's ``for_record()`` log holds, in order (seat None: the seat to
    # act). Game-neutral code replays a stored match from them through
    # ``new_match(rules, None, decks)`` (arena.live_history); None if the
    # game does not say.
    replay_inputs: Callable[[Any], tuple[list[list[str]], Sequence[tuple[int | None, Any]]]] | None = None
