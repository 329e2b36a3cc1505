"""The rules of the workers' plumbing, in one process: where a connection
goes, what the parent's metrics say, how live messages travel."""

from __future__ import annotations

import asyncio
import os
import socket

from arena.live_bridge import BridgedHub
from arena.server.workers.channel import Channel, channel_pair
from arena.server.workers.dispatch import Dispatcher, route, route_key, worker_for_key
from arena.server.workers.live import pack
from arena.server.workers.metrics import CombinedMetrics
from protocol.codec import Encoding, encode

NOBODY = lambda hello: False  # noqa: E731 - no bot is the parent's


def hello(token: str, name: str = "b") -> dict:
    return {"type": "hello", "protocol": 1, "token": token, "name": name}


def test_every_connection_of_a_token_goes_to_the_same_worker():
    assert len({route(hello("tok-7"), [True] * 4, NOBODY) for _ in range(20)}) == 1


def test_tokens_spread_over_the_workers():
    counts = [0, 0]
    for i in range(1000):
        counts[route(hello(f"bench-{i}"), [True, True], NOBODY)] += 1
    assert 400 < counts[0] < 600


def test_with_open_names_every_connection_claiming_a_name_goes_to_one_worker():
    # Two tokens asking for one name meet at one worker, which gives it to the first.
    places = {route(hello(f"token-{i}", "alice"), [True] * 4, NOBODY, open_names=True)
              for i in range(20)}
    assert len(places) == 1


def test_a_bot_whose_worker_is_down_goes_to_the_next_one_up():
    token = next(f"t{i}" for i in range(100)
                 if worker_for_key(route_key(hello(f"t{i}"), False), 3) == 1)
    assert route(hello(token), [True, False, True], NOBODY) == 2
    assert route(hello(token), [False, False, False], NOBODY) is None  # the parent's own server


def test_what_is_not_a_hello_goes_to_the_parent_that_answers_it():
    assert route(None, [True, True], NOBODY) is None
    assert route({"type": "action", "token": "x"}, [True, True], NOBODY) is None
    assert route({"type": "hello", "token": 5}, [True, True], NOBODY) is None


def test_the_bots_a_tournament_of_the_parent_waits_for_stay_in_the_parent():
    assert route(hello("tok", "north"), [True, True], lambda h: h["name"] == "north") is None
    assert route(hello("tok", "east"), [True, True], lambda h: h["name"] == "north") is not None


async def test_the_dispatcher_hands_over_the_hello_bytes_as_read():
    handed: list[tuple[int | None, bytes]] = []

    def to_worker(position: int, sock: socket.socket, data: bytes) -> bool:
        handed.append((position, data))
        sock.close()
        return True

    async def to_parent(sock: socket.socket, data: bytes) -> None:
        handed.append((None, data))
        sock.close()

    dispatcher = Dispatcher("127.0.0.1", 0, backlog=16, hello_timeout_s=2.0,
                            alive=lambda: [True, True], for_parent=NOBODY,
                            to_worker=to_worker, to_parent=to_parent)
    await dispatcher.start()
    try:
        frame = encode(hello("tok-1"), Encoding.MSGPACK)
        _, writer = await asyncio.open_connection("127.0.0.1", dispatcher.port)
        writer.write(frame[:3])  # trickled in two pieces
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(frame[3:])
        await writer.drain()
        _, bad = await asyncio.open_connection("127.0.0.1", dispatcher.port)
        bad.write(b"GET / HTTP/1.1\r\n\r\n")
        await bad.drain()
        async with asyncio.timeout(5):
            while len(handed) < 2:
                await asyncio.sleep(0.01)
        writer.close()
        bad.close()
    finally:
        await dispatcher.stop()
    assert (worker_for_key(route_key(hello("tok-1"), False), 2), frame) in handed
    assert (None, b"GET / HTTP/1.1\r\n\r\n") in handed


async def test_a_channel_carries_messages_and_a_socket():
    parent_end, worker_end = channel_pair()
    got: list[tuple[dict, list[int]]] = []
    a = Channel(parent_end, lambda m, fds: None)
    b = Channel(worker_end, lambda m, fds: got.append((m, fds)))
    left, right = socket.socketpair()
    try:
        a.send({"t": "conn", "data": b"hello"}, fds=[os.dup(left.fileno())])
        async with asyncio.timeout(5):
            while not got:
                await asyncio.sleep(0.01)
        message, fds = got[0]
        assert message == {"t": "conn", "data": b"hello"} and len(fds) == 1
        passed = socket.socket(fileno=fds[0])
        passed.sendall(b"through the passed socket")
        assert right.recv(100) == b"through the passed socket"
        passed.close()
    finally:
        a.close()
        b.close()
        left.close()
        right.close()


async def test_what_a_worker_sent_before_it_exited_is_still_read():
    """The parent may learn of a worker's exit before its loop has read the
    worker's last messages: ``drain`` takes them in at once."""
    parent_end, worker_end = channel_pair()
    got: list[dict] = []
    parent = Channel(parent_end, lambda m, fds: got.append(m))
    worker = Channel(worker_end, lambda m, fds: None)
    worker.send({"t": "done", "complete": True})
    worker.close()  # gone, before the parent's loop turned once
    parent.drain()
    assert got == [{"t": "done", "complete": True}]
    parent.close()


