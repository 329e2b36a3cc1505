"""A match as notation text: the headers, then one line per event.

The file is plain UTF-8 text (docs/notation.md gives the grammar)::

    % arena notation 1
    Event: ladder
    Match: 20261202-105904-45cdbd
    ...
    Result: {"ranks":[2,4,5,3,1],...}

    round 0 dealer 0 scores 15,15,15,15,15
    deal round 0 hand 0 deck JS,8C,...

A line starting with ``;`` is a comment. The writer takes a match in its
wire form (what ``GET /api/matches/{id}`` serves) and its stored records,
so the command line and the web write the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from arena.notation.errors import NotationError, NotationSyntaxError, NotWritableError
from arena.notation.games import NOTATIONS
from arena.notation.lines import GameNotation

FORMAT_LINE = "% arena notation 1"
_HEADER = re.compile(r"^([A-Z][A-Za-z]*)(?: ([^:]+))?: (.*)$")
_HEX = re.compile(r"^[0-9a-f]{2,128}$")
_LABEL_PART = re.compile(r"^([a-z_]+)=(-?[0-9]{1,9})$")
# Records of the server, not the engine: commitments go to the headers;
# a seat's timeouts, autopilot and the decisions the arena took for it
# become comments (the engine's records hold every decision already).
COMMIT = "commit"
SERVER_NOTES = ("action", "timeout", "autopilot")
_LABEL_SKIP = ("kind", "commitment", "deck", "salt")


def label_of(record: Mapping[str, Any]) -> dict[str, int]:
    """The deal a commit, deal or reveal record names: ``{"round": 0,
    "hand": 3}`` in Muushig, ``{"deal": 2}`` in thirteen."""
    return {k: v for k, v in record.items() if k not in _LABEL_SKIP}


def label_text(label: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in label.items())


def parse_label(text: str) -> dict[str, int]:
    label: dict[str, int] = {}
    for part in text.split(","):
        m = _LABEL_PART.match(part)
        if m is None:
            raise NotationSyntaxError(f"{text!r} is not a deal label such as round=0,hand=1")
        label[m.group(1)] = int(m.group(2))
    return label


def _key(label: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(label.items()))


def notation_for(game: str) -> GameNotation:
    try:
        return NOTATIONS[game]
    except KeyError:
        raise NotWritableError(f"no notation for the game {game!r} (known: "
                               f"{', '.join(sorted(NOTATIONS))})") from None


# -- writing ----------------------------------------------------------------------
def _date(at: Any) -> str:
    if not isinstance(at, (int, float)):
        return "?"
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _comment(record: Mapping[str, Any]) -> str:
    """A server note as a comment line: a timeout, autopilot, or who chose
    the next decision when the seat's bot did not."""
    seat, kind = record.get("seat"), record.get("kind")
    if kind == "timeout":
        return f"; seat {seat} ran out of time ({record.get('phase')})"
    if kind == "autopilot":
        return f"; seat {seat} autopilot: {record.get('reason')}"
    return f"; seat {seat}: the arena chose its {record.get('phase')} ({record.get('source')})"


def write_notation(match: Mapping[str, Any], records: Iterable[Mapping[str, Any]], *,
                   event: str | None = None, deal_key: str | None = None,
                   deal_table: str | None = None) -> str:
    """The notation of a finished match whose decks are revealed.

    ``match``: the match in wire form (id, game, players, rules, result,
    reveal, tournament_id, started_at); ``records``: its stored records in
    order. ``deal_key`` and ``deal_table``: a revealed deal key and the table
    the decks were derived under, when known."""
    if match.get("result") is None:
        raise NotWritableError(f"match {match.get('id')} is not finished: it has no notation yet")
    if match.get("reveal") is None:
        raise NotWritableError(f"match {match.get('id')} has not revealed its decks: "
                               "it has no notation yet")
    game = notation_for(str(match["game"]))
    body: list[str] = []
    commits: list[tuple[dict[str, int], str]] = []
    for record in records:
        kind = record.get("kind")
        if kind == COMMIT:
            commits.append((label_of(record), str(record["commitment"])))
        elif kind in SERVER_NOTES:
            body.append(_comment(record))
        else:
            template = game.for_kind(str(kind))
            if template is None:
                raise NotWritableError(f"a {kind!r} record has no line in the {game.game} notation")
            body.append(template.write(dict(record)))
    salts = {_key(label_of(r)): str(r["salt"]) for r in match["reveal"]}
    tid = match.get("tournament_id")
    head = [FORMAT_LINE,
            f"Event: {event or ('tournament ' + str(tid) if tid else 'ladder')}",
            f"Match: {match['id']}",
            f"Date: {_date(match.get('started_at'))}",
            f"Game: {game.game}",
            f"Rules: {_json(match.get('rules') or {})}"]
    head += [f"Seat {i}: {name}" for i, name in enumerate(match["players"])]
    head.append(f"Result: {_json(match['result'])}")
    if deal_key is not None:
        head += [f"DealTable: {deal_table or ''}", f"DealKey: {deal_key}"]
    for label, digest in commits:
        head.append(f"Commit {label_text(label)}: {digest}")
        salt = salts.get(_key(label))
        if salt is not None:
            head.append(f"Salt {label_text(label)}: {salt}")
    return "\n".join(head + [""] + body) + "\n"


