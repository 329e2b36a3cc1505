"""The game-neutral interface: what an engine and its events offer.

Kept apart from :mod:`arena.games.base` (which re-exports every name here)
because these protocols are checked at run time with ``isinstance`` and the
per-decision part of ``base`` may be compiled (``setup.py``), which keeps
no ``Protocol`` class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # defined in the compiled part, which imports this module
    from arena.games.base import CheckedAction

GameAction = Any  # wire form: str | list[str] | None | dict
Wire = dict[str, Any]


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

    An event that shows cards of other seats when its deal is over (a
    thirteen showdown) also has ``sealed_for_seat(seat)`` and
    ``sealed_for_public()``: its forms in a sealed match, one whose decks a
    later match of its tournament deals again (protocol §6). The server
    sends those instead; the record keeps everything, and the full form
    reaches the bots with the deferred reveal.

    An event may also have ``record_text()``: its record as the stored JSON
    text, exactly ``arena.records.encode_record(for_record())``, written
    faster than the encoder walks the dict. Without it the server encodes
    ``for_record()``.
    """

    @property
    def kind(self) -> str: ...

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
    """One match of one game, as a state machine stepped by ``apply``.

    Check, then apply: ``check_action`` / ``check_for`` turn a wire action
    into a :class:`~arena.games.base.CheckedAction` for the pending decision
    (or raise ``IllegalActionError``, state unchanged), and ``apply`` takes
    only that; ``play`` / ``play_for`` do both.
    """

    game: ClassVar[str]
    n_seats: int
    rules: Wire  # the effective rule options, as sent in match_start.rules

    def start(self) -> Sequence[GameEvent]:
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

    def check_action(self, action: GameAction) -> CheckedAction[Any]:
        """``action`` of ``current_seat`` checked for the pending decision
        (its canonical form is ``.action``), or :class:`IllegalActionError`
        with a reason (does not change state)."""
        ...

    def apply(self, checked: CheckedAction[Any]) -> Sequence[GameEvent]:
        """Apply an action checked by this engine for a decision still
        pending (else :class:`StaleActionError`); return what happened, up
        to and including everything until the next real decision (or [] while
        other seats still owe one). Applied actions are not checked again."""
        ...

    def play(self, action: GameAction) -> Sequence[GameEvent]:
        """``apply(check_action(action))``."""
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

    def check_for(self, seat: int, action: GameAction) -> CheckedAction[Any]:
        """``seat``'s ``action`` checked for its pending decision, or
        IllegalActionError (state unchanged); ``apply`` takes the result."""
        ...

    def play_for(self, seat: int, action: GameAction) -> Sequence[GameEvent]:
        """``apply(check_for(seat, action))``."""
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
