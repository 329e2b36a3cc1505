"""The async facade over a :class:`Store`: the event loop never waits on disk.

One dedicated thread executes every store call, strictly in submission order.

* ``append_events`` does not wait for the disk: events are buffered per match
  on the loop side and handed to the thread in batches -- when
  ``batch_events`` are pending or ``flush_delay`` seconds after the first one
  -- so the store writes one row per running match and batch, and a second
  of a busy server is a few hundred rows in one transaction, not one row
  per event. It awaits only for back-pressure, when ``max_backlog`` events
  or more are buffered or in flight (the disk has fallen behind).
* ``append_encoded_nowait`` is the tables' cheaper form: events already
  encoded with :func:`arena.records.encode_record` (on the loop, once: the live hub keeps
  the same text), consecutive seqs and one timestamp. A step costs a few
  list appends (:class:`arena.storage.blocks.PendingBlock`), no object per
  event; the thread joins each match's texts once per batch and then runs
  SQLite, which lets go of the GIL, instead of competing with the loop for it.
  It does not wait, so the bound is kept by its callers: a table reads
  ``full`` before every step and, while it is true, holds its inputs with
  its clock stopped until the callback it gave :meth:`StoreWriter.when_room`
  runs (:mod:`arena.server.pause`). The backlog then passes ``max_backlog``
  by at most one step's records, however long the disk stalls
  (``peak_backlog`` keeps the largest seen).
* ``finish_match`` and ``abort_match`` hand over that match's buffered events
  only, and the thread commits them before the result: a match's log is
  always complete before its result, while the other matches' events wait
  for the next batch. ``create_match`` hands over nothing. Every other call
  (``flush``, ``add_bot``...) is ``async``, hands over every buffered event
  first and returns once committed.
* Events not yet committed are lost with the process; they belong to
  running matches, which a restart aborts (finished results are never lost:
  they are committed durably, after their events).
* A batch the store refuses (e.g. a seq gap) is logged; the next
  ``finish_match`` of that match raises :class:`EventLogError` (checked on
  the thread, where the refusals are kept), because a match whose log is
  incomplete cannot be replayed and must not count.
* ``healthy`` / ``last_error`` say whether the last write reached the disk:
  false, with the cause, once a write fails with an OS or SQLite error (disk
  full, read-only), true again after the next successful write. The change
  is logged once each way (``storage.failing``, ``storage.recovered``).
* Reads for the web may call the store directly (SQLite readers never wait
  for the writer) or ``await writer.read(fn, *args)`` to keep the loop free.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

import structlog

from arena.storage.base import (
    BotRecord,
    MatchRecord,
    ScheduledMatch,
    SeatFaults,
    StorageError,
    Store,
    StoredEvent,
    TournamentRecord,
    TournamentStatus,
    Wire,
)
from arena.storage.blocks import PendingBlock

log = structlog.get_logger(__name__)
T = TypeVar("T")

# A batch is one transaction with one row per running match. Big, rare
# batches: at 200 tables a second of play is ~8,000 events, and every
# commit rewrites the B-tree pages its rows touched (one index page per
# match at least), so a row of 40 events costs about what a row of one did.
BATCH_EVENTS = 16_384
FLUSH_DELAY = 1.0  # seconds; spectators watch the live hub, not the store
MAX_BACKLOG = 50_000  # events buffered or in flight before append_events waits


class WriterClosedError(StorageError):
    """A call reached the writer after ``close()``."""


class EventLogError(StorageError):
    """Some events of a match could not be stored; it must not be finished."""


def store_failure(exc: BaseException | None) -> BaseException | None:
    """The OS or SQLite error behind ``exc`` (disk full, read-only, I/O),
    or None when ``exc`` is a refusal of what was asked (a duplicate, an
    unknown match): only the former says the store itself is failing."""
    while exc is not None:
        if isinstance(exc, OSError) or (isinstance(exc, sqlite3.Error)
                                        and not isinstance(exc, sqlite3.IntegrityError)):
            return exc
        exc = exc.__cause__
    return None


@dataclass
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    future: asyncio.Future[Any] | None = None  # None: nobody awaits (a batch)
    n_events: int = 0


_STOP = object()

Events = dict[str, list[StoredEvent]]
Blocks = dict[str, PendingBlock]


class StoreWriter:
    """Serialises every write to ``store`` on one thread (see module doc)."""

    def __init__(self, store: Store, *, batch_events: int = BATCH_EVENTS,
                 flush_delay: float = FLUSH_DELAY, max_backlog: int = MAX_BACKLOG) -> None:
        if batch_events < 1 or max_backlog < batch_events or flush_delay < 0:
            raise ValueError("need 1 <= batch_events <= max_backlog and flush_delay >= 0")
        self.store = store
        self.batch_events = batch_events
        self.flush_delay = flush_delay
        self.max_backlog = max_backlog
        self._loop: asyncio.AbstractEventLoop | None = None
        self._jobs: queue.SimpleQueue[_Job | object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="store-writer", daemon=True)
        # Buffered on the loop: a match's events are in one of the two forms.
        self._pending: Events = defaultdict(list)
        self._blocks: Blocks = {}
        self._n_pending = 0
        self._backlog = 0  # pending + handed to the thread, not yet committed
        self._room = asyncio.Condition()
        self._waiting = 0  # append_events calls waiting for room
        # The backlog is at max_backlog: tables hold their steps until room
        # returns (a plain attribute, read before every step).
        self.full = False
        self.peak_backlog = 0
        self._room_callbacks: list[Callable[[], None]] = []
        self._timer: asyncio.TimerHandle | None = None
        # (writer thread only) the first refused batch of each match, so its
        # finish is refused; forgotten when the match is created or aborted.
        self._refused: dict[str, Exception] = {}
        self._closed = False
        # Whether the last write reached the disk; the health endpoint reads them.
        self.healthy = True
        self.last_error: str | None = None
        self.batches_written = 0  # counters for tests and the admin page
        self.events_written = 0

    # -- the thread ---------------------------------------------------------
    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP:
                return
            assert isinstance(job, _Job)
            try:
                value = job.fn(*job.args, **job.kwargs)
            except BaseException as exc:  # handed to whoever awaits the job
                self._settle(job, None, exc)
            else:
                self._settle(job, value, None)

    def _settle(self, job: _Job, value: Any, exc: BaseException | None) -> None:
        self._tell_loop(self._on_done, job, value, exc)

    def _tell_loop(self, fn: Callable[..., None], *args: Any) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: nobody is left to tell
            pass

    def _on_done(self, job: _Job, value: Any, exc: BaseException | None) -> None:
        if job.n_events:
            self._backlog -= job.n_events
            if self.full and self._backlog < self.max_backlog:
                self._room_again()
            if self._waiting:
                asyncio.ensure_future(self._notify_room())
        # A batch reports its health in _note_batch, and a refused log says
        # nothing about the disk.
        if job.future is not None and not isinstance(exc, EventLogError):
            self._note_health(store_failure(exc))
        if job.future is not None and not job.future.done():
            if exc is not None:
                job.future.set_exception(exc)
            else:
                job.future.set_result(value)
        elif job.future is None and exc is not None:
            log.error("storage.batch_failed", error=str(exc))

    @property
    def backlog(self) -> int:
        """Events buffered or handed to the thread, not committed yet."""
        return self._backlog

    def when_room(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the loop once the backlog is below
        ``max_backlog`` (on the loop's next turn if it is already)."""
        self._room_callbacks.append(callback)
        if not self.full:
            self._room_again()

    def _room_again(self) -> None:
        self.full = False
        callbacks, self._room_callbacks = self._room_callbacks, []
        assert self._loop is not None or not callbacks
        for callback in callbacks:
            # Each on its own turn, oldest first: a table that fills the
            # backlog again leaves the others paused, not starved mid-call.
            self._loop.call_soon(callback)  # type: ignore[union-attr]

    async def _notify_room(self) -> None:
        async with self._room:
            self._room.notify_all()

    def _start(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._thread.start()
        if self._closed:
            raise WriterClosedError("the store writer is closed")

    # -- events ---------------------------------------------------------------
    def append_events_nowait(self, match_id: str, events: list[StoredEvent]) -> None:
        """Buffer events without waiting (no back-pressure; for sync callers)."""
        self._start()
        if not events:
            return
        if match_id in self._blocks:
            self._hand_over()  # records of this match came first: keep the order
        self._pending[match_id].extend(events)
        self._added(len(events))

    def append_encoded_nowait(self, match_id: str, first_seq: int, at: float,
                              texts: list[str]) -> None:
        """Buffer events given as :func:`arena.records.encode_record` text, numbered
        ``first_seq``, ``first_seq + 1``..., all stamped ``at`` (no
        back-pressure). ``texts`` is copied: the caller may reuse the list."""
        # Called for every table step: a few list appends, no object per event.
        if self._loop is None or self._closed:
            self._start()
        if not texts:
            return
        block = self._blocks.get(match_id)
        if block is None:
            if match_id in self._pending:
                self._hand_over()  # StoredEvents of this match came first: keep the order
            block = self._blocks[match_id] = PendingBlock(first_seq)
        block.add(first_seq, at, texts)
        self._added(len(texts))

    def _added(self, n: int) -> None:
        self._n_pending += n
        backlog = self._backlog = self._backlog + n
        if backlog > self.peak_backlog:
            self.peak_backlog = backlog
        if backlog >= self.max_backlog:
            self.full = True
        if self._n_pending >= self.batch_events:
            self._hand_over()
        elif self._timer is None:
            assert self._loop is not None
            self._timer = self._loop.call_later(self.flush_delay, self._hand_over)

    async def append_events(self, match_id: str, events: list[StoredEvent]) -> None:
        """Buffer events for storage; waits only while the backlog is full."""
        self._start()
        if self._backlog >= self.max_backlog:
            self._waiting += 1
            try:
                async with self._room:
                    await self._room.wait_for(
                        lambda: self._backlog < self.max_backlog or self._closed)
            finally:
                self._waiting -= 1
        self.append_events_nowait(match_id, events)

    def _hand_over(self) -> None:
        """Give every buffered event to the thread as one batch job."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._n_pending:
            return
        batches, blocks, n = self._pending, self._blocks, self._n_pending
        self._pending = defaultdict(list)
        self._blocks = {}
        self._n_pending = 0
        self._jobs.put(_Job(self._write_batches, (batches, blocks), n_events=n))

    def _take(self, match_id: str) -> tuple[Events, Blocks, int]:
        """Take one match's buffered events out of the coming batch."""
        events = self._pending.pop(match_id, None)
        block = self._blocks.pop(match_id, None)
        n = (len(events) if events else 0) + (len(block) if block else 0)
        self._n_pending -= n
        return ({match_id: events} if events else {}), ({match_id: block} if block else {}), n

    def _write_batches(self, batches: Events, blocks: Blocks) -> None:
        """(writer thread) One transaction for all matches when the store can.

        A match's events are all in ``batches`` or all in ``blocks`` (the
        appenders hand over first when a match switches form)."""
        failed = self._write_events(batches) if batches else {}
        if blocks:
            failed.update(self._write_blocks(blocks))
        n_written = (sum(len(v) for k, v in batches.items() if k not in failed)
                     + sum(len(v) for k, v in blocks.items() if k not in failed))
        for match_id, exc in failed.items():
            self._refused.setdefault(match_id, exc)
            log.error("storage.events_refused", match=match_id, error=str(exc))
        self._tell_loop(self._note_batch, n_written, failed)

    def _write_blocks(self, blocks: Blocks) -> dict[str, Exception]:
        try:
            return self.store.append_blocks(blocks)
        except Exception as exc:  # e.g. disk full: the whole batch is lost
            return {match_id: exc for match_id in blocks}

    def _write_events(self, batches: Events) -> dict[str, Exception]:
        try:
            return self.store.append_events_many(batches)
        except Exception as exc:  # e.g. disk full: the whole batch is lost
            return {match_id: exc for match_id in batches}

    def _note_batch(self, n_written: int, failed: dict[str, Exception]) -> None:
        self.batches_written += 1
        self.events_written += n_written
        failures = [f for f in map(store_failure, failed.values()) if f is not None]
        if failures:
            self._note_health(failures[0])
        elif n_written:
            self._note_health(None)

    def _note_health(self, failure: BaseException | None) -> None:
        """Logged once per change: a full disk fails every write."""
        if failure is None:
            if not self.healthy:
                log.info("storage.recovered")
            self.healthy, self.last_error = True, None
            return
        text = f"{type(failure).__name__}: {failure}"
        if self.healthy:
            log.error("storage.failing", cause=text)
        self.healthy, self.last_error = False, text

    # -- calls that return once committed --------------------------------------
    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` on the writer thread after everything
        submitted before it (buffered events included); return its value."""
        self._start()
        self._hand_over()
        return await self._submit(fn, *args, **kwargs)

    async def _submit(self, fn: Callable[..., T], *args: Any, n_events: int = 0,
                      **kwargs: Any) -> T:
        """Queue ``fn`` behind what the thread has; buffered events stay buffered."""
        assert self._loop is not None
        future: asyncio.Future[T] = self._loop.create_future()
        self._jobs.put(_Job(fn, args, kwargs, future=future, n_events=n_events))
        return await future

    async def flush(self) -> None:
        """Return once every event and call submitted so far is committed."""
        await self.call(lambda: None)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a read off the loop (not queued behind writes)."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def close(self) -> None:
        """Commit everything pending, then stop the thread (the store stays
        open: whoever opened it closes it, after the web stops reading)."""
        if self._closed:
            return
        if self._loop is None:
            self._closed = True
            return
        try:
            await self.flush()
        finally:
            self._closed = True
            self._jobs.put(_STOP)
            await asyncio.to_thread(self._thread.join)
            await self._notify_room()

    async def __aenter__(self) -> StoreWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the Store's writing methods ---------------------------------------------
    async def add_bot(self, name: str, token_hash: str | None, *, owner: str | None = None,
                      kind: str = "remote") -> BotRecord:
        return await self.call(self.store.add_bot, name, token_hash, owner=owner, kind=kind)

    async def ensure_bot(self, name: str, *, kind: str = "remote") -> BotRecord:
        return await self.call(self.store.ensure_bot, name, kind=kind)

    async def claim_open_name(self, name: str, token_hash: str, epoch: str) -> str:
        return await self.call(self.store.claim_open_name, name, token_hash, epoch)

    async def set_token_hash(self, name: str, token_hash: str) -> None:
        await self.call(self.store.set_token_hash, name, token_hash)

    async def remove_bot(self, name: str) -> None:
        await self.call(self.store.remove_bot, name)

    async def create_match(self, record: MatchRecord) -> None:
        """Store a new match; the events buffered for others stay buffered."""
        self._start()
        if record.id in self._blocks or record.id in self._pending:
            self._hand_over()  # events of that id came first: the store refuses them first
        await self._submit(self._create_on_thread, record)

    def _create_on_thread(self, record: MatchRecord) -> None:
        self._refused.pop(record.id, None)
        self.store.create_match(record)

    async def finish_match(self, match_id: str, *, result: Wire, reveal: list[Wire],
                           faults: list[SeatFaults], latency_ms: list[list[float]],
                           finished_at: float, slot: tuple[str, int] | None = None) -> None:
        """Commit the match's buffered events, then the result (and fill
        ``slot`` in the same transaction, see :meth:`Store.finish_match`);
        raises EventLogError if part of the log was lost."""
        self._start()
        events, blocks, n = self._take(match_id)
        await self._submit(self._finish_on_thread, match_id, events, blocks, n_events=n,
                           fields={"result": result, "reveal": reveal, "faults": faults,
                                   "latency_ms": latency_ms, "finished_at": finished_at,
                                   "slot": slot})

    def _finish_on_thread(self, match_id: str, events: Events, blocks: Blocks,
                          fields: dict[str, Any]) -> None:
        if events or blocks:
            self._write_batches(events, blocks)
        refused = self._refused.pop(match_id, None)
        if refused is not None:
            raise EventLogError(f"match {match_id!r} cannot be finished: its event log is "
                                f"incomplete ({refused})") from refused
        self.store.finish_match(match_id, **fields)

    async def abort_match(self, match_id: str, reason: str, *,
                          faults: list[SeatFaults] | None = None) -> None:
        """Commit the match's buffered events, then mark it aborted."""
        self._start()
        events, blocks, n = self._take(match_id)
        await self._submit(self._abort_on_thread, match_id, events, blocks, reason, faults,
                           n_events=n)

    def _abort_on_thread(self, match_id: str, events: Events, blocks: Blocks, reason: str,
                         faults: list[SeatFaults] | None) -> None:
        if events or blocks:
            self._write_batches(events, blocks)
        self._refused.pop(match_id, None)
        self.store.abort_match(match_id, reason, faults=faults)

    async def abort_unfinished(self, reason: str = "server restarted") -> list[str]:
        return await self.call(self.store.abort_unfinished, reason)

    async def create_tournament(self, record: TournamentRecord,
                                schedule: list[ScheduledMatch]) -> None:
        await self.call(self.store.create_tournament, record, schedule)

    async def set_tournament_status(self, tournament_id: str, status: TournamentStatus) -> None:
        await self.call(self.store.set_tournament_status, tournament_id, status)

    async def complete_slot(self, tournament_id: str, slot: int, match_id: str) -> None:
        await self.call(self.store.complete_slot, tournament_id, slot, match_id)

    async def note_attempt(self, tournament_id: str, slot: int) -> None:
        await self.call(self.store.note_attempt, tournament_id, slot)
