"""Sans-IO framing for the arena protocol: bytes in, messages out, and back.

No sockets here. A connection owns one :class:`Decoder`; it feeds it whatever
bytes arrive and pulls complete messages (plain ``dict``\\ s) out::

    decoder = Decoder.for_server()          # detects the encoding
    decoder.receive_data(chunk)
    for message in decoder:                 # stops when more bytes are needed
        ...
    writer.write(encode(reply, decoder.encoding))

Two encodings (protocol §1):

* ``msgpack``: a 4-byte big-endian length N, then N bytes of one msgpack map.
* ``jsonl``: one JSON object per ``\\n``-terminated UTF-8 line. Chosen for the
  whole connection when the client's first byte is ``{`` (a msgpack frame
  always starts with a zero byte for any allowed length, so the two never
  collide). Any other first byte is neither: the server decoder refuses it
  at once with a message naming both encodings (a person typing ``hello``
  or a browser sending ``GET /`` learns what the port speaks), and answers
  in JSON Lines, the readable one.

Values are only maps, arrays, strings, integers, booleans and null (protocol
§1), nested at most :data:`MAX_NESTING` levels (the message itself is level
1): deeper values would reach handlers that recurse, so they are refused
here, in both encodings, before anything else sees them.

Limits are checked before anything big is buffered: a msgpack length prefix
over the limit is refused as soon as its 4 bytes are in, and a JSON line is
refused as soon as its unfinished part is longer than the limit.

A decoder raises only :class:`~protocol.errors.FrameError` subclasses, whatever
bytes it is given; after the first one it is broken and raises the same error
again (the connection is to be closed anyway).
"""

from __future__ import annotations

import json
import math
import re
import struct
from enum import StrEnum
from typing import Any, Callable, Iterator

import msgpack
import msgspec

from protocol.errors import FrameError, FrameTooLargeError, MalformedFrameError
from protocol.messages import MAX_BOT_FRAME, MAX_NESTING, MAX_SERVER_FRAME

Message = dict[str, Any]

# What a bot is told when its first byte starts neither encoding.
NOT_PROTOCOL = ("this port speaks 4-byte-length-prefixed msgpack frames (first byte 0x00) or "
                "JSON Lines (first byte '{'); see the protocol page (protocol/README.md, "
                "or /protocol on the arena's web server)")

_PREFIX = struct.Struct(">I")

# Encoding is msgspec's: the same bytes as ``msgpack.packb(value,
# use_bin_type=True)`` for every value the protocol allows (each int, string,
# array and map in its smallest format, floats as float64; a property test
# holds the two to it), at a quarter of the cost of a request. Decoding stays
# msgpack's, whose errors the decoder below turns into the protocol's.
# An encoder keeps no state between calls: one serves every thread.
# ``pack_msgpack(value)``: the msgpack bytes of a value, unframed.
pack_msgpack = msgspec.msgpack.Encoder().encode


class Encoding(StrEnum):
    MSGPACK = "msgpack"
    JSONL = "jsonl"


# --- encoding ---------------------------------------------------------------

