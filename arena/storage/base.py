"""The storage interface: everything the arena keeps across restarts.

Tables, matches, tournaments and the web know storage only through
:class:`Store`. Two backends implement it, both on the SQL of
:mod:`arena.storage.store` and the one schema of :mod:`arena.storage.schema`:
SQLite (:mod:`arena.storage.sqlite`), the embedded default, and PostgreSQL
(:mod:`arena.storage.postgres`), which several arena nodes can share.
:func:`arena.storage.open_store` picks one from a path or URL.

Methods are synchronous and each is one transaction; the server calls them
from a single writer thread (``arena.storage.writer``) so the event loop never
waits on disk. Values stored as JSON are plain wire dicts.

Crash-safety contract: a match is ``finished`` only once ``finish_match``
has committed its result together with its faults and latencies; on start-up
``abort_unfinished`` marks every ``running`` match ``aborted``. Aborted
matches never count in standings.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping
from collections.abc import Iterable, Sequence

if TYPE_CHECKING:
    from arena.storage.blocks import PendingBlock

Wire = dict[str, Any]


class StorageError(Exception):
    """Base of storage errors."""


class NotFoundError(StorageError, LookupError):
    """The requested bot, match or tournament does not exist."""


class AlreadyExistsError(StorageError):
    """A bot or tournament with that name / id exists already."""


class SlotTakenError(StorageError):
    """A tournament slot already holds a finished match: finishing another
    match for it would count the slot twice, so the finish is refused."""


class MatchStatus(str, enum.Enum):
    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"


class TournamentStatus(str, enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


# The kind of a person's record: people and bots share the bots table, so
# one name is never both (the table's primary key decides).
PERSON_KIND = "person"


@dataclass(frozen=True)
class BotRecord:
    name: str
    token_hash: str | None  # None for bots admitted in open mode / house bots
    created_at: float
    owner: str | None = None
    kind: str = "remote"  # "remote" | "house" | "local" (started by the arena) | PERSON_KIND
    removed: bool = False


@dataclass(frozen=True)
class SeatFaults:
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0
    autopilot: bool = False


@dataclass(frozen=True)
class MatchRecord:
    id: str
    game: str
    players: list[str]  # bot name per seat
    rules: Wire
    limits: Wire
    status: MatchStatus
    started_at: float
    finished_at: float | None = None
    tournament_id: str | None = None
    result: Wire | None = None  # protocol.md §6 ``result``
    reveal: list[Wire] | None = None  # protocol.md §6 ``reveal``
    faults: list[SeatFaults] | None = None  # per seat
    latency_ms: list[list[float]] | None = None  # per seat, every decision
    abort_reason: str | None = None
    seed: str | None = None  # how the decks were generated, for duplicates
    node: str | None = None  # the arena node playing it (several nodes share PostgreSQL)


@dataclass(frozen=True)
class StoredEvent:
    seq: int  # 0, 1, 2, ... within the match
    at: float  # wall-clock seconds
    data: Wire  # the event's ``for_record()`` form, or an action record


@dataclass(frozen=True)
class TournamentRecord:
    id: str
    name: str
    game: str
    config: Wire  # the parsed TOML config
    status: TournamentStatus
    created_at: float
    finished_at: float | None = None


@dataclass(frozen=True)
class ScheduledMatch:
    """One slot of a tournament's schedule."""

    tournament_id: str
    slot: int  # 0-based position in the schedule
    players: list[str]  # bot name per seat
    seed: str  # deck seed (same for all duplicate rotations of a table)
    match_id: str | None = None  # set once a match for this slot finished
    attempts: int = 0
    extra: Wire = field(default_factory=dict)


