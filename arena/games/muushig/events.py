"""The events of a Muushig match, one class per kind (protocol §3).

Each kind is defined once: its fields (small ints and tuples, made on the
engine's hot path), its ``record()`` (everything, as stored and spelt on the
wire) and which fields of the record others may not see (``HIDDEN``, and of
those what the event's own seat or each seat sees after all: ``OWN``,
``PER_SEAT``). Every other form is derived from these by :class:`Forms`:
the public form is the record without its hidden fields, a seat's form adds
what is its own, the stored text is the record encoded (by msgspec: a
Muushig record holds no float, and for the rest its text is the standard
encoder's, see ``arena.records.encode_plain_record``). Events compare by
their fields; their forms are kept beside them, not among them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from arena.games.base import DealInfo
from arena.games.muushig.cards import CARD_STR, SUITS, mask_strs
from arena.records import encode_plain_record

Wire = dict[str, Any]


class Forms:
    """The wire forms of one event, made together when one is first asked
    for and never changed: the public form is the *same* dict for every seat
    that sees it (the server encodes it once), and the record itself when
    nothing is hidden. The forms share the record's lists: read-only, like
    every event payload."""

    __slots__ = ("record", "public", "everyone", "owner", "own", "each")

    record: Wire
    public: Wire | None  # None: no seat and no spectator sees the event
    everyone: bool  # every seat that sees the event sees the public form
    owner: int  # the seat that sees ``own`` (-1: none)
    own: Wire | None
    each: list[Wire] | None  # per seat: its form (a seat outside sees nothing)

    def __init__(self, event: MuushigEvent) -> None:
        record = self.record = event.record()
        self.owner, self.own, self.each = -1, None, None
        hidden = event.HIDDEN
        if event.ENGINE_ONLY or not hidden:
            self.public = None if event.ENGINE_ONLY else record
            self.everyone = True
            return
        public = self.public = {k: v for k, v in record.items() if k not in hidden}
        self.everyone = False
        if event.OWN:
            self.owner = record["seat"]
            self.own = {**public, **{k: record[k] for k in event.OWN}}
        per_seat = event.PER_SEAT
        if per_seat is not None:
            source, name = per_seat
            self.each = [{**public, name: part} for part in record[source]]

    def for_seat(self, seat: int) -> Wire | None:
        if seat == self.owner and self.own is not None:
            return self.own
        each = self.each
        if each is None:
            return self.public
        return each[seat] if 0 <= seat < len(each) else None


class MuushigEvent:
    """Base: the derivation every kind shares. Treat events as immutable."""

    __slots__ = ("_forms",)
    kind: ClassVar[str]
    _fields: ClassVar[tuple[str, ...]]
    # Record fields no seat or spectator sees (unless named below).
    HIDDEN: ClassVar[tuple[str, ...]] = ()
    # Hidden fields the event's own seat (the record's "seat") sees too.
    OWN: ClassVar[tuple[str, ...]] = ()
    # (record field, name): the record's list with one item per seat; each
    # seat sees its own item under ``name``, a seat outside the table nothing.
    PER_SEAT: ClassVar[tuple[str, str] | None] = None
    # Seen by no seat and no spectator at all.
    ENGINE_ONLY: ClassVar[bool] = False

    _forms: Forms | None

    def record(self) -> Wire:  # pragma: no cover - every kind defines it
        raise NotImplementedError

    def _get_forms(self) -> Forms:
        forms = self._forms
        if forms is None:
            forms = Forms(self)
            # An engine-only event (the deal) is kept for the reveal and
            # asked for once or twice: its forms are made each time instead
            # of staying in memory for the whole match.
            if not self.ENGINE_ONLY:
                self._forms = forms
        return forms

    # The memo read is written out in each form's accessor, not a call of
    # ``_get_forms``: the server asks every event once per seat and for its
    # record, its text and its public form, and the sources may run
    # uncompiled.
    def for_seat(self, seat: int) -> Wire | None:
        forms = self._forms
        if forms is None:
            forms = self._get_forms()
        return forms.public if forms.everyone else forms.for_seat(seat)

    def for_public(self) -> Wire | None:
        forms = self._forms
        if forms is None:
            forms = self._get_forms()
        return forms.public

    def for_record(self) -> Wire:
        forms = self._forms
        if forms is None:
            forms = self._get_forms()
        return forms.record

    def record_text(self) -> str:
        """``for_record()`` as stored JSON text (``arena.records``): a
        record holds ints, bools, None and strings, never a float."""
        forms = self._forms
        if forms is None:
            forms = self._get_forms()
        return encode_plain_record(forms.record)

    def _key(self) -> tuple[Any, ...]:
        return tuple([getattr(self, f) for f in self._fields])

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._key() == self._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({args})"


class RoundStart(MuushigEvent):
    __slots__ = ("round", "dealer", "scores")
    kind = "round_start"
    _fields = ("round", "dealer", "scores")

    def __init__(self, round: int, dealer: int, scores: tuple[int, ...]) -> None:
        self._forms = None
        self.round, self.dealer, self.scores = round, dealer, scores

    def record(self) -> Wire:
        return {"kind": "round_start", "round": self.round, "dealer": self.dealer,
                "scores": list(self.scores)}


class Deal(MuushigEvent):
    """The deck of a hand, for the engine only: the server turns it into the
    ``commit`` event and reveals it at match end."""

    __slots__ = ("round", "hand", "deck_codes")
    kind = "deal"
    _fields = ("round", "hand", "deck_codes")
    ENGINE_ONLY = True

    def __init__(self, round: int, hand: int, deck_codes: tuple[int, ...]) -> None:
        self._forms = None
        self.round, self.hand, self.deck_codes = round, hand, bytes(deck_codes)

    @property
    def deal(self) -> DealInfo:
        return DealInfo(self.round, self.hand, tuple([CARD_STR[c] for c in self.deck_codes]))

    def record(self) -> Wire:
        return {"kind": "deal", "round": self.round, "hand": self.hand,
                "deck": [CARD_STR[c] for c in self.deck_codes]}


class HandStart(MuushigEvent):
    """Each seat sees only its own five cards; the record holds every hand."""

    __slots__ = ("round", "hand", "dealer", "face_up", "hands")
    kind = "hand_start"
    _fields = ("round", "hand", "dealer", "face_up", "hands")
    HIDDEN = ("hands",)
    PER_SEAT = ("hands", "cards")

    def __init__(self, round: int, hand: int, dealer: int, face_up: int, hands: tuple[int, ...]) -> None:
        self._forms = None
        self.round, self.hand, self.dealer, self.face_up, self.hands = round, hand, dealer, face_up, hands

    def record(self) -> Wire:
        return {"kind": "hand_start", "round": self.round, "hand": self.hand, "dealer": self.dealer,
                "face_up": CARD_STR[self.face_up], "trump": SUITS[self.face_up >> 3],
                "hands": [mask_strs(h) for h in self.hands]}


class Decision(MuushigEvent):
    __slots__ = ("seat", "choice", "forced")
    kind = "decision"
    _fields = ("seat", "choice", "forced")

    def __init__(self, seat: int, choice: str, forced: bool) -> None:
        self._forms = None
        self.seat, self.choice, self.forced = seat, choice, forced

    def record(self) -> Wire:
        return {"kind": "decision", "seat": self.seat, "choice": self.choice, "forced": self.forced}


class AllFolded(MuushigEvent):
    __slots__ = ("dealer", "scores")
    kind = "all_folded"
    _fields = ("dealer", "scores")

    def __init__(self, dealer: int, scores: tuple[int, ...]) -> None:
        self._forms = None
        self.dealer, self.scores = dealer, scores

    def record(self) -> Wire:
        return {"kind": "all_folded", "dealer": self.dealer, "scores": list(self.scores)}


class Exchange(MuushigEvent):
    """Others learn the count; the exchanging seat also sees what it drew
    (in draw order); the record also holds the discards (canonical order)."""

    __slots__ = ("seat", "discarded", "drawn")
    kind = "exchange"
    _fields = ("seat", "discarded", "drawn")
    HIDDEN = ("discarded", "drawn")
    OWN = ("drawn",)

    def __init__(self, seat: int, discarded: int, drawn: tuple[int, ...]) -> None:
        self._forms = None
        self.seat, self.discarded, self.drawn = seat, discarded, drawn

    @property
    def count(self) -> int:
        return len(self.drawn)

    def record(self) -> Wire:
        return {"kind": "exchange", "seat": self.seat, "count": len(self.drawn),
                "discarded": mask_strs(self.discarded), "drawn": [CARD_STR[c] for c in self.drawn]}


class Take(MuushigEvent):
    """Everyone learns whether the dealer took the face-up card, never which
    card it gave up (that is in the record only)."""

    __slots__ = ("seat", "discarded")
    kind = "take"
    _fields = ("seat", "discarded")
    HIDDEN = ("discarded",)

    def __init__(self, seat: int, discarded: int | None) -> None:
        self._forms = None
        self.seat, self.discarded = seat, discarded

    @property
    def taken(self) -> bool:
        return self.discarded is not None

    def record(self) -> Wire:
        d = self.discarded
        return {"kind": "take", "seat": self.seat, "taken": d is not None,
                "discarded": None if d is None else CARD_STR[d]}


class Play(MuushigEvent):
    __slots__ = ("seat", "card")
    kind = "play"
    _fields = ("seat", "card")

    def __init__(self, seat: int, card: int) -> None:
        self._forms = None
        self.seat, self.card = seat, card

    def record(self) -> Wire:
        return {"kind": "play", "seat": self.seat, "card": CARD_STR[self.card]}


class Trick(MuushigEvent):
    __slots__ = ("winner", "cards", "scores")
    kind = "trick"
    _fields = ("winner", "cards", "scores")

    def __init__(self, winner: int, cards: tuple[tuple[int, int], ...], scores: tuple[int, ...]) -> None:
        self._forms = None
        self.winner, self.cards, self.scores = winner, cards, scores

    def record(self) -> Wire:
        return {"kind": "trick", "winner": self.winner,
                "cards": [[s, CARD_STR[c]] for s, c in self.cards], "scores": list(self.scores)}


class HandEnd(MuushigEvent):
    __slots__ = ("tricks", "muushig", "scores")
    kind = "hand_end"
    _fields = ("tricks", "muushig", "scores")

    def __init__(self, tricks: tuple[int, ...], muushig: tuple[int, ...], scores: tuple[int, ...]) -> None:
        self._forms = None
        self.tricks, self.muushig, self.scores = tricks, muushig, scores

    def record(self) -> Wire:
        return {"kind": "hand_end", "tricks": list(self.tricks), "muushig": list(self.muushig),
                "scores": list(self.scores)}


class RoundEnd(MuushigEvent):
    __slots__ = ("round", "winner", "scores")
    kind = "round_end"
    _fields = ("round", "winner", "scores")

    def __init__(self, round: int, winner: int, scores: tuple[int, ...]) -> None:
        self._forms = None
        self.round, self.winner, self.scores = round, winner, scores

    def record(self) -> Wire:
        return {"kind": "round_end", "round": self.round, "winner": self.winner,
                "scores": list(self.scores)}
