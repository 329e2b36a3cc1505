"""Server settings, with the defaults a local arena runs with."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from importlib import metadata


def _software() -> str:
    """What ``welcome.server`` says: this package and its version."""
    try:
        return f"muushig-arena/{metadata.version('muushig-arena')}"
    except metadata.PackageNotFoundError:  # run from a source tree without installing
        return "muushig-arena/0.1.0"


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 7000  # bots (TCP); 0 picks a free port
    # host:port where bots reach this node, given to movable bots of other
    # nodes (protocol ``move``); None: host:port, unless host is a wildcard.
    advertise: str | None = None
    http_port: int | None = 8080  # None: no HTTP server; 0 picks a free port
    db: str = "arena.db"
    open: bool = False  # accept any token; the bot's name comes from hello
    game: str = "muushig"
    rules: dict | None = None  # rule options of the lobby's matches (the game's defaults)
    decision_ms: int = 1000
    bank_ms: int = 10_000
    # A person's clock at the play page (the bots at the table keep theirs).
    person_decision_ms: int = 30_000
    person_bank_ms: int = 60_000
    # Lobby: seat waiting bots at new tables; fill empty seats with house
    # bots once somebody has waited this long (None: never fill).
    matchmaking: bool = True
    house_wait_s: float | None = 10.0
    house_bot: str | None = None  # None: the game's default house bot
    # Faults.
    hello_timeout_s: float = 5.0  # the whole hello, however it is trickled in
    timeouts_before_autopilot: int = 3
    # A table whose remote bots have all left waits this long (nothing is
    # played) for one to come back before the match is aborted.
    abandon_grace_s: float = 5.0
    # Connection limits (protocol page, "Limits"). Every refusal is an
    # ``error`` with the reason, then a close. The arena's own local bots
    # (all from 127.0.0.1) stop counting against their address once their
    # hello shows their local token, so local tournaments never hit it.
    max_connections: int = 2000
    max_connections_per_address: int = 64
    max_connections_per_token: int = 8
    listen_backlog: int = 1024  # connects queued before the server accepts them
    # Open the bot port. An ``arena serve`` worker does not: every bot it
    # plays is handed over by the parent (adopt_connection), so a port of its
    # own would only be one more way in.
    listen: bool = True
    # A connection that said hello but is neither seated nor waiting for a
    # seat anyone may give it is closed after this long.
    idle_timeout_s: float = 60.0
    # Failed hellos (bad token, name conflict) per address per minute; past
    # it, hellos from there are refused (with retry_after_s) unchecked.
    auth_failures_per_minute: int = 10
    close_linger_s: float = 2.0  # reading on after a closing error, so it is not reset away
    max_write_buffer: int = 4 << 20  # a reader this far behind is dropped
    # Messages a connection may send unasked, with this much burst; every
    # request sent to it credits the bucket, so answers never run it dry.
    rate_limit_per_s: float = 50.0
    rate_limit_burst: int = 200
    rate_limit_strikes: int = 50  # refused messages before the connection closes
    admin_token: str | None = None
    registration: str = "admin"  # HTTP registration: open | admin | closed (arena.web.keys)
    # Play tournaments created over HTTP (remote entrants) on this server.
    run_tournaments: bool = False
    # This start of the server, shared by the parent and the workers of
    # ``arena serve --workers`` (they get the parent's config): open mode's
    # names are held in the store for one epoch (arena.storage.open_names).
    open_epoch: str = field(default_factory=lambda: secrets.token_hex(8))
    server_name: str = _software()
