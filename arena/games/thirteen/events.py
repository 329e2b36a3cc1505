"""The events of a thirteen-card match, one class per kind (protocol §5).

Frozen dataclasses comparing with ``==``. Wire dicts are built when asked;
a public event returns the same dict object to every seat so the server
encodes it once. Before a deal's showdown no event shows a seat another
seat's cards: ``deal_start`` gives each seat its own 13, ``arranged`` tells
only who has answered (its cards are in the record alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    _cache: dict[str, Any]

    def _build(self) -> Wire:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def _public(self) -> Wire:
        w = self._cache.get("public")
        if w is None:
            w = self._cache["public"] = self._build()
        return w

    def for_seat(self, seat: int) -> Wire | None:
        return self._public()

    def for_public(self) -> Wire | None:
        return self._public()

    def for_record(self) -> Wire:
        return self._public()


@dataclass(frozen=True, eq=True)
class Deal(_Public):
    """Engine-only: the deck of a deal (no seat or spectator sees it); the
    server commits to it before the deal and reveals it at match end."""

    deal_no: int
    deck: tuple[int, ...]
    kind: str = field(default="deal", init=False)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def deal(self) -> DealInfo:
        info = self._cache.get("info")
        if info is None:
            info = self._cache["info"] = make_deal_info(self.deal_no, tuple(CARD_STR[c] for c in self.deck))
        return info

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
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def _build(self) -> Wire:
        return {"kind": self.kind, "deal": self.deal_no}

    def for_seat(self, seat: int) -> Wire | None:
        if not 0 <= seat < len(self.hands):
            return None
        key = ("seat", seat)
        w = self._cache.get(key)
        if w is None:
            w = self._cache[key] = {**self._public(), "cards": card_strs(self.hands[seat])}
        return w

    def for_record(self) -> Wire:
        r = self._cache.get("record")
        if r is None:
            r = self._cache["record"] = {**self._public(), "hands": [card_strs(h) for h in self.hands]}
        return r


@dataclass(frozen=True, eq=True)
class Arranged(_Public):
    """A seat has answered: everyone learns who, only the record learns how."""

    deal_no: int
    seat: int
    split: Split
    kind: str = field(default="arranged", init=False)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def _build(self) -> Wire:
        return {"kind": self.kind, "deal": self.deal_no, "seat": self.seat}

    def for_record(self) -> Wire:
        r = self._cache.get("record")
        if r is None:
            r = self._cache["record"] = {**self._public(), **split_wire(self.split)}
        return r


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
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

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
    def sealed_for_seat(self, seat: int) -> Wire | None:
        key = ("sealed", seat)
        w = self._cache.get(key)
        if w is None:
            n = len(self.arrangements)
            w = self._cache[key] = {
                "kind": self.kind, "deal": self.deal_no, "sealed": True,
                "arrangements": [split_wire(self.arrangements[s]) if s == seat else None
                                 for s in range(n)],
                "fouled": [self.fouled[s] if s == seat else None for s in range(n)],
                "pairs": [list(self.pairs[s]) if s == seat else None for s in range(n)],
                "scores": list(self.scores), "totals": list(self.totals)}
        return w

    def sealed_for_public(self) -> Wire | None:
        w = self._cache.get("sealed")
        if w is None:
            n = len(self.arrangements)
            w = self._cache["sealed"] = {
                "kind": self.kind, "deal": self.deal_no, "sealed": True,
                "arrangements": [None] * n, "fouled": [None] * n, "pairs": None,
                "scores": list(self.scores), "totals": list(self.totals)}
        return w
