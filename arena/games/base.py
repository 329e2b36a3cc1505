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
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Protocol, runtime_checkable

GameAction = Any  # wire form: str | list[str] | None | dict
Wire = dict[str, Any]


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


@runtime_checkable
class GameEvent(Protocol):
    """Something that happened in a match.

    One object per happening; how it looks depends on who looks:

    * ``for_seat(seat)``: the ``event`` payload sent to that seat (with its
      ``kind``), or ``None`` if that seat may not see it at all. Public events
      return the *same* dict object for every seat so the server can encode
      it once.
    * ``for_public()``: what a spectator of a live match may see (no hidden
      cards), or ``None``.
    * ``for_record()``: everything, for the stored log; replaying the
      recorded actions against the recorded decks reproduces the match.
    """

    kind: str

    def for_seat(self, seat: int) -> Wire | None: ...

    def for_public(self) -> Wire | None: ...

    def for_record(self) -> Wire: ...


@dataclass(frozen=True, slots=True)
class DealInfo:
    """A chance step the server must commit to (protocol.md §5).

    Carried by the engine's ``deal`` event (kind ``"deal"``, visible to no
    seat). The server turns it into a ``commit`` event, sent to every seat
    before any event of that hand, and reveals it at match end.
    """

    round: int = 0
    hand: int = 0
    deck: tuple[str, ...] = ()
    # The fields that name this deal on the wire (commit event, reveal):
    # {"round": r, "hand": h} for Muushig when not given, {"deal": d} for a
    # game that counts deals another way.
    label: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", {"round": self.round, "hand": self.hand})


@runtime_checkable
class GameEngine(Protocol):
    """One match of one game, as a state machine stepped by ``apply``."""

    game: ClassVar[str]
    n_seats: int
    rules: Wire  # the effective rule options, as sent in match_start.rules

    def start(self) -> list[GameEvent]:
        """Run the opening chance steps up to the first real decision."""
        ...

    @property
    def finished(self) -> bool: ...

    @property
    def current_seat(self) -> int | None:
        """The seat that must act now, or None when the match is over."""
        ...

    @property
    def phase(self) -> str | None:
        """The name of the pending decision (``decide``, ``play``...)."""
        ...

    def legal_actions(self) -> list[GameAction]:
        """Every legal answer for the current seat, in protocol order."""
        ...

    def check_action(self, action: GameAction) -> GameAction:
        """Return the canonical form of a legal ``action`` or raise
        :class:`IllegalActionError` with a reason (does not change state)."""
        ...

    def apply(self, action: GameAction) -> list[GameEvent]:
        """Apply a legal action for ``current_seat``; return what happened,
        up to and including everything until the next real decision."""
        ...

    def default_action(self) -> GameAction:
        """The action applied when the current seat runs out of time."""
        ...

    # -- the seat-addressed API the table uses (SequentialGame gives it) --
    @property
    def to_act(self) -> tuple[int, ...]:
        """Seats that owe a decision now, ascending; () when finished."""
        ...

    def phase_for(self, seat: int) -> str:
        """The phase of ``seat``'s pending decision."""
        ...

    def request_for(self, seat: int) -> Wire:
        """The request's game fields: ``{"legal": [...]}`` or ``{"constraints": {...}}``."""
        ...

    def check_for(self, seat: int, action: GameAction) -> GameAction:
        """Canonical ``action`` of ``seat``, or IllegalActionError (state unchanged)."""
        ...

    def apply_for(self, seat: int, action: GameAction) -> list[GameEvent]:
        """Apply ``seat``'s action; may return [] while other seats still owe one.

        An engine may skip checking again the canonical action its
        ``check_for`` just returned for the same decision (the server checks
        a bot's answer with ``check_for``, then applies it)."""
        ...

    def default_for(self, seat: int) -> GameAction:
        """The action applied at ``seat``'s deadline."""
        ...

    def observation(self, seat: int) -> Wire:
        """The ``state`` object for ``seat`` (only what that seat may know).

        Read-only, like an event's payload: parts that did not change may be
        shared with earlier observations."""
        ...

    def result(self) -> Wire:
        """The ``result`` object of ``match_end`` (only when finished)."""
        ...

    def deals(self) -> list[DealInfo]:
        """Every deal so far, in order (for the reveal at match end)."""
        ...


_ONE_SEAT = tuple((seat,) for seat in range(16))


class SequentialGame:
    """The seat-addressed API, for a game where one seat acts at a time.

    The table asks ``to_act`` which seats owe a decision and addresses each
    call to a seat, so a game with simultaneous decisions plugs in the same
    way. A sequential engine mixes this in and keeps its one-seat API
    (``current_seat``, ``phase``, ``legal_actions``, ``check_action``,
    ``apply``, ``default_action``); a call for any other seat than the one
    to move raises :class:`NotYourTurnError`.
    """

    # Only annotations: the engine's own members must win in the MRO.
    current_seat: int | None
    phase: str | None
    legal_actions: Callable[[], list[GameAction]]
    check_action: Callable[[GameAction], GameAction]
    apply: Callable[[GameAction], list[GameEvent]]
    default_action: Callable[[], GameAction]

    @property
    def to_act(self) -> tuple[int, ...]:
        seat = self.current_seat
        if seat is None:
            return ()
        # Shared tuples: asked once per decision, a new one each time would
        # be one more object for the garbage collector.
        return _ONE_SEAT[seat] if seat < len(_ONE_SEAT) else (seat,)

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

    def check_for(self, seat: int, action: GameAction) -> GameAction:
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return self.check_action(action)

    def apply_for(self, seat: int, action: GameAction) -> list[GameEvent]:
        if seat != self.current_seat:
            raise self._not_to_act(seat)
        return self.apply(action)

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
    house_bots: dict[str, Callable[[random.Random], HouseBot]]
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
    replay_inputs: Callable[[Any], tuple[list[list[str]], list[tuple[int | None, Any]]]] | None = None