def test_the_parents_metrics_are_the_sums_and_never_go_down():
    metrics = CombinedMetrics()
    metrics.decisions_total += 1
    metrics.worker_report(1, {"decisions_total": 10, "bots_connected": 4,
                              "errors_total": {"timeout": 1}}, {"pid": 11})
    metrics.worker_report(2, {"decisions_total": 5, "bots_connected": 1}, {"pid": 12})
    snap = metrics.snapshot()
    assert snap["decisions_total"] == 16 and snap["bots_connected"] == 5
    assert snap["errors_total"] == {"timeout": 1}
    assert [w["pid"] for w in snap["workers"]] == [11, 12]
    metrics.worker_gone(1)  # its replacement starts counting from zero
    metrics.worker_report(1, {"decisions_total": 2}, {"pid": 13})
    snap = metrics.snapshot()
    assert snap["decisions_total"] == 18 and snap["bots_connected"] == 1
    assert "arena_decisions_total 18" in metrics.render_prometheus()


def test_live_bundles_keep_the_order_and_split_big_steps():
    events = [f'{{"n":{i},"pad":"{"x" * 1000}"}}' for i in range(100)]
    messages = [{"t": "start", "m": "m1", "info": {}}, {"t": "ev", "m": "m1", "j": events},
                {"t": "end", "m": "m1", "s": {}}]
    out = pack("w1", messages, limit=20_000)
    assert len(out) > 1 and all(b["n"] == "w1" for b in out)
    flat = [m for b in out for m in b["msgs"]]
    assert [m["t"] for m in flat][0] == "start" and flat[-1]["t"] == "end"
    assert [e for m in flat if m["t"] == "ev" for e in m["j"]] == events


def test_a_relaying_hub_sends_on_what_its_workers_play():
    hub = BridgedHub()
    hub.apply_remote("arena-w1", {"t": "start", "m": "m1", "info": {"players": ["a"]}},
                     relay=True)
    hub.apply_remote("arena-w1", {"t": "ev", "m": "m1", "j": ['{"kind":"deal"}']}, relay=True)
    assert [m["t"] for m in hub.outbox] == ["start", "ev"]
    assert hub.outbox[0]["info"]["node"] == "arena-w1"
    hub.end_matches_of("arena-w1", "worker 1 stopped", relay=True)
    assert hub.outbox[-1] == {"t": "end", "m": "m1", "s": {"aborted": "worker 1 stopped"}}


def test_a_hub_that_only_hears_keeps_no_outbox():
    hub = BridgedHub(publish_own=False)
    hub.match_started("m1", {})
    hub.match_events("m1", [({"kind": "deal"}, None)])
    hub.apply_remote("arena-w1", {"t": "start", "m": "m2", "info": {}}, relay=True)
    assert hub.outbox == []
    assert {m["id"] for m in hub.live_matches()} == {"m1", "m2"}


async def test_a_hello_of_the_largest_frame_still_reaches_its_worker():
    handed: list[bytes] = []

    def to_worker(position: int, sock: socket.socket, data: bytes) -> bool:
        handed.append(data)
        sock.close()
        return True

    async def to_parent(sock: socket.socket, data: bytes) -> None:
        raise AssertionError("a whole hello goes to a worker")

    parent_end, worker_end = channel_pair()
    a = Channel(parent_end, lambda m, fds: None)
    got: list[dict] = []
    b = Channel(worker_end, lambda m, fds: (got.append(m), [os.close(fd) for fd in fds]))
    dispatcher = Dispatcher("127.0.0.1", 0, backlog=4, hello_timeout_s=2.0,
                            alive=lambda: [True], for_parent=NOBODY,
                            to_worker=to_worker, to_parent=to_parent)
    await dispatcher.start()
    try:
        frame = encode({**hello("tok"), "name": "b", "pad": "x" * 65_000}, Encoding.MSGPACK)
        _, writer = await asyncio.open_connection("127.0.0.1", dispatcher.port)
        writer.write(frame)
        await writer.drain()
        async with asyncio.timeout(5):
            while not handed:
                await asyncio.sleep(0.01)
        writer.close()
        left, right = socket.socketpair()
        a.send({"t": "conn", "data": handed[0]}, fds=[left.detach()])  # fits one packet
        async with asyncio.timeout(5):
            while not got:
                await asyncio.sleep(0.01)
        right.close()
    finally:
        await dispatcher.stop()
        a.close()
        b.close()
    assert handed == [frame] and got[0]["data"] == frame


def test_the_number_of_workers_is_checked_on_the_command_line():
    import argparse

    import pytest

    from arena.server.workers import worker_count

    assert worker_count("2") == 2
    for bad in ("0", "65", "two"):
        with pytest.raises(argparse.ArgumentTypeError, match="workers"):
            worker_count(bad)


def test_matches_left_running_by_workers_of_a_bigger_run_are_found(tmp_path):
    import time as _time

    from arena.app_workers import former_worker_nodes
    from arena.storage import open_store
    from arena.storage.base import MatchRecord, MatchStatus

    stores = {node: open_store(tmp_path / "a.db", node=node)
              for node in ("n1-w1", "n1-w3", "n1-w12", "n2-w5", "n1")}
    try:
        for node, store in stores.items():
            store.create_match(MatchRecord(
                id=f"m-{node}", game="muushig", players=["a", "b"], rules={}, limits={},
                status=MatchStatus.RUNNING, started_at=_time.time(), node=node))
        assert former_worker_nodes(stores["n1"], "n1", 2) == {"n1-w3", "n1-w12"}
    finally:
        for store in stores.values():
            store.close()
