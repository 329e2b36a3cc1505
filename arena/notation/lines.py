"""One line of the notation per recorded event, written from a template.

A template is the line with ``{field:type}`` placeholders, e.g.
``play {seat:int} {card:card}``. Tokens are separated by one space; a
literal token must be there as written, a placeholder holds one token of
its type. Writing fills the placeholders from an event's ``for_record()``
dict; reading is strict (every token checked) and gives back the dict of
those fields. The same template does both, so writer and reader cannot
drift apart.

Types (cards are spelt as on the wire):

``int``        ``-3``
``word``       ``fold`` (letters, digits, ``_``)
``card``       ``AS``
``optcard``    a card, or ``-`` for none (a declined take)
``cards``      ``AS,KD,7C``; ``-`` for none
``ints``       ``15,15,14``
``bools``      ``yes,no,no``
``cardlists``  one ``cards`` per seat joined by ``/``: ``AS,KD/7C,8C``
``intlists``   one ``ints`` per seat joined by ``/``
``seatcards``  ``2:AC,3:KC`` (seat and card, in play order)
``flag``       ``forced`` for true, ``chosen`` for false
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from arena.notation.errors import NotationSyntaxError

_CARD = re.compile(r"^(?:[2-9TJQKA][HSDC]|\?\?)$")  # "??" a hidden card (never in a record)
_WORD = re.compile(r"^[A-Za-z0-9_]+$")
_INT = re.compile(r"^-?[0-9]{1,12}$")
_PLACEHOLDER = re.compile(r"^\{([a-z_]+):([a-z]+)\}$")
NONE = "-"


def _int(token: str) -> int:
    if not _INT.match(token):
        raise NotationSyntaxError(f"{token!r} is not a whole number")
    return int(token)


def _card(token: str) -> str:
    if not _CARD.match(token):
        raise NotationSyntaxError(f"{token!r} is not a card (rank 2-9 T J Q K A, then suit H S D C)")
    return token


def _list(token: str, item: Callable[[str], Any]) -> list[Any]:
    return [] if token == NONE else [item(t) for t in token.split(",")]


def _bool(token: str) -> bool:
    if token not in ("yes", "no"):
        raise NotationSyntaxError(f"{token!r} is neither 'yes' nor 'no'")
    return token == "yes"


def _seatcard(token: str) -> list[Any]:
    seat, sep, card = token.partition(":")
    if not sep:
        raise NotationSyntaxError(f"{token!r} is not SEAT:CARD")
    return [_int(seat), _card(card)]


def _word(token: str) -> str:
    if not _WORD.match(token):
        raise NotationSyntaxError(f"{token!r} is not a word")
    return token


def _flag(token: str) -> bool:
    if token not in ("forced", "chosen"):
        raise NotationSyntaxError(f"{token!r} is neither 'forced' nor 'chosen'")
    return token == "forced"


def _joined(values: list[Any], show: Callable[[Any], str] = str) -> str:
    return ",".join(show(v) for v in values) if values else NONE


# type name -> (read one token, write one value)
TYPES: dict[str, tuple[Callable[[str], Any], Callable[[Any], str]]] = {
    "int": (_int, lambda v: str(int(v))),
    "word": (_word, str),
    "card": (_card, str),
    "optcard": (lambda t: None if t == NONE else _card(t), lambda v: NONE if v is None else str(v)),
    "cards": (lambda t: _list(t, _card), _joined),
    "ints": (lambda t: _list(t, _int), _joined),
    "bools": (lambda t: _list(t, _bool), lambda v: _joined(v, lambda b: "yes" if b else "no")),
    "cardlists": (lambda t: [_list(p, _card) for p in t.split("/")],
                  lambda v: "/".join(_joined(p) for p in v)),
    "intlists": (lambda t: [_list(p, _int) for p in t.split("/")],
                 lambda v: "/".join(_joined(p) for p in v)),
    "seatcards": (lambda t: _list(t, _seatcard), lambda v: _joined(v, lambda p: f"{p[0]}:{p[1]}")),
    "flag": (_flag, lambda v: "forced" if v else "chosen"),
}


@dataclass(frozen=True)
class LineTemplate:
    """How one kind of record is written as a line, and read back."""

    kind: str
    template: str

    @property
    def keyword(self) -> str:
        return self.template.split(" ", 1)[0]

    def _parts(self) -> list[tuple[str, str | None]]:
        """(literal, None) or (field, type) per token."""
        out: list[tuple[str, str | None]] = []
        for token in self.template.split(" "):
            m = _PLACEHOLDER.match(token)
            if m is None:
                out.append((token, None))
            else:
                if m.group(2) not in TYPES:
                    raise ValueError(f"unknown type {m.group(2)!r} in {self.template!r}")
                out.append((m.group(1), m.group(2)))
        return out

    @property
    def fields(self) -> list[str]:
        return [name for name, kind in self._parts() if kind is not None]

    def write(self, record: dict[str, Any]) -> str:
        tokens = []
        for name, kind in self._parts():
            if kind is None:
                tokens.append(name)
            else:
                if name not in record:
                    raise KeyError(f"a {self.kind} record without {name!r}")
                tokens.append(TYPES[kind][1](record[name]))
        return " ".join(tokens)

    def read(self, text: str) -> dict[str, Any]:
        tokens = text.split(" ")
        parts = self._parts()
        if len(tokens) != len(parts):
            raise NotationSyntaxError(f"a {self.keyword} line has {len(parts)} words "
                                      f"({self.template}), this one {len(tokens)}")
        record: dict[str, Any] = {"kind": self.kind}
        for token, (name, kind) in zip(tokens, parts):
            if kind is None:
                if token != name:
                    raise NotationSyntaxError(f"expected {name!r} where {token!r} is "
                                              f"({self.template})")
            else:
                try:
                    record[name] = TYPES[kind][0](token)
                except NotationSyntaxError as exc:
                    raise NotationSyntaxError(f"{name}: {exc}") from None
        return record

    def project(self, record: dict[str, Any]) -> dict[str, Any]:
        """What a line of this kind says of ``record`` (the fields it shows)."""
        return self.read(self.write(record))


@dataclass(frozen=True)
class GameNotation:
    """The lines of one game: one template per kind of engine record."""

    game: str
    templates: tuple[LineTemplate, ...]

    def for_kind(self, kind: str) -> LineTemplate | None:
        return next((t for t in self.templates if t.kind == kind), None)

    def for_keyword(self, keyword: str) -> LineTemplate | None:
        return next((t for t in self.templates if t.keyword == keyword), None)
