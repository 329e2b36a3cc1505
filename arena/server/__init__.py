"""The bot server: connections, the lobby, tables and match sessions.

* :mod:`.server` -- :class:`~.server.ArenaServer`: listens for bots, admits
  them, seats them (lobby matchmaking or :meth:`~.server.ArenaServer.play_match`)
  and runs the tables; services (the web app, the director) run beside it;
* :mod:`.connection` -- one bot's connection: frames, hello, limits;
* :mod:`.admission`, :mod:`.identity` -- who may connect, and as whom (pure);
* :mod:`.lobby` -- bots without a seat, and how they get one;
* :mod:`.session` -- one match as a sans-IO state machine (deadlines, the
  bank, autopilot, returns), :mod:`.session_output` what it sends;
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
