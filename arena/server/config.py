"""Server settings, with the defaults a local arena runs with."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 7000  # bots (TCP); 0 picks a free port
    http_port: int | None = 8080  # None: no HTTP server; 0 picks a free port
    db: str = "arena.db"
    open: bool = False  # accept any token; the bot's name comes from hello
    game: str = "muushig"
    rules: dict | None = None  # rule options of the lobby's matches (the game's defaults)
    decision_ms: int = 1000
    bank_ms: int = 10_000
    # Lobby: seat waiting bots at new tables; fill empty seats with house
    # bots once somebody has waited this long (None: never fill).
    matchmaking: bool = True
    house_wait_s: float | None = 10.0
    house_bot: str | None = None  # None: the game's default house bot
    # Faults.
    hello_timeout_s: float = 5.0
    timeouts_before_autopilot: int = 3
    max_connections: int = 2000
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
    server_name: str = "muushig-arena/0.1"
