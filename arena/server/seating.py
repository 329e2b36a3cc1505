"""Who sits where at a new table: bots from the lobby, house bots for the rest.

:class:`Seating` turns connections and player names into a table's
:class:`~arena.server.seats.Seat` list: a lobby table's bots in shuffled
seats with house bots in the empty ones, a directed match's seats in the
order asked for (each named bot claimed from the lobby in time, or played
by autopilot in its name when it may stand in). Every seat gets a house bot
of the match's game, which plays it when its bot does not. It knows the
games the server plays and which rules each gets; it runs no table.
"""

from __future__ import annotations

import inspect
import random

import structlog

from arena.games import get_game
from arena.games.base import GameSpec, HouseBot
from arena.server.config import ServerConfig
from arena.server.connection import BotConnection
from arena.server.lobby import ClaimTimeoutError, Lobby
from arena.server.matches import PlayerSpec
from arena.server.seats import AutopilotReason, Seat, SeatKind

log = structlog.get_logger("arena.server")


class Seating:
    """The games a server plays, their rules, and the seats of its tables."""

    def __init__(self, config: ServerConfig, rng: random.Random | None = None) -> None:
        self.config = config
        # The default game: a hello without ``game``, and ``arena match``'s.
        # Every registered game is served; each connection waits for its own.
        self.spec: GameSpec = get_game(config.game)
        self._rng = rng or random.Random()
        self.seats_for(config.rules)  # a bad rules dict fails here, at start

    # -- games and rules --------------------------------------------------------------
    def spec_of(self, game: str | None) -> GameSpec:
        """The game named ``game``; None is the server's default game."""
        return self.spec if game is None or game == self.spec.name else get_game(game)

    def seats_for(self, rules: dict | None, game: str | None = None) -> int:
        """Seats at a table of ``game`` under ``rules``; bad rules raise RuleConfigError."""
        spec = self.spec_of(game)
        return spec.new_match(rules, None, None).n_seats if rules else spec.n_seats

    def lobby_rules(self, game: str) -> dict | None:
        """The configured rules are the default game's (others play their defaults)."""
        return self.config.rules if game == self.spec.name else None

    @staticmethod
    def match_rules(spec: GameSpec, rules: dict | None) -> dict:
        """Every rule of a match of ``spec`` with these options, as the
        engine resolves them (and sends them in ``match_start.rules``)."""
        return dict(spec.new_match(rules, None, None).rules)

    # -- house bots -------------------------------------------------------------------
    def house_kind(self, spec: GameSpec, kind: str | None = None) -> str:
        """``kind`` if given, else the configured house bot where this game
        has it, else the game's own default."""
        if kind is not None:
            return kind
        configured = self.config.house_bot
        return configured if configured in spec.house_bots else spec.default_house_bot

    def house(self, kind: str | None = None, spec: GameSpec | None = None,
              rules: dict | None = None) -> HouseBot:
        """A house bot of ``spec``'s game; factories that take the match's
        rules (``(rng, rules)``) get them, so they play by the match's flags."""
        spec = spec or self.spec
        factory = spec.house_bots[self.house_kind(spec, kind)]
        rng = random.Random(self._rng.random())
        if len(inspect.signature(factory).parameters) >= 2:
            return factory(rng, rules)
        return factory(rng)

    # -- seats ------------------------------------------------------------------------
    def remote_seat(self, index: int, conn: BotConnection, spec: GameSpec | None = None,
                    rules: dict | None = None) -> Seat:
        assert conn.identity is not None
        return Seat(index=index, name=conn.identity.bot, kind=SeatKind.REMOTE,
                    house=self.house(spec=spec, rules=rules),
                    token_hash=conn.identity.token_hash, conn=conn)

    def lobby_seats(self, conns: list[BotConnection], house: int,
                    spec: GameSpec) -> list[Seat]:
        """Matchmaking's table: these bots and ``house`` house bots, shuffled."""
        resolved = self.match_rules(spec, self.lobby_rules(spec.name))
        order: list[BotConnection | None] = [*conns, *([None] * house)]
        self._rng.shuffle(order)
        kind = self.house_kind(spec)
        seats: list[Seat] = []
        n_house = 0
        for index, conn in enumerate(order):
            if conn is None:
                n_house += 1
                seats.append(Seat(index=index, name=f"house-{kind}-{n_house}",
                                  kind=SeatKind.HOUSE, house=self.house(kind, spec, resolved)))
            else:
                seats.append(self.remote_seat(index, conn, spec, resolved))
        return seats

    async def claim_seats(self, lobby: Lobby, players: list[PlayerSpec], spec: GameSpec,
                          rules: dict | None, claim_timeout_s: float,
                          claimed: list[BotConnection]) -> tuple[list[Seat], list[str]]:
        """A directed match's seats in the order of ``players``, and the names
        of those played by autopilot because they were not there in time.
        Each connection taken from the lobby is added to ``claimed`` as soon
        as it is taken, so the caller can give them all back on a failure."""
        resolved = self.match_rules(spec, rules)
        seats: list[Seat] = []
        absent: list[str] = []
        for index, player in enumerate(players):
            if player.house is not None:
                seats.append(Seat(index=index, name=player.name, kind=SeatKind.HOUSE,
                                  house=self.house(player.house, spec, resolved)))
                continue
            timeout = (player.claim_timeout_s if player.claim_timeout_s is not None
                       else claim_timeout_s)
            try:
                conn = await lobby.claim(player.name, timeout, spec.name)
            except ClaimTimeoutError:
                if not player.stand_in:
                    raise
                absent.append(player.name)
                seats.append(Seat(index=index, name=player.name, kind=SeatKind.REMOTE,
                                  house=self.house(spec=spec, rules=resolved),
                                  token_hash=player.token_hash,
                                  autopilot=AutopilotReason.DISCONNECTED, disconnects=1))
                log.warning("seat_played_by_autopilot", bot=player.name,
                            reason="not connected", waited_s=timeout)
                continue
            claimed.append(conn)
            seats.append(self.remote_seat(index, conn, spec, resolved))
        return seats, absent
