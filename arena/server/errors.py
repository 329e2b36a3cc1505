"""The server layer's errors, as one small tree.

::

    ServerError
    ├── AuthError                the hello's token is not accepted (connection.py)
    ├── HelloRefused             the hello may not be served now: a limit (connection.py)
    ├── IdentityError            token and name disagree on an open server (identity.py)
    ├── ClaimTimeoutError (TimeoutError)  a named bot was not there in time (lobby.py)
    └── EntrantCommandError      local bot commands that cannot start (local_bots.py)

A bot's protocol mistakes are not exceptions here: they are answered on the
wire with the codes of ``protocol.errors``. Errors of the layers below keep
their own roots (``GameError``, ``StorageError``) and pass through.
"""

from __future__ import annotations


class ServerError(Exception):
    """The server cannot do what was asked (seat a bot, accept a hello...)."""
