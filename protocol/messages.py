"""Protocol messages as typed values: one frozen dataclass per ``type``.

``parse_bot_message`` / ``parse_server_message`` turn a decoded map into one
of these, checking every field they use; unknown fields are ignored (§1), an
unknown ``type`` raises :class:`~protocol.errors.UnknownTypeError`, a bad
field a :class:`~protocol.errors.ValidationError` naming it::

    hello.protocol: expected an integer, got 'one'

``to_wire()`` gives the map back. Payloads whose shape belongs to the game
(``rules``, ``state``, ``event``, ``legal``, ``action``, ``result``,
``reveal``) stay plain wire values: the protocol carries them, the game
defines them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Union

from protocol.errors import ErrorCode, UnknownTypeError, ValidationError

PROTOCOL_VERSION = 1
MAX_BOT_FRAME = 65_536
MAX_SERVER_FRAME = 1 << 20
MAX_NESTING = 32  # levels of maps and arrays in a bot's message, the message included
HELLO_TIMEOUT_S = 5.0

Wire = dict[str, Any]

_MISSING = object()


# --- field checks -----------------------------------------------------------


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing (the field is missing)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Fields:
    """Reads the fields of one message, naming ``type.field`` in errors."""

    __slots__ = ("_data", "_type")

    def __init__(self, data: Mapping[str, Any], type_name: str) -> None:
        self._data = data
        self._type = type_name

    def _fail(self, name: str, expected: str, value: Any) -> ValidationError:
        return ValidationError(f"{self._type}.{name}: expected {expected}, got {_show(value)}")

    def integer(self, name: str, *, minimum: int | None = None, optional: bool = False) -> Any:
        value = self._data.get(name, _MISSING)
        if optional and value in (_MISSING, None):
            return None
        # bool is an int in Python, never on the wire.
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(name, "an integer", value)
        if minimum is not None and value < minimum:
            raise self._fail(name, f"an integer >= {minimum}", value)
        return value

    def boolean(self, name: str, *, optional: bool = False) -> Any:
        value = self._data.get(name, _MISSING)
        if optional and value in (_MISSING, None):
            return None
        if not isinstance(value, bool):
            raise self._fail(name, "true or false", value)
        return value

    def string(self, name: str, *, optional: bool = False) -> Any:
        value = self._data.get(name, _MISSING)
        if optional and value in (_MISSING, None):
            return None
        if not isinstance(value, str):
            raise self._fail(name, "a string", value)
        return value

    def mapping(self, name: str, *, optional: bool = False) -> Any:
        value = self._data.get(name, _MISSING)
        if optional and value in (_MISSING, None):
            return {}
        if not isinstance(value, dict):
            raise self._fail(name, "a map", value)
        return value

    def array(self, name: str, *, optional: bool = False) -> Any:
        value = self._data.get(name, _MISSING)
        if optional and value in (_MISSING, None):
            return []
        if not isinstance(value, list):
            raise self._fail(name, "an array", value)
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        value = self.array(name)
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self._fail(f"{name}[{index}]", "a string", item)
        return tuple(value)

    def present(self, name: str) -> Any:
        """Any value, null included, but the field must be there."""
        value = self._data.get(name, _MISSING)
        if value is _MISSING:
            raise self._fail(name, "a value (null is allowed)", value)
        return value


# --- messages from bots -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """Bot → server, first message: ``protocol``, ``token``, optional ``name``
    and ``game`` (the game the bot wants to play; absent: the server's first),
    ``max_matches`` (leave after that many matches: the server sends ``bye``
    after the last one's ``match_end`` instead of seating it again) and
    ``ladder`` (true: the hosted-bot ladder may seat it with hosted bots),
    ``people`` (true: a person's table may seat it with a person) and
    ``movable`` (true: it follows a ``move`` to another node of the arena)."""

    type: ClassVar[str] = "hello"
    protocol: int
    token: str
    name: str | None = None
    game: str | None = None
    max_matches: int | None = None
    ladder: bool = False
    people: bool = False
    movable: bool = False

    def to_wire(self) -> Wire:
        wire: Wire = {"type": "hello", "protocol": self.protocol, "token": self.token}
        if self.name is not None:
            wire["name"] = self.name
        if self.game is not None:
            wire["game"] = self.game
        if self.max_matches is not None:
            wire["max_matches"] = self.max_matches
        if self.ladder:
            wire["ladder"] = True
        if self.people:
            wire["people"] = True
        if self.movable:
            wire["movable"] = True
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Hello":
        f = _Fields(data, "hello")
        return cls(protocol=f.integer("protocol"), token=f.string("token"),
                   name=f.string("name", optional=True),
                   game=f.string("game", optional=True),
                   max_matches=f.integer("max_matches", minimum=1, optional=True),
                   ladder=f.boolean("ladder", optional=True) or False,
                   people=f.boolean("people", optional=True) or False,
                   movable=f.boolean("movable", optional=True) or False)


@dataclass(frozen=True, slots=True)
class Action:
    """Bot → server: the answer ``action`` to request ``id`` of ``match``."""

    type: ClassVar[str] = "action"
    match: str
    id: int
    action: Any

    def to_wire(self) -> Wire:
        return {"type": "action", "match": self.match, "id": self.id, "action": self.action}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Action":
        return cls(*action_fields(data))


def action_fields(data: Mapping[str, Any]) -> tuple[str, int, Any]:
    """``(match, id, action)`` of an ``action`` map, checked as
    :meth:`Action.from_wire` checks them; the server reads every decision's
    answer this way, without building the message object."""
    # Well-formed fields are taken as they are; any other goes through the
    # field checks, which name what is wrong.
    match, request_id = data.get("match"), data.get("id")
    if type(match) is str and type(request_id) is int and "action" in data:
        return match, request_id, data["action"]
    f = _Fields(data, "action")
    return f.string("match"), f.integer("id"), f.present("action")


@dataclass(frozen=True, slots=True)
class Bye:
    """Either side: leaving; the sender closes the connection next."""

    type: ClassVar[str] = "bye"

    def to_wire(self) -> Wire:
        return {"type": "bye"}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Bye":
        return cls()


# --- messages from the server -----------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    type: ClassVar[str] = "welcome"
    protocol: int
    bot: str
    server: str

    def to_wire(self) -> Wire:
        return {"type": "welcome", "protocol": self.protocol, "bot": self.bot, "server": self.server}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Welcome":
        f = _Fields(data, "welcome")
        return cls(protocol=f.integer("protocol"), bot=f.string("bot"), server=f.string("server"))


@dataclass(frozen=True, slots=True)
class Error:
    """Server → bot. ``code`` is an :class:`ErrorCode` when known (a newer
    server may send codes this client does not know: they stay strings)."""

    type: ClassVar[str] = "error"
    code: ErrorCode | str
    message: str
    id: int | None = None
    match: str | None = None  # the match an answer named (request ids are per match)

    def to_wire(self) -> Wire:
        wire: Wire = {"type": "error", "code": str(self.code), "message": self.message}
        if self.id is not None:
            wire["id"] = self.id
        if self.match is not None:
            wire["match"] = self.match
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Error":
        f = _Fields(data, "error")
        code = f.string("code")
        try:
            code = ErrorCode(code)
        except ValueError:
            pass
        message = f.string("message", optional=True) or ""
        return cls(code=code, message=message, id=f.integer("id", optional=True),
                   match=f.string("match", optional=True))


@dataclass(frozen=True, slots=True)
class Limits:
    decision_ms: int
    bank_ms: int = 0

    def to_wire(self) -> Wire:
        return {"decision_ms": self.decision_ms, "bank_ms": self.bank_ms}


@dataclass(frozen=True, slots=True)
class MatchStart:
    type: ClassVar[str] = "match_start"
    match: str
    game: str
    seat: int
    players: tuple[str, ...]
    rules: Wire
    limits: Limits

    def to_wire(self) -> Wire:
        return {
            "type": "match_start",
            "match": self.match,
            "game": self.game,
            "seat": self.seat,
            "players": list(self.players),
            "rules": self.rules,
            "limits": self.limits.to_wire(),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "MatchStart":
        f = _Fields(data, "match_start")
        limits = _Fields(f.mapping("limits"), "match_start.limits")
        return cls(
            match=f.string("match"),
            game=f.string("game"),
            seat=f.integer("seat", minimum=0),
            players=f.strings("players"),
            rules=f.mapping("rules", optional=True),
            limits=Limits(
                decision_ms=limits.integer("decision_ms", minimum=0),
                bank_ms=limits.integer("bank_ms", minimum=0, optional=True) or 0,
            ),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """Server → bot: something this seat may see; ``event["kind"]`` says what."""

    type: ClassVar[str] = "event"
    match: str
    event: Wire

    @property
    def kind(self) -> str:
        return self.event["kind"]

    def to_wire(self) -> Wire:
        return {"type": "event", "match": self.match, "event": self.event}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Event":
        f = _Fields(data, "event")
        event = f.mapping("event")
        _Fields(event, "event.event").string("kind")
        return cls(match=f.string("match"), event=event)


@dataclass(frozen=True, slots=True)
class Request:
    """Server → bot: this seat must answer ``id`` within ``deadline_ms``.

    A request lists its ``legal`` answers, or, in a game whose answers are
    too many to list (thirteen's arrangements), carries ``constraints``
    instead and no ``legal`` field (``legal`` is then ``[]`` here)."""

    type: ClassVar[str] = "request"
    match: str
    id: int
    phase: str
    deadline_ms: int
    legal: list[Any]
    state: Wire
    constraints: Wire | None = None

    def to_wire(self) -> Wire:
        options = {"legal": self.legal} if self.constraints is None else {"constraints": self.constraints}
        return request_wire(self.match, self.id, self.phase, self.deadline_ms, options, self.state)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Request":
        f = _Fields(data, "request")
        # optional=True would turn a missing field into {}: look for the key itself
        constraints = f.mapping("constraints") if data.get("constraints") is not None else None
        return cls(
            match=f.string("match"),
            id=f.integer("id"),
            phase=f.string("phase"),
            deadline_ms=f.integer("deadline_ms", minimum=0),
            legal=f.array("legal") if constraints is None else [],
            state=f.mapping("state"),
            constraints=constraints,
        )


def request_wire(match: str, id: int, phase: str, deadline_ms: int, options: Wire,
                 state: Wire) -> Wire:
    """A ``request`` map: the one place its fields are laid out. ``options``
    are the game's fields (``{"legal": [...]}`` or ``{"constraints": {...}}``).
    The server's hot path builds requests with this, not via a dataclass."""
    return {"type": "request", "match": match, "id": id, "phase": phase,
            "deadline_ms": deadline_ms, **options, "state": state}


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """``reveal_deferred``: the match's decks are dealt again by a later match
    of its tournament, so ``reveal`` is empty and a :class:`Reveal` follows
    once the last of those matches is over."""

    type: ClassVar[str] = "match_end"
    match: str
    result: Wire
    reveal: list[Wire]
    reveal_deferred: bool = False

    def to_wire(self) -> Wire:
        wire: Wire = {"type": "match_end", "match": self.match, "result": self.result,
                      "reveal": self.reveal}
        if self.reveal_deferred:
            wire["reveal_deferred"] = True
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "MatchEnd":
        f = _Fields(data, "match_end")
        return cls(match=f.string("match"), result=f.mapping("result"),
                   reveal=f.array("reveal", optional=True),
                   reveal_deferred=data.get("reveal_deferred") is True)


@dataclass(frozen=True, slots=True)
class Reveal:
    """The deferred reveal of a match that ended earlier (protocol §6):
    its decks with their salts and, for thirteen, its showdowns in full
    (``events``). Sent once no unplayed match of the tournament deals them."""

    type: ClassVar[str] = "reveal"
    match: str
    reveal: list[Wire]
    events: list[Wire]

    def to_wire(self) -> Wire:
        return {"type": "reveal", "match": self.match, "reveal": self.reveal, "events": self.events}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Reveal":
        f = _Fields(data, "reveal")
        return cls(match=f.string("match"), reveal=f.array("reveal"),
                   events=f.array("events", optional=True) or [])


@dataclass(frozen=True, slots=True)
class Move:
    """Server → a bot whose hello said ``movable``, while it waits in the
    lobby: the tournament slot it waits for is played on another node of
    the arena, at ``host``:``port``; connect there with the same token.
    The server closes this connection after it (protocol §4)."""

    type: ClassVar[str] = "move"
    host: str
    port: int
    reason: str

    def to_wire(self) -> Wire:
        return {"type": "move", "host": self.host, "port": self.port, "reason": self.reason}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> "Move":
        f = _Fields(data, "move")
        return cls(host=f.string("host"), port=f.integer("port", minimum=1),
                   reason=f.string("reason", optional=True) or "")


BotMessage = Union[Hello, Action, Bye]
ServerMessage = Union[Welcome, Error, MatchStart, Event, Request, MatchEnd, Reveal, Move, Bye]

_BOT_TYPES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    cls.type: cls.from_wire for cls in (Hello, Action, Bye)
}
_SERVER_TYPES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    cls.type: cls.from_wire for cls in (Welcome, Error, MatchStart, Event, Request, MatchEnd, Reveal,
                                        Move, Bye)
}


def _parse(data: Any, table: dict[str, Callable[[Mapping[str, Any]], Any]]) -> Any:
    if not isinstance(data, dict):
        raise ValidationError(f"message: expected a map, got {_show(data)}")
    type_name = data.get("type", _MISSING)
    if not isinstance(type_name, str):
        raise ValidationError(f"message.type: expected a string, got {_show(type_name)}")
    parser = table.get(type_name)
    if parser is None:
        raise UnknownTypeError(type_name, tuple(table))
    return parser(data)


def parse_bot_message(data: Mapping[str, Any]) -> BotMessage:
    """A map a bot sent, as a message value (server side)."""
    if type(data) is dict:  # the common case in one step; _parse says what is wrong
        type_name = data.get("type")
        if type(type_name) is str:
            parser = _BOT_TYPES.get(type_name)
            if parser is not None:
                return parser(data)
    return _parse(data, _BOT_TYPES)


def parse_server_message(data: Mapping[str, Any]) -> ServerMessage:
    """A map the server sent, as a message value (client side)."""
    return _parse(data, _SERVER_TYPES)


__all__ = [
    "HELLO_TIMEOUT_S", "MAX_BOT_FRAME", "MAX_NESTING", "MAX_SERVER_FRAME", "PROTOCOL_VERSION",
    "Action", "BotMessage", "Bye", "Error", "ErrorCode", "Event", "Hello", "Limits", "MatchEnd",
    "MatchStart", "Move", "Request", "Reveal", "ServerMessage", "Welcome", "action_fields",
    "parse_bot_message", "parse_server_message", "request_wire",
]