class Store(abc.ABC):
    """Everything the arena persists."""

    # The arena node using the store (several nodes share one PostgreSQL).
    node: str | None = None

    # -- lifecycle --------------------------------------------------------
    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def schema_version(self) -> int:
        """The version of the schema the store is at (a cheap read: health probes it)."""

    # -- bots -------------------------------------------------------------
    @abc.abstractmethod
    def add_bot(self, name: str, token_hash: str | None, *, owner: str | None = None,
                kind: str = "remote") -> BotRecord:
        """Create a bot; raises AlreadyExistsError if the name is taken."""

    @abc.abstractmethod
    def ensure_bot(self, name: str, *, kind: str = "remote") -> BotRecord:
        """Return the bot, creating it without a token if missing (open mode,
        house and local bots)."""

    @abc.abstractmethod
    def get_bot(self, name: str) -> BotRecord | None: ...

    @abc.abstractmethod
    def people_among(self, names: Iterable[str]) -> set[str]:
        """The names in ``names`` that are people's records (kind
        ``PERSON_KIND``): one read for a whole ladder's lines."""

    @abc.abstractmethod
    def open_name_owner(self, name: str, epoch: str) -> str | None:
        """Open mode: the token hash holding ``name`` in the server start
        ``epoch`` (arena.storage.open_names), or None."""

    @abc.abstractmethod
    def reserve_started_name(self, name: str, epoch: str) -> None:
        """Open mode: ``name`` is held for a bot the arena starts itself in
        ``epoch`` (arena.storage.open_names), refused to every token."""

    @abc.abstractmethod
    def claim_open_name(self, name: str, token_hash: str, epoch: str) -> str:
        """Open mode: take ``name`` for ``token_hash`` unless another token
        holds it in ``epoch``; the holder's token hash."""

    @abc.abstractmethod
    def find_bot_by_token_hash(self, token_hash: str) -> BotRecord | None: ...

    @abc.abstractmethod
    def set_token_hash(self, name: str, token_hash: str) -> None:
        """Rotate a bot's token; raises NotFoundError."""

    @abc.abstractmethod
    def remove_bot(self, name: str) -> None:
        """Mark removed (its matches stay); raises NotFoundError."""

    @abc.abstractmethod
    def list_bots(self) -> list[BotRecord]: ...

    # -- matches ----------------------------------------------------------
    @abc.abstractmethod
    def create_match(self, record: MatchRecord) -> None:
        """Insert a match in status ``running``."""

    @abc.abstractmethod
    def append_events(self, match_id: str, events: list[StoredEvent]) -> None:
        """Append to the match's log (append-only; seq must continue)."""

    def append_events_many(self, batches: Mapping[str, list[StoredEvent]]
                           ) -> dict[str, Exception]:
        """Append several matches' events; a refused match is skipped, the
        others are kept. Returns the refusals by match id. Backends override
        this to use one transaction."""
        failed: dict[str, Exception] = {}
        for match_id, events in batches.items():
            try:
                self.append_events(match_id, events)
            except StorageError as exc:
                failed[match_id] = exc
        return failed

    def append_rows_many(self, batches: Mapping[str, list[tuple[int, float, str]]]
                         ) -> dict[str, Exception]:
        """Like :meth:`append_events_many` for events already encoded as
        ``(seq, at, JSON text)`` rows (the store writer encodes them on the
        event loop). This default decodes them again."""
        import json

        return self.append_events_many({
            match_id: [StoredEvent(seq, at, json.loads(text)) for seq, at, text in rows]
            for match_id, rows in batches.items()})

    def append_blocks(self, blocks: Mapping[str, PendingBlock]) -> dict[str, Exception]:
        """Append one :class:`arena.storage.blocks.PendingBlock` per match
        (the store writer's batch); a refused match is skipped, the others
        are kept. Returns the refusals by match id. This default hands the
        blocks to :meth:`append_rows_many`."""
        failed: dict[str, Exception] = {}
        rows = {}
        for match_id, block in blocks.items():
            if block.gap is not None:
                failed[match_id] = block.gap_error(match_id)
            elif len(block):
                rows[match_id] = block.rows()
        failed.update(self.append_rows_many(rows))
        return failed

    @abc.abstractmethod
    def finish_match(self, match_id: str, *, result: Wire, reveal: list[Wire],
                     faults: list[SeatFaults], latency_ms: list[list[float]],
                     finished_at: float, slot: tuple[str, int] | None = None) -> None:
        """Mark finished, atomically with everything that makes it count.

        With ``slot = (tournament_id, slot_index)`` the schedule slot gets
        this match in the same transaction; if the slot already holds a
        finished match nothing is written and SlotTakenError is raised."""

    @abc.abstractmethod
    def abort_match(self, match_id: str, reason: str, *,
                    faults: list[SeatFaults] | None = None) -> None: ...

    @abc.abstractmethod
    def abort_unfinished(self, reason: str = "server restarted", *,
                         node: str | None = None) -> list[str]:
        """Mark running matches aborted; return their ids (start-up).

        Those of ``node``, by default of the node this store was opened for;
        a store opened without a node name aborts the running matches
        stored without one, never a named node's (start-up goes through
        :func:`arena.storage.node_lock.claim_node`, which calls this only
        when no other process can be running them)."""

    def release_node_leases(self, node: str) -> list[int]:
        """Give back the unfinished slots ``node`` holds; their ids."""
        return []

    @abc.abstractmethod
    def get_match(self, match_id: str) -> MatchRecord:
        """Raises NotFoundError."""

    @abc.abstractmethod
    def get_events(self, match_id: str, after_seq: int = -1) -> list[StoredEvent]: ...

    @abc.abstractmethod
    def list_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                     status: MatchStatus | None = None, limit: int = 50,
                     offset: int = 0) -> list[MatchRecord]:
        """Newest first. Records here may omit ``reveal`` and ``latency_ms``."""

    @abc.abstractmethod
    def count_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                      status: MatchStatus | None = None) -> int: ...

    def finished_matches(self, *, tournament_id: str | None = None,
                         bot: str | None = None) -> list[MatchRecord]:
        """Every finished match, oldest first, without ``reveal``: the input
        of standings and rating charts. This default reads pages of
        :meth:`list_matches`; backends answer with one ordered query."""
        page_size = 1000
        out: list[MatchRecord] = []
        while True:
            page = self.list_matches(bot=bot, tournament_id=tournament_id,
                                     status=MatchStatus.FINISHED, limit=page_size,
                                     offset=len(out))
            out.extend(page)
            if len(page) < page_size:
                break
        out.sort(key=lambda m: (m.finished_at or 0.0, m.id))
        return out

    # -- tournaments --------------------------------------------------------
    @abc.abstractmethod
    def create_tournament(self, record: TournamentRecord,
                          schedule: list[ScheduledMatch]) -> None:
        """Insert a tournament and its whole schedule in one transaction."""

    @abc.abstractmethod
    def get_tournament(self, tournament_id: str) -> TournamentRecord: ...

    @abc.abstractmethod
    def list_tournaments(self) -> list[TournamentRecord]: ...

    @abc.abstractmethod
    def set_tournament_status(self, tournament_id: str, status: TournamentStatus) -> None: ...

    @abc.abstractmethod
    def mark_running(self, tournament_id: str) -> bool:
        """Mark a tournament running unless it was cancelled (then False)."""

    @abc.abstractmethod
    def cancel_tournament(self, tournament_id: str) -> bool:
        """Cancel a pending or running tournament (False: it was already);
        a finished one raises TournamentOverError."""

    @abc.abstractmethod
    def reopen_tournament(self, tournament_id: str) -> bool:
        """Make a cancelled tournament pending again (an explicit resume)."""

    @abc.abstractmethod
    def note_presence(self, node: str, bots: list[str], address: str | None = None) -> None:
        """The bots connected to ``node`` now (arena.storage.presence)."""

    @abc.abstractmethod
    def node_addresses(self, fresh_s: float = ...) -> dict[str, str]:
        """node -> the host:port where bots reach it (fresh presence rows)."""

    @abc.abstractmethod
    def drop_presence(self, node: str) -> None: ...

    @abc.abstractmethod
    def present_bots(self, fresh_s: float = ...) -> dict[str, list[str]]:
        """bot -> the nodes it is connected to, from fresh presence rows."""

    @abc.abstractmethod
    def lift_reveals(self, tournament_id: str, match_ids: Iterable[str]) -> int:
        """Record sealed matches as revealed (arena.storage.reveal_table)."""

    @abc.abstractmethod
    def pending_reveals(self, bots: Sequence[str], within_s: float = ...) -> list[tuple[str, str]]:
        """(match, bot): lifted matches these bots played and were not sent."""

    @abc.abstractmethod
    def claim_reveals(self, pending: Iterable[tuple[str, str]], node: str) -> list[tuple[str, str]]:
        """Claim (match, bot) pairs to send; returns the ones won."""

    @abc.abstractmethod
    def unclaim_reveals(self, claimed: Iterable[tuple[str, str]], node: str) -> None: ...

    @abc.abstractmethod
    def publish_deals(self, tournament_id: str, deals: dict[str, Any]) -> "TournamentRecord":
        """Set a tournament's public ``config.deals`` (scheme, commitment) if
        it has none; return the stored record."""

    @abc.abstractmethod
    def get_schedule(self, tournament_id: str) -> list[ScheduledMatch]: ...

    @abc.abstractmethod
    def add_schedule(self, tournament_id: str, schedule: list[ScheduledMatch]) -> None:
        """Give a tournament created without one (over HTTP) its schedule;
        raises StorageError if it has one already."""

    @abc.abstractmethod
    def extend_schedule(self, tournament_id: str, slots: list[ScheduledMatch]) -> bool:
        """Append ``slots`` (numbered on from the schedule's end) in one
        transaction; False, adding nothing, if the schedule has grown past
        their first slot already (another node appended the same round)."""

    @abc.abstractmethod
    def complete_slot(self, tournament_id: str, slot: int, match_id: str) -> None:
        """Record the finished match of a slot (after finish_match)."""

    @abc.abstractmethod
    def note_attempt(self, tournament_id: str, slot: int) -> None:
        """Count a started attempt of a slot (interrupted ones are replayed)."""
