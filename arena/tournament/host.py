"""What the tournament code needs of the server it plays on.

The runner and the director drive matches through this small interface, not
through the server's lobby or tables, so the tournament layer sits above the
server without reaching into it. :class:`arena.server.server.ArenaServer`
satisfies it; a test may pass anything else that does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from arena.server.config import ServerConfig
    from arena.server.server import MatchOutcome, PlayerSpec
    from arena.server.table import TimeLimits
    from arena.storage.base import Store
    from arena.storage.writer import StoreWriter


class ProgressSink(Protocol):
    """Where a tournament publishes its progress for spectators."""

    def standings_changed(self, scope: str) -> None: ...

    def tournament_progress(self, tournament_id: str, done: int, total: int) -> None: ...


class MatchHost(Protocol):
    """Plays matches, keeps entrants' names reserved, publishes progress."""

    store: Store
    writer: StoreWriter
    config: ServerConfig
    stopping: bool
    port: int | None

    @property
    def hub(self) -> ProgressSink: ...  # read-only here: a host's own hub may be richer

    async def play_match(self, players: list[PlayerSpec], *, seed: str | None = None,
                         rules: dict | None = None, tournament_id: str | None = None,
                         claim_timeout_s: float = 30.0, limits: TimeLimits | None = None,
                         deal_key: bytes | None = None,
                         slot: tuple[str, int] | None = None,
                         game: str | None = None, sealed: bool = False) -> MatchOutcome: ...

    @property
    def advertised(self) -> str | None:
        """host:port where bots reach this host (None: not known)."""

    def move_bots(self, names: set[str], message: dict[str, Any]) -> list[str]:
        """Send ``move`` to the idle, movable connections of these bots and
        close them; returns the bots moved."""

    def send_to_bots(self, names: set[str], message: dict[str, Any]) -> int:
        """Send a message outside any match (a deferred ``reveal``) to every
        connection of these bots; returns how many got it."""

    def reserve_names(self, names: Iterable[str]) -> None:
        """Seat bots of these names only when a match asks for them by name."""

    def release_names(self, names: Iterable[str]) -> None: ...

    def idle_bots(self) -> list[str]:
        """Names of the connected bots waiting in the lobby."""

    def connected_bots(self) -> set[str]:
        """Names of the bots connected to this host (in the lobby or playing)."""

    def playing_match_ids(self) -> set[str]:
        """The matches this host's tables are playing now."""

    def slot_started(self, slot: tuple[str, int]) -> bool:
        """Whether the table of ``slot`` (if any) is stored as started."""

    def mark_cancelled(self, reason: str, *, tournament_id: str | None = None,
                       slot: tuple[str, int] | None = None) -> None:
        """Why the cancel about to reach these tables ends their matches."""

    def local_token(self, name: str) -> str:
        """A token for a bot the tournament starts itself."""