# -- reading ----------------------------------------------------------------------
@dataclass
class BodyLine:
    number: int  # 1-based line of the file
    text: str
    record: dict[str, Any]


@dataclass
class DealHeader:
    label: dict[str, int]
    commitment: str
    line: int
    salt: str | None = None


@dataclass
class Notation:
    """A parsed notation file: every header with its line, and the body."""

    game: str
    match_id: str
    event: str
    date: str
    rules: dict[str, Any]
    players: list[str]
    result: dict[str, Any]
    deals: list[DealHeader]
    body: list[BodyLine]
    lines: dict[str, int] = field(default_factory=dict)  # header name -> its line
    deal_key: str | None = None
    deal_table: str | None = None

    def deal(self, label: Mapping[str, Any]) -> DealHeader | None:
        return next((d for d in self.deals if d.label == dict(label)), None)


_SINGLE = ("Event", "Match", "Date", "Game", "Rules", "Result", "DealKey", "DealTable")
_REQUIRED = ("Event", "Match", "Date", "Game", "Rules", "Result")


def _header(notation_lines: list[tuple[int, str]]) -> tuple[dict[str, tuple[int, str]],
                                                             dict[int, tuple[int, str]],
                                                             list[DealHeader]]:
    single: dict[str, tuple[int, str]] = {}
    seats: dict[int, tuple[int, str]] = {}
    deals: list[DealHeader] = []
    for number, text in notation_lines:
        m = _HEADER.match(text)
        if m is None:
            raise NotationError(number, "not a header (NAME: VALUE); the headers end at the "
                                        "first empty line")
        name, arg, value = m.group(1), m.group(2), m.group(3)
        if name in _SINGLE and arg is None:
            if name in single:
                raise NotationError(number, f"a second {name} header (the first is on line "
                                            f"{single[name][0]})")
            single[name] = (number, value)
        elif name == "Seat" and arg is not None and arg.isdigit():
            if int(arg) in seats:
                raise NotationError(number, f"seat {arg} is named twice")
            seats[int(arg)] = (number, value)
        elif name in ("Commit", "Salt") and arg is not None:
            try:
                label = parse_label(arg)
            except NotationSyntaxError as exc:
                raise NotationError(number, str(exc)) from None
            if not _HEX.match(value):
                raise NotationError(number, f"{name.lower()} {value!r} is not lowercase hex")
            found = next((d for d in deals if d.label == label), None)
            if name == "Commit":
                if found is not None:
                    raise NotationError(number, f"deal {arg} is committed twice")
                deals.append(DealHeader(label, value, number))
            elif found is None:
                raise NotationError(number, f"a salt for deal {arg} before its Commit header")
            else:
                found.salt = value
        else:
            raise NotationError(number, f"unknown header {text.split(':', 1)[0]!r}")
    return single, seats, deals


def parse_notation(text: str) -> Notation:
    """Read a notation file strictly: every line must be as the grammar
    says; the first that is not raises :class:`NotationError` naming it."""
    numbered = [(i + 1, line.rstrip("\r")) for i, line in enumerate(text.split("\n"))]
    content = [(n, t) for n, t in numbered if not t.startswith(";")]
    if not content or content[0][1] != FORMAT_LINE:
        raise NotationError(content[0][0] if content else 1,
                            f"a notation file starts with {FORMAT_LINE!r}")
    rest = content[1:]
    blank = next((i for i, (_, t) in enumerate(rest) if t == ""), len(rest))
    single, seats, deals = _header(rest[:blank])
    last = rest[blank - 1][0] if blank else content[0][0]
    for name in _REQUIRED:
        if name not in single:
            raise NotationError(last, f"the headers lack {name}")
    if sorted(seats) != list(range(len(seats))) or not seats:
        raise NotationError(last, f"the Seat headers must number the seats 0, 1, ... "
                                  f"(found {sorted(seats)})")
    parsed: dict[str, Any] = {}
    for name in ("Rules", "Result"):
        number, value = single[name]
        try:
            parsed[name] = json.loads(value)
        except ValueError as exc:
            raise NotationError(number, f"{name} is not JSON: {exc}") from None
        if not isinstance(parsed[name], dict):
            raise NotationError(number, f"{name} must be a JSON object")
    game_line, game = single["Game"]
    try:
        notation = notation_for(game)
    except NotWritableError as exc:
        raise NotationError(game_line, str(exc)) from None
    body: list[BodyLine] = []
    for number, line in rest[blank + 1:]:
        if line == "":
            continue
        template = notation.for_keyword(line.split(" ", 1)[0])
        if template is None:
            raise NotationError(number, f"{line.split(' ', 1)[0]!r} is no {game} line "
                                        f"(lines: {', '.join(t.keyword for t in notation.templates)})")
        try:
            body.append(BodyLine(number, line, template.read(line)))
        except NotationSyntaxError as exc:
            raise NotationError(number, str(exc)) from None
    return Notation(
        game=game, match_id=single["Match"][1], event=single["Event"][1],
        date=single["Date"][1], rules=parsed["Rules"],
        players=[seats[i][1] for i in range(len(seats))], result=parsed["Result"],
        deals=deals, body=body, lines={k: v[0] for k, v in single.items()} | {
            f"Seat {i}": seats[i][0] for i in seats},
        deal_key=single["DealKey"][1] if "DealKey" in single else None,
        deal_table=single["DealTable"][1] if "DealTable" in single else None)
