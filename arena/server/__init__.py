"""The bot server: connections, the lobby, tables and match sessions.

* :mod:`.server` -- :class:`~.server.ArenaServer`: the facade that owns the
  listeners and the lifetime of the parts below and routes what a connection
  says to the part it is for; matches are asked of it by
  :meth:`~.server.ArenaServer.play_match`; services (the web app, the
  director) run beside it;
* :mod:`.gate` -- which connections are let in, as which bot, for which game;
* :mod:`.connection` -- one bot's connection: frames, hello, limits;
* :mod:`.admission`, :mod:`.identity` -- who may connect, and as whom (pure);
* :mod:`.lobby` -- bots without a seat, and how they get one;
* :mod:`.seating` -- a new table's seats, house bots included;
* :mod:`.tables` -- the running tables: built, run, forgotten at their end;
* :mod:`.session` -- one match as a sans-IO state machine (deadlines, the
  bank, autopilot, returns), :mod:`.session_output` what it sends (an object
  the session owns);
* :mod:`.table` -- the asyncio driver of a session; :mod:`.seats` who sits where;
* :mod:`.local_bots` -- bots the arena starts as subprocesses;
* :mod:`.config` -- the server's settings.

It imports games, protocol and storage (and the live hub), never the
tournament, web or CLI code above it.

Errors::

    ServerError
    ├── AuthError            the hello's token is not accepted
    ├── HelloRefused         the hello may not be served now (a limit)
    ├── IdentityError        token and name disagree on an open server
    ├── ClaimTimeoutError    a named bot was not there in time (also a TimeoutError)
    └── EntrantCommandError  local bot commands that cannot start
"""
