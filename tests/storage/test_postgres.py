"""PostgreSQL specifics: outages, and live events across nodes (LISTEN/NOTIFY)."""

from __future__ import annotations

import asyncio

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus, StorageError
from arena.storage.notify import Notice, PayloadTooLargeError, Resync, Subscription, publish

from .helpers import events, finish_kwargs, match


def test_a_store_outlives_a_postgresql_restart(pg_cluster, pg_url):
    store = open_store(pg_url)
    try:
        store.create_match(match("m1"))
        store.append_events("m1", events(0, 5))
        store.get_match("m1")  # a reader connection exists now
        pg_cluster.pg_ctl("stop", "-m", "fast")
        try:
            with pytest.raises(StorageError, match="database postgresql://"):
                store.append_events("m1", events(5, 5))  # refused whole, never half-stored
        finally:
            pg_cluster.pg_ctl("start")
        store.append_events("m1", events(5, 5))  # the write connection is replaced
        assert [e.seq for e in store.get_events("m1")] == list(range(10))  # readers too
        store.finish_match("m1", **finish_kwargs())
        assert store.get_match("m1").status is MatchStatus.FINISHED
    finally:
        store.close()


async def _next(items, timeout: float = 10.0):
    return await asyncio.wait_for(items.__anext__(), timeout)


async def test_a_node_hears_what_another_node_publishes(pg_url):
    node_a, node_b = open_store(pg_url), open_store(pg_url)
    sub = Subscription(pg_url, "arena_live")
    items = sub.__aiter__()
    try:
        pending = asyncio.ensure_future(_next(items))
        await asyncio.wait_for(sub.ready.wait(), 10)
        await asyncio.to_thread(publish, node_a, "arena_live", {"match": "m1", "seq": 41})
        got = await pending
        assert isinstance(got, Notice) and got.data == {"match": "m1", "seq": 41}
        await asyncio.to_thread(publish, node_b, "arena_live", {"match": "m2", "seq": 0},
                                {"match": "m2", "seq": 1})
        assert [(await _next(items)).data["seq"] for _ in range(2)] == [0, 1]
    finally:
        await sub.close()
        node_a.close()
        node_b.close()


async def test_a_notification_is_sent_only_when_its_transaction_commits(pg_url):
    store = open_store(pg_url)
    sub = Subscription(pg_url, "arena_live")
    items = sub.__aiter__()
    try:
        pending = asyncio.ensure_future(_next(items, timeout=3.0))
        await asyncio.wait_for(sub.ready.wait(), 10)

        def rolled_back() -> None:
            with pytest.raises(RuntimeError):
                with store.db.tx() as db:
                    db.execute("SELECT pg_notify('arena_live', '{\"lost\": true}')")
                    raise RuntimeError("the transaction fails")
            publish(store, "arena_live", {"kept": True})

        await asyncio.to_thread(rolled_back)
        assert (await pending).data == {"kept": True}
    finally:
        await sub.close()
        store.close()


def test_notifications_must_stay_small(pg_url):
    store = open_store(pg_url)
    try:
        with pytest.raises(PayloadTooLargeError, match="publish what changed"):
            publish(store, "arena_live", {"log": "x" * 9000})
        with pytest.raises(StorageError, match="PostgreSQL identifier"):
            publish(store, "Robert'); DROP", {})
    finally:
        store.close()


async def test_a_subscription_resyncs_after_postgresql_restarts(pg_cluster, pg_url):
    store = open_store(pg_url)
    sub = Subscription(pg_url, "arena_live", max_pause_s=0.5)
    items = sub.__aiter__()
    try:
        pending = asyncio.ensure_future(_next(items, timeout=30.0))
        await asyncio.wait_for(sub.ready.wait(), 10)
        await asyncio.to_thread(pg_cluster.pg_ctl, "restart", "-m", "fast")
        assert isinstance(await pending, Resync)
        await asyncio.to_thread(publish, store, "arena_live", {"after": "restart"})
        assert (await _next(items)).data == {"after": "restart"}
    finally:
        await sub.close()
        store.close()


async def test_an_outage_under_the_writer_aborts_cleanly_and_loses_nothing_finished(
        pg_cluster, pg_url):
    from arena.storage.writer import EventLogError, StoreWriter

    store = open_store(pg_url)
    try:
        async with StoreWriter(store, flush_delay=0.001) as writer:
            await writer.create_match(match("done"))
            await writer.append_events("done", events(0, 5))
            await writer.finish_match("done", **finish_kwargs())
            await writer.create_match(match("cut"))
            await writer.append_events("cut", events(0, 5))
            await writer.flush()
            await asyncio.to_thread(pg_cluster.pg_ctl, "stop", "-m", "fast")
            try:
                await writer.append_events("cut", events(5, 5))  # this batch is refused
                await writer.flush()
            finally:
                await asyncio.to_thread(pg_cluster.pg_ctl, "start")
            with pytest.raises(EventLogError, match="incomplete"):
                await writer.finish_match("cut", **finish_kwargs())  # never half-stored
            await writer.abort_match("cut", "event log incomplete")
            await writer.create_match(match("after"))  # tables started later play on
            await writer.append_events("after", events(0, 3))
            await writer.finish_match("after", **finish_kwargs())
        assert store.get_match("done").status is MatchStatus.FINISHED
        assert [e.seq for e in store.get_events("done")] == list(range(5))
        cut = store.get_match("cut")
        assert cut.status is MatchStatus.ABORTED and cut.result is None
        assert [e.seq for e in store.get_events("cut")] == list(range(5))  # a prefix
        assert store.get_match("after").status is MatchStatus.FINISHED
    finally:
        store.close()


def test_reconnect_warnings_during_an_outage_are_rate_limited(pg_url, monkeypatch):
    """A database away for a while: a write a tenth of a second tries to
    reconnect each time, but the log says so once per window."""
    import structlog.testing

    from arena.storage import postgres
    from arena.storage.base import StorageError

    store = open_store(pg_url)
    db = store.db

    class Broken:
        closed, broken = True, True

        def close(self):
            pass

    def refuse(**kwargs):
        db._write = Broken()
        raise StorageError("cannot reach the database: connection refused")

    monkeypatch.setattr(db, "_connect", refuse)
    db._write.close()
    try:
        with structlog.testing.capture_logs() as logs:
            for _ in range(50):
                with pytest.raises(StorageError):
                    store.add_bot("ann", None)
        warnings = [e for e in logs if e["event"] == "storage.reconnecting"]
        assert len(warnings) == 1
    finally:
        monkeypatch.undo()
        db._write = db._connect(autocommit=True)
        store.close()