_json_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def cached_json_encode(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` with its C encoder built once (compact, no indent).

    ``JSONEncoder.encode`` makes a new C encoder on every call, which costs
    about as much as encoding a small message. Same text, no circular check
    (plain trees; a cycle fails with RecursionError, not ValueError); without
    the C accelerator, the plain encoder."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    strings = (json.encoder.encode_basestring_ascii if encoder.ensure_ascii
               else json.encoder.encode_basestring)
    iterencode = make(None, encoder.default, strings, None, encoder.key_separator,
                      encoder.item_separator, encoder.sort_keys, encoder.skipkeys,
                      encoder.allow_nan)

    def encode_json(value: Any) -> str:
        return "".join(iterencode(value, 0))

    return encode_json


_encode_json = cached_json_encode(_json_encoder)


def encode(message: Message, encoding: Encoding | str, limit: int | None = None) -> bytes:
    """One message as wire bytes (a whole frame or line).

    ``limit``, if given, is the largest allowed frame body; a bigger message
    raises :class:`FrameTooLargeError` (e.g. the SDK refuses to send what the
    server would refuse to read).
    """
    if encoding == Encoding.MSGPACK:
        body = pack_msgpack(message)
        if limit is not None and len(body) > limit:
            raise FrameTooLargeError(f"message is {len(body)} bytes, over the {limit}-byte limit")
        return _PREFIX.pack(len(body)) + body
    if encoding == Encoding.JSONL:
        body = _encode_json(message).encode("utf-8")
        if limit is not None and len(body) > limit:
            raise FrameTooLargeError(f"line is {len(body)} bytes, over the {limit}-byte limit")
        return body + b"\n"
    raise ValueError(f"unknown encoding {encoding!r}; expected 'msgpack' or 'jsonl'")


# --- decoding ---------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a protocol value")


def _reject_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack extension type {code} is not a protocol value")


def _check_value(message: Any, deep: bool = True) -> Message:
    """A decoded frame must be a map with string keys, all the way down,
    nested at most ``MAX_NESTING`` deep, and hold only protocol values (no
    msgpack bin: it has no JSON equivalent; no floats: the protocol has
    none).

    ``deep=False`` checks the top level only: a client trusts the server's
    nested values and skips the walk over large states.
    """
    if type(message) is dict and deep:  # flat (most messages): one pass, no walk
        for key, item in message.items():
            if type(key) is not str or type(item) in _SUSPECT:
                break
        else:
            return message
    if not isinstance(message, dict):
        raise MalformedFrameError(f"a message must be a map, got {_kind(message)}")
    if not deep:
        for key in message:
            if not isinstance(key, str):
                raise MalformedFrameError(f"map keys must be strings, got key {key!r:.60}")
        return message
    # Iterative walk: a deeply nested value must not hit the recursion limit.
    # Only values that can be wrong or hold more are pushed: a bot's action
    # is a handful of strings and ints, checked without a walk.
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        kind = type(value)
        if kind is dict or kind is list:
            if depth > MAX_NESTING:
                raise MalformedFrameError(f"values nested too deep: more than {MAX_NESTING} levels "
                                          "of maps and arrays")
            if kind is dict:
                for key, item in value.items():
                    if type(key) is not str:
                        raise MalformedFrameError(f"map keys must be strings, got key {key!r:.60}")
                    if type(item) in _SUSPECT:
                        stack.append((item, depth + 1))
            else:
                for item in value:
                    if type(item) in _SUSPECT:
                        stack.append((item, depth + 1))
        elif kind is bytes or kind is bytearray:
            raise MalformedFrameError("binary values are not allowed; send strings")
        elif kind is float:
            what = "a float" if math.isfinite(value) else "NaN or an infinity"
            raise MalformedFrameError(f"{what} is not a protocol value (integers only), got {value!r}")
    return message


# The types a walk must look into or at: exact types, as the decoders make
# no subclasses.
_SUSPECT = frozenset({dict, list, bytes, bytearray, float})

# Integers both encodings can carry (msgpack's range): JSON has no bound.
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
_LONG_DIGITS = re.compile(r"[0-9]{19}")


def _check_int_range(message: Message) -> None:
    stack: list[Any] = [message]
    while stack:
        value = stack.pop()
        if type(value) is int and not _INT_MIN <= value <= _INT_MAX:
            raise MalformedFrameError(f"integer {str(value)[:30]}... is out of range "
                                      "(-2**63 to 2**64-1, as in msgpack)")
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _check_unicode(message: Message) -> None:
    """JSON may spell a lone surrogate (``"\\ud800"``), which is no Unicode
    text: refuse it here rather than fail when the text is sent back."""
    stack: list[Any] = [message]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise MalformedFrameError("a string holds a lone surrogate (\\ud800-\\udfff); "
                                          "strings must be valid Unicode") from None
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return type(value).__name__


class Decoder:
    """Splits one direction of a connection into messages.

    ``encoding=None`` detects it from the first byte (server side); a client
    knows its encoding. ``max_frame`` bounds a frame body or a line without
    its ``\\n``. ``deep_check`` walks nested values too (for untrusted peers).
    """

    def __init__(
        self, *, max_frame: int, encoding: Encoding | str | None = None, deep_check: bool = True
    ) -> None:
        self.max_frame = max_frame
        self.deep_check = deep_check
        self.encoding: Encoding | None = Encoding(encoding) if encoding is not None else None
        self._buffer = bytearray()
        self._scanned = 0  # JSONL: bytes of _buffer already known to hold no newline
        self._error: FrameError | None = None
        # A bot frame's length prefix always starts with 0x00 (N <= 64 KiB):
        # any other first byte is no protocol at all (server side only).
        self.detect_strictly = encoding is None and max_frame < 1 << 24

    @classmethod
    def for_server(cls) -> "Decoder":
        """Reads what a bot sends: encoding from the first byte, 64 KiB frames."""
        return cls(max_frame=MAX_BOT_FRAME)

    @classmethod
    def for_client(cls, encoding: Encoding | str = Encoding.MSGPACK) -> "Decoder":
        """Reads what the server sends: 1 MiB frames."""
        return cls(max_frame=MAX_SERVER_FRAME, encoding=encoding, deep_check=False)

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a returned message."""
        return len(self._buffer)

    def receive_data(self, data: bytes | bytearray) -> None:
        if self._error is not None:
            raise self._error
        if self.encoding is None and data:
            first = data[:1]
            if first == b"{":
                self.encoding = Encoding.JSONL
            elif first == b"\x00" or not self.detect_strictly:
                self.encoding = Encoding.MSGPACK
            else:
                # Reply in the readable encoding: whoever sent this is
                # likelier a person or a wrong client than a msgpack bot.
                self.encoding = Encoding.JSONL
                exc = MalformedFrameError(f"{NOT_PROTOCOL}; got {bytes(data[:16])!r}")
                self._fail(exc)
                raise exc
        self._buffer += data
        # Refuse an overlong line now rather than buffer it until its "\n"
        # (unless the read ends with one: there is a line to return first).
        if self.encoding is Encoding.JSONL and data[-1:] != b"\n":
            self._check_partial_line()

    def next_message(self) -> Message | None:
        """The next complete message, or None until more bytes arrive."""
        if self._error is not None:
            raise self._error
        # Every read of whole frames ends on an empty buffer: return at once.
        if not self._buffer or self.encoding is None:
            return None
        try:
            if self.encoding is Encoding.MSGPACK:
                return self._next_msgpack()
            return self._next_jsonl()
        except FrameError as exc:
            self._fail(exc)
            raise

    def __iter__(self) -> Iterator[Message]:
        while (message := self.next_message()) is not None:
            yield message

    def feed(self, data: bytes) -> list[Message]:
        """``receive_data`` then every complete message.

        If a bad frame follows good ones, the good ones are returned and the
        error is raised by the next call.
        """
        self.receive_data(data)
        messages: list[Message] = []
        try:
            for message in self:
                messages.append(message)
        except FrameError:
            if not messages:
                raise
        return messages

    # -- internals --

    def _fail(self, exc: FrameError) -> None:
        self._error = exc
        self._buffer.clear()  # nothing more will be read; release the memory

    def _next_msgpack(self) -> Message | None:
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        (size,) = _PREFIX.unpack_from(buffer)
        if size == 0:
            raise MalformedFrameError("empty frame (length 0); every frame holds one msgpack map")
        if size > self.max_frame:
            raise FrameTooLargeError(f"frame of {size} bytes announced, over the {self.max_frame}-byte limit")
        end = 4 + size
        if len(buffer) < end:
            return None
        body = buffer[4:end]
        del buffer[:end]
        try:
            value = msgpack.unpackb(
                body,
                raw=False,
                ext_hook=_reject_ext,
                strict_map_key=False,  # we report non-string keys ourselves
            )
        except (msgpack.StackError, RecursionError):
            raise MalformedFrameError(f"values nested too deep: more than {MAX_NESTING} levels "
                                      "of maps and arrays") from None
        except Exception as exc:  # msgpack raises many kinds; all mean "bad bytes"
            raise MalformedFrameError(f"frame does not hold exactly one msgpack value: {_describe(exc)}") from None
        return _check_value(value, self.deep_check)

    def _check_partial_line(self) -> None:
        newline = self._buffer.find(b"\n", self._scanned)
        if newline < 0:
            self._scanned = len(self._buffer)
            if self._scanned > self.max_frame:
                exc = FrameTooLargeError(f"line longer than {self.max_frame} bytes without a newline")
                self._fail(exc)
                raise exc

    def _next_jsonl(self) -> Message | None:
        buffer = self._buffer
        newline = buffer.find(b"\n", self._scanned)
        if newline < 0:
            self._scanned = len(buffer)
            if self._scanned > self.max_frame:
                raise FrameTooLargeError(f"line longer than {self.max_frame} bytes without a newline")
            return None
        if newline > self.max_frame:
            raise FrameTooLargeError(f"line of {newline} bytes, over the {self.max_frame}-byte limit")
        line = buffer[:newline]
        del buffer[: newline + 1]
        self._scanned = 0
        try:
            text = line.decode("utf-8")
            value = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise MalformedFrameError(f"values nested too deep: more than {MAX_NESTING} levels "
                                      "of maps and arrays") from None
        except Exception as exc:  # UnicodeDecodeError, JSONDecodeError, ValueError (digits), ...
            raise MalformedFrameError(f"line is not one UTF-8 JSON value: {_describe(exc)}") from None
        message = _check_value(value, self.deep_check)
        if self.deep_check:
            if "\\u" in text:  # only an escape can spell a surrogate
                _check_unicode(message)
            if _LONG_DIGITS.search(text):  # only 19+ digits can leave msgpack's range
                _check_int_range(message)
        return message


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


def decode_one(data: bytes, encoding: Encoding | str, max_frame: int = MAX_SERVER_FRAME) -> Message:
    """Decode exactly one whole frame or line (handy in tests and tools)."""
    decoder = Decoder(max_frame=max_frame, encoding=encoding)
    decoder.receive_data(data)
    message = decoder.next_message()
    if message is None:
        raise MalformedFrameError("incomplete frame")
    if decoder.buffered:
        raise MalformedFrameError(f"{decoder.buffered} bytes after the frame")
    return message


__all__ = [
    "MAX_BOT_FRAME",
    "MAX_SERVER_FRAME",
    "Decoder",
    "Encoding",
    "FrameError",
    "Message",
    "decode_one",
    "encode",
    "pack_msgpack",
]
