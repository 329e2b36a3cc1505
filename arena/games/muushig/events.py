"""The events of a Muushig match, one class per kind (protocol §3).

Events are created on the engine's hot path, so they hold small ints and
tuples and build their wire dicts only when asked, then cache them: a public
event returns the *same* dict to every seat so the server encodes it once.
Treat them as immutable; the cache is their only mutable part.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from json.encoder import encode_basestring_ascii

from arena.games.base import DealInfo
from arena.games.muushig.cards import CARD_STR, SUITS, mask_strs
from arena.records import encode_record

Wire = dict[str, Any]

# Each record's JSON text is written here, field by field, instead of by the
# JSON encoder from the record's dict: every decision stores one or two
# records, and the encoder's walk over a small dict cost ten times the
# formatting. The text is the one ``encode_record(event.for_record())``
# gives, character for character (``tests/games/muushig/test_record_text.py``
# holds every kind to it over random play).
_CARD_JSON: Final = tuple(f'"{s}"' for s in CARD_STR)


def _ints(values: tuple[int, ...]) -> str:
    """A JSON array of ints."""
    return "[" + ",".join([str(v) for v in values]) + "]"


def _card_list(cards: bytes | tuple[int, ...]) -> str:
    """A JSON array of card codes."""
    return "[" + ",".join([_CARD_JSON[c] for c in cards]) + "]"


def _mask_list(mask: int) -> str:
    """A JSON array of a mask's cards in canonical order."""
    strs = mask_strs(mask)
    return '["' + '","'.join(strs) + '"]' if strs else "[]"


def _bool(value: bool) -> str:
    return "true" if value else "false"


