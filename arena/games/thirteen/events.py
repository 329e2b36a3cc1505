"""The events of a thirteen-card match, one class per kind (protocol §5).

Frozen dataclasses comparing with ``==``: their fields are the facts they
report. Wire forms are built when first asked for and kept beside the
fields (``cached_property``, in the instance's ``__dict__``), so equality,
``repr`` and ``asdict`` never see them; a public event returns the same dict
object to every seat so the server encodes it once. Before a deal's showdown no event shows a seat another
seat's cards: ``deal_start`` gives each seat its own 13, ``arranged`` tells
only who has answered (its cards are in the record alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from arena.games.base import DealInfo
from arena.games.thirteen.arranger import Split
from arena.games.thirteen.cards import CARD_STR, card_strs

Wire = dict[str, Any]


def split_wire(split: Split) -> Wire:
    return {"front": card_strs(split.front), "middle": card_strs(split.middle), "back": card_strs(split.back)}


def make_deal_info(deal: int, deck: tuple[str, ...]) -> DealInfo:
    """The engine's ``deal`` step in whichever ``DealInfo`` shape the arena
    has: with ``label`` ({"deal": d}) when it names deals generically, with
    the older (round, hand) pair otherwise (round = the deal, hand = 0)."""
    fields = DealInfo.__dataclass_fields__
    kwargs: dict[str, Any] = {"deck": deck}
    if "label" in fields:
        kwargs["label"] = {"deal": deal}
    if "round" in fields:
        kwargs["round"] = deal
    if "hand" in fields:
        kwargs["hand"] = 0
    return DealInfo(**kwargs)


class _Public:
    """A public event: every seat and spectators see the same dict."""

    kind: str

    def _build(self) -> Wire:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    @cached_property
    def _public(self) -> Wire:
        return self._build()

    def for_seat(self, seat: int) -> Wire | None:
        return self._public

    def for_public(self) -> Wire | None:
        return self._public

    def for_record(self) -> Wire:
        return self._public


@dataclass(frozen=True, eq=True)
class Deal(_Public):
    """Engine-only: the deck of a deal (no seat or spectator sees it); the
    server commits to it before the deal and reveals it at match end."""

    deal_no: int
    deck: tuple[int, ...]
    kind: str = field(default="deal", init=False)

    @cached_property
    def deal(self) -> DealInfo:
        return make_deal_info(self.deal_no, tuple(CARD_STR[c] for c in self.deck))

    def for_seat(self, seat: int) -> Wire | None:
        return None

    def for_public(self) -> Wire | None:
        return None

    def _build(self) -> Wire:
        return {"kind": self.kind, "deal": self.deal_no, "deck": [CARD_STR[c] for c in self.deck]}


@dataclass(frozen=True, eq=True)
class DealStart(_Public):
    """Each seat sees its own 13 cards; spectators see none; the record all."""

    deal_no: int
    hands: tuple[tuple[int, ...], ...]  # per seat of the match, canonical order
    kind: str = field(default="deal_start", init=False)

    def _build(self) -> Wire:
        return {"kind": self.kind, "deal": self.deal_no}

    @cached_property
    def _seat_forms(self) -> tuple[Wire, ...]:
        public = self._public
        return tuple({**public, "cards": card_strs(h)} for h in self.hands)

    def for_seat(self, seat: int) -> Wire | None:
        forms = self._seat_forms
        return forms[seat] if 0 <= seat < len(forms) else None

    @cached_property
    def _record(self) -> Wire:
        return {**self._public, "hands": [card_strs(h) for h in self.hands]}

    def for_record(self) -> Wire:
        return self._record


@dataclass(frozen=True, eq=True)
class Arranged(_Public):
    """A seat has answered: everyone learns who, only the record learns how."""

    deal_no: int
    seat: int
    split: Split
    kind: str = field(default="arranged", init=False)

    def _build(self) -> Wire:
        return {"kind": self.kind, "deal": self.deal_no, "seat": self.seat}

    @cached_property
    def _record(self) -> Wire:
        return {**self._public, **split_wire(self.split)}

    def for_record(self) -> Wire:
        return self._record


@dataclass(frozen=True, eq=True)
class Showdown(_Public):
    """Protocol §5.5, exactly: every seat's rows, fouls, the matrix, scores."""

    deal_no: int
    arrangements: tuple[Split, ...]
    fouled: tuple[bool, ...]
    pairs: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    kind: str = field(default="showdown", init=False)

    def _build(self) -> Wire:
        return {
            "kind": self.kind,
            "deal": self.deal_no,
            "arrangements": [split_wire(s) for s in self.arrangements],
            "fouled": list(self.fouled),
            "pairs": [list(row) for row in self.pairs],
            "scores": list(self.scores),
            "totals": list(self.totals),
        }

    # Sealed forms (a duplicate tournament deals this deal again later, see
    # protocol §6): a seat sees its own rows, its foul and its row of the
    # pairwise matrix, everyone's scores; spectators the scores alone. Another
    # seat's rows would show that seat's 13 cards of a deal still to be played.
    @cached_property
    def _sealed_seats(self) -> dict[int, Wire]:
        return {}  # seat -> its sealed form, made when first asked for

    def sealed_for_seat(self, seat: int) -> Wire | None:
        w = self._sealed_seats.get(seat)
        if w is None:
            n = len(self.arrangements)
            w = self._sealed_seats[seat] = {
                "kind": self.kind, "deal": self.deal_no, "sealed": True,
                "arrangements": [split_wire(self.arrangements[s]) if s == seat else None
                                 for s in range(n)],
                "fouled": [self.fouled[s] if s == seat else None for s in range(n)],
                "pairs": [list(self.pairs[s]) if s == seat else None for s in range(n)],
                "scores": list(self.scores), "totals": list(self.totals)}
        return w

    @cached_property
    def _sealed_public(self) -> Wire:
        n = len(self.arrangements)
        return {"kind": self.kind, "deal": self.deal_no, "sealed": True,
                "arrangements": [None] * n, "fouled": [None] * n, "pairs": None,
                "scores": list(self.scores), "totals": list(self.totals)}

    def sealed_for_public(self) -> Wire | None:
        return self._sealed_public
