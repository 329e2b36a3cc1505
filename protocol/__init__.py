"""The arena wire protocol (version 1): framing, messages, errors, deals.

Sans-IO: nothing here opens a socket except the bot SDK in
:mod:`protocol.sdk`. See ``protocol/README.md`` for the protocol in prose.
"""

from protocol.codec import Decoder, Encoding, decode_one, encode
from protocol.deals import commitment, new_salt, verify_reveal
from protocol.errors import (
    ERROR_EXPLANATIONS,
    ErrorCode,
    FrameError,
    FrameTooLargeError,
    MalformedFrameError,
    MessageError,
    ProtocolError,
    UnknownTypeError,
    ValidationError,
)
from protocol.messages import (
    HELLO_TIMEOUT_S,
    MAX_BOT_FRAME,
    MAX_SERVER_FRAME,
    PROTOCOL_VERSION,
    Action,
    BotMessage,
    Bye,
    Error,
    Event,
    Hello,
    Limits,
    MatchEnd,
    MatchStart,
    Request,
    ServerMessage,
    Welcome,
    parse_bot_message,
    parse_server_message,
)

__all__ = [
    "ERROR_EXPLANATIONS",
    "HELLO_TIMEOUT_S",
    "MAX_BOT_FRAME",
    "MAX_SERVER_FRAME",
    "PROTOCOL_VERSION",
    "Action",
    "BotMessage",
    "Bye",
    "Decoder",
    "Encoding",
    "Error",
    "ErrorCode",
    "Event",
    "FrameError",
    "FrameTooLargeError",
    "Hello",
    "Limits",
    "MalformedFrameError",
    "MatchEnd",
    "MatchStart",
    "MessageError",
    "ProtocolError",
    "Request",
    "ServerMessage",
    "UnknownTypeError",
    "ValidationError",
    "Welcome",
    "commitment",
    "decode_one",
    "encode",
    "new_salt",
    "parse_bot_message",
    "parse_server_message",
    "verify_reveal",
]
