"""The protocol's error tree and its error codes.

::

    ProtocolError                 a peer sent something the protocol forbids
    ├── FrameError                the byte stream itself is broken (close it)
    │   ├── FrameTooLargeError    code frame_too_large
    │   └── MalformedFrameError   code malformed
    └── MessageError              a decoded map is not a valid message
        ├── ValidationError       code malformed: a field is missing or wrong
        └── UnknownTypeError      code unknown_type: keep the connection

Every ``ProtocolError`` carries the wire ``code`` the server answers with and a
message a bot author can act on. Our own misuse (encoding an object that is
not a message, say) raises ordinary ``TypeError``/``ValueError`` instead, so
the two are never confused.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Every ``code`` an ``error`` message may carry (protocol §4)."""

    HELLO_TIMEOUT = "hello_timeout"
    EXPECTED_HELLO = "expected_hello"
    AUTH_FAILED = "auth_failed"
    UNSUPPORTED_PROTOCOL = "unsupported_protocol"
    FRAME_TOO_LARGE = "frame_too_large"
    MALFORMED = "malformed"
    UNKNOWN_TYPE = "unknown_type"
    ILLEGAL_ACTION = "illegal_action"
    UNKNOWN_REQUEST = "unknown_request"
    LATE = "late"
    RATE_LIMITED = "rate_limited"

    @property
    def explanation(self) -> str:
        return ERROR_EXPLANATIONS[self]

    @property
    def closes_connection(self) -> bool:
        """Whether the server closes the connection after sending this code."""
        return self in _CLOSING_CODES


ERROR_EXPLANATIONS: dict[ErrorCode, str] = {
    ErrorCode.HELLO_TIMEOUT: "no complete hello within 5 s of connecting; the connection is closed",
    ErrorCode.EXPECTED_HELLO: "the first message was not a hello; the connection is closed",
    ErrorCode.AUTH_FAILED: ("the token is unknown or revoked, or (open mode) the name belongs to "
                            "another token; the connection is closed"),
    ErrorCode.UNSUPPORTED_PROTOCOL: "the hello asked for a protocol version the server does not speak",
    ErrorCode.FRAME_TOO_LARGE: "a frame or line was over the size limit; the connection is closed",
    ErrorCode.MALFORMED: ("bytes or a message the protocol does not allow (undecodable, not a map, "
                          "a non-string key, a float, nested over 32 levels, a missing or "
                          "wrongly typed field); the connection is closed"),
    ErrorCode.UNKNOWN_TYPE: "a message with a type the server does not know; it was ignored",
    ErrorCode.ILLEGAL_ACTION: "the answer is not in the request's legal list; answer again before the deadline",
    ErrorCode.UNKNOWN_REQUEST: "the answer names a request id never issued to this seat; it was ignored",
    ErrorCode.LATE: "the request was already settled (answered or defaulted); the answer was ignored",
    ErrorCode.RATE_LIMITED: ("over a limit: a refused message is ignored and the connection stays "
                             "open; over a limit on connections, failed hellos, idle time or "
                             "unread output, the connection is closed (retry_after_s says when "
                             "to try again)"),
}

_CLOSING_CODES = frozenset(
    {
        ErrorCode.HELLO_TIMEOUT,
        ErrorCode.EXPECTED_HELLO,
        ErrorCode.AUTH_FAILED,
        ErrorCode.UNSUPPORTED_PROTOCOL,
        ErrorCode.FRAME_TOO_LARGE,
        ErrorCode.MALFORMED,
    }
)


class ProtocolError(Exception):
    """A peer broke the protocol. ``code`` is the wire error code to answer."""

    code: ErrorCode = ErrorCode.MALFORMED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def closes_connection(self) -> bool:
        return self.code.closes_connection


class FrameError(ProtocolError):
    """The byte stream cannot be split into messages; the connection is done."""


class FrameTooLargeError(FrameError):
    code = ErrorCode.FRAME_TOO_LARGE


class MalformedFrameError(FrameError):
    code = ErrorCode.MALFORMED


class MessageError(ProtocolError):
    """A frame decoded to a map, but not to a valid message."""


class ValidationError(MessageError):
    """A field is missing or has the wrong type; the message names it,
    e.g. ``hello.protocol: expected an integer, got 'one'``."""

    code = ErrorCode.MALFORMED


class UnknownTypeError(MessageError):
    """The ``type`` is not one this side understands.

    Not fatal: the server answers ``unknown_type`` and keeps the connection.
    """

    code = ErrorCode.UNKNOWN_TYPE

    def __init__(self, type_name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown message type {type_name!r}; expected one of {', '.join(known)}")
        self.type_name = type_name

    @property
    def closes_connection(self) -> bool:
        return False