class MuushigEvent:
    """Base: a public event (every seat and spectators see the same dict)."""

    __slots__ = ("_wire",)
    kind: ClassVar[str]
    _wire: Wire | None
    _fields: ClassVar[tuple[str, ...]]

    def _build(self) -> Wire:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def _public(self) -> Wire:
        w = self._wire
        if w is None:
            w = self._wire = self._build()
        return w

    # The same dict for spectators and the record.
    def for_public(self) -> Wire | None:
        return self._public()

    def for_record(self) -> Wire:
        return self._public()

    def record_text(self) -> str:
        """``for_record()`` as stored JSON text (``arena.records``)."""
        return encode_record(self.for_record())

    # The cache read is written out here, not a call of ``_public``: every
    # event is asked once per seat, five times, and the sources may run
    # uncompiled.
    def for_seat(self, seat: int) -> Wire | None:
        w = self._wire
        if w is None:
            w = self._wire = self._build()
        return w

    def _key(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

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
        self._wire = None
        self.round, self.dealer, self.scores = round, dealer, scores

    def _build(self) -> Wire:
        return {"kind": self.kind, "round": self.round, "dealer": self.dealer, "scores": list(self.scores)}

    def record_text(self) -> str:
        return (f'{{"kind":"round_start","round":{self.round},"dealer":{self.dealer},'
                f'"scores":{_ints(self.scores)}}}')


class Deal(MuushigEvent):
    """Engine-only: the deck of a hand. No seat or spectator sees it; the
    server turns it into the ``commit`` event and reveals it at match end.

    Its wire forms are built when asked and not cached, unlike the other
    events': the engine keeps every hand's Deal for the reveal, and each is
    asked only once or twice (the record, the commit, the reveal)."""

    __slots__ = ("round", "hand", "deck_codes")
    kind = "deal"
    _fields = ("round", "hand", "deck_codes")

    def __init__(self, round: int, hand: int, deck_codes: tuple[int, ...]) -> None:
        self._wire = None
        self.round, self.hand, self.deck_codes = round, hand, bytes(deck_codes)

    @property
    def deal(self) -> DealInfo:
        return DealInfo(self.round, self.hand, tuple(CARD_STR[c] for c in self.deck_codes))

    def for_record(self) -> Wire:
        return self._build()

    def for_seat(self, seat: int) -> Wire | None:
        return None

    def for_public(self) -> Wire | None:
        return None

    def _build(self) -> Wire:
        return {"kind": self.kind, "round": self.round, "hand": self.hand, "deck": list(self.deal.deck)}

    def record_text(self) -> str:
        return (f'{{"kind":"deal","round":{self.round},"hand":{self.hand},'
                f'"deck":{_card_list(self.deck_codes)}}}')


class HandStart(MuushigEvent):
    """Each seat sees only its own five cards; the record holds every hand."""

    __slots__ = ("round", "hand", "dealer", "face_up", "hands", "_seat_wire", "_record")
    kind = "hand_start"
    _fields = ("round", "hand", "dealer", "face_up", "hands")

    def __init__(self, round: int, hand: int, dealer: int, face_up: int, hands: tuple[int, ...]) -> None:
        self._wire = None
        self._record: Wire | None = None
        self._seat_wire: dict[int, Wire] = {}
        self.round, self.hand, self.dealer, self.face_up, self.hands = round, hand, dealer, face_up, hands

    def _build(self) -> Wire:
        return {
            "kind": self.kind,
            "round": self.round,
            "hand": self.hand,
            "dealer": self.dealer,
            "face_up": CARD_STR[self.face_up],
            "trump": SUITS[self.face_up >> 3],
        }

    def for_seat(self, seat: int) -> Wire | None:
        if not 0 <= seat < len(self.hands):
            return None
        w = self._seat_wire.get(seat)
        if w is None:
            w = self._seat_wire[seat] = {**self._public(), "cards": mask_strs(self.hands[seat])}
        return w

    def for_record(self) -> Wire:
        r = self._record
        if r is None:
            r = self._record = {**self._public(), "hands": [mask_strs(h) for h in self.hands]}
        return r

    def record_text(self) -> str:
        hands = ",".join([_mask_list(h) for h in self.hands])
        return (f'{{"kind":"hand_start","round":{self.round},"hand":{self.hand},'
                f'"dealer":{self.dealer},"face_up":{_CARD_JSON[self.face_up]},'
                f'"trump":"{SUITS[self.face_up >> 3]}","hands":[{hands}]}}')


class Decision(MuushigEvent):
    __slots__ = ("seat", "choice", "forced")
    kind = "decision"
    _fields = ("seat", "choice", "forced")

    def __init__(self, seat: int, choice: str, forced: bool) -> None:
        self._wire = None
        self.seat, self.choice, self.forced = seat, choice, forced

    def _build(self) -> Wire:
        return {"kind": self.kind, "seat": self.seat, "choice": self.choice, "forced": self.forced}

    def record_text(self) -> str:
        return (f'{{"kind":"decision","seat":{self.seat},'
                f'"choice":{encode_basestring_ascii(self.choice)},"forced":{_bool(self.forced)}}}')


class AllFolded(MuushigEvent):
    __slots__ = ("dealer", "scores")
    kind = "all_folded"
    _fields = ("dealer", "scores")

    def __init__(self, dealer: int, scores: tuple[int, ...]) -> None:
        self._wire = None
        self.dealer, self.scores = dealer, scores

    def _build(self) -> Wire:
        return {"kind": self.kind, "dealer": self.dealer, "scores": list(self.scores)}

    def record_text(self) -> str:
        return f'{{"kind":"all_folded","dealer":{self.dealer},"scores":{_ints(self.scores)}}}'


class Exchange(MuushigEvent):
    """Others learn the count; the exchanging seat also sees what it drew
    (in draw order); the record also holds the discards (canonical order)."""

    __slots__ = ("seat", "discarded", "drawn", "_own", "_record")
    kind = "exchange"
    _fields = ("seat", "discarded", "drawn")

    def __init__(self, seat: int, discarded: int, drawn: tuple[int, ...]) -> None:
        self._wire = None
        self._own: Wire | None = None
        self._record: Wire | None = None
        self.seat, self.discarded, self.drawn = seat, discarded, drawn

    @property
    def count(self) -> int:
        return len(self.drawn)

    def _build(self) -> Wire:
        return {"kind": self.kind, "seat": self.seat, "count": len(self.drawn)}

    def for_seat(self, seat: int) -> Wire | None:
        if seat != self.seat:
            w = self._wire
            if w is None:
                w = self._wire = self._build()
            return w
        w = self._own
        if w is None:
            w = self._own = {**self._public(), "drawn": [CARD_STR[c] for c in self.drawn]}
        return w

    def for_record(self) -> Wire:
        r = self._record
        if r is None:
            r = self._record = {
                **self._public(),
                "discarded": mask_strs(self.discarded),
                "drawn": [CARD_STR[c] for c in self.drawn],
            }
        return r

    def record_text(self) -> str:
        return (f'{{"kind":"exchange","seat":{self.seat},"count":{len(self.drawn)},'
                f'"discarded":{_mask_list(self.discarded)},"drawn":{_card_list(self.drawn)}}}')


class Take(MuushigEvent):
    """Everyone learns whether the dealer took the face-up card, never which
    card it gave up (that is in the record only)."""

    __slots__ = ("seat", "discarded", "_record")
    kind = "take"
    _fields = ("seat", "discarded")

    def __init__(self, seat: int, discarded: int | None) -> None:
        self._wire = None
        self._record: Wire | None = None
        self.seat, self.discarded = seat, discarded

    @property
    def taken(self) -> bool:
        return self.discarded is not None

    def _build(self) -> Wire:
        return {"kind": self.kind, "seat": self.seat, "taken": self.discarded is not None}

    def for_record(self) -> Wire:
        r = self._record
        if r is None:
            d = self.discarded
            r = self._record = {**self._public(), "discarded": None if d is None else CARD_STR[d]}
        return r

    def record_text(self) -> str:
        d = self.discarded
        if d is None:
            return f'{{"kind":"take","seat":{self.seat},"taken":false,"discarded":null}}'
        return f'{{"kind":"take","seat":{self.seat},"taken":true,"discarded":{_CARD_JSON[d]}}}'


class Play(MuushigEvent):
    __slots__ = ("seat", "card")
    kind = "play"
    _fields = ("seat", "card")

    def __init__(self, seat: int, card: int) -> None:
        self._wire = None
        self.seat = seat
        self.card = card

    def _build(self) -> Wire:
        return {"kind": self.kind, "seat": self.seat, "card": CARD_STR[self.card]}

    def record_text(self) -> str:
        return f'{{"kind":"play","seat":{self.seat},"card":{_CARD_JSON[self.card]}}}'


class Trick(MuushigEvent):
    __slots__ = ("winner", "cards", "scores")
    kind = "trick"
    _fields = ("winner", "cards", "scores")

    def __init__(self, winner: int, cards: tuple[tuple[int, int], ...], scores: tuple[int, ...]) -> None:
        self._wire = None
        self.winner, self.cards, self.scores = winner, cards, scores

    def _build(self) -> Wire:
        return {
            "kind": self.kind,
            "winner": self.winner,
            "cards": [[s, CARD_STR[c]] for s, c in self.cards],
            "scores": list(self.scores),
        }

    def record_text(self) -> str:
        cards = ",".join([f"[{s},{_CARD_JSON[c]}]" for s, c in self.cards])
        return (f'{{"kind":"trick","winner":{self.winner},"cards":[{cards}],'
                f'"scores":{_ints(self.scores)}}}')


class HandEnd(MuushigEvent):
    __slots__ = ("tricks", "muushig", "scores")
    kind = "hand_end"
    _fields = ("tricks", "muushig", "scores")

    def __init__(self, tricks: tuple[int, ...], muushig: tuple[int, ...], scores: tuple[int, ...]) -> None:
        self._wire = None
        self.tricks, self.muushig, self.scores = tricks, muushig, scores

    def _build(self) -> Wire:
        return {
            "kind": self.kind,
            "tricks": list(self.tricks),
            "muushig": list(self.muushig),
            "scores": list(self.scores),
        }

    def record_text(self) -> str:
        return (f'{{"kind":"hand_end","tricks":{_ints(self.tricks)},'
                f'"muushig":{_ints(self.muushig)},"scores":{_ints(self.scores)}}}')


class RoundEnd(MuushigEvent):
    __slots__ = ("round", "winner", "scores")
    kind = "round_end"
    _fields = ("round", "winner", "scores")

    def __init__(self, round: int, winner: int, scores: tuple[int, ...]) -> None:
        self._wire = None
        self.round, self.winner, self.scores = round, winner, scores

    def _build(self) -> Wire:
        return {"kind": self.kind, "round": self.round, "winner": self.winner, "scores": list(self.scores)}

    def record_text(self) -> str:
        return (f'{{"kind":"round_end","round":{self.round},"winner":{self.winner},'
                f'"scores":{_ints(self.scores)}}}')
