"""Protocol §5 limits: connections per server, address and token, idle
connections, slow handshakes, failed hellos, floods and the listen backlog.

Every limit answers with an ``error`` that says why before the connection is
closed (never a silent close, never a hang).
"""

from __future__ import annotations

import asyncio
import select
import socket
import time

import pytest

from arena.auth import hash_token
from tests.conformance_server.conftest import directed, joined
from tests.conformance_server.test_framing import HELLO, refused
from tests.conformance_server.wire import ENCODINGS, JSONL, MSGPACK, SpecBot, encode, padded
from tests.timing import MS


async def closing_error(bot: SpecBot, code: str, within_s: float = 2000 * MS) -> dict:
    """The server sends ``error`` ``code`` and closes, both within ``within_s``."""
    t0 = time.monotonic()
    got = await bot.closed_after(timeout=within_s + 1)
    assert time.monotonic() - t0 <= within_s, f"closed only after {time.monotonic() - t0:.1f} s"
    assert got and got[-1]["type"] == "error" and got[-1]["code"] == code, got
    assert "closed" in got[-1]["message"], got[-1]
    return got[-1]


async def test_a_connection_over_max_connections_gets_an_error_and_is_closed_at_once(make_server):
    server = await make_server(max_connections=3)
    bots = [await joined(server.port, f"b{i}") for i in range(3)]
    extra = await SpecBot().connect(server.port)
    error = await closing_error(extra, "rate_limited", within_s=1.0)
    assert "3" in error["message"]
    # A bot arriving once a slot is free is served at once.
    await bots[0].close()
    async with asyncio.timeout(5000 * MS):  # the server has seen the close
        while server.gate.caps.open >= 3:
            await asyncio.sleep(0.01)
    again = await SpecBot().connect(server.port)
    assert (await again.hello("token-b9", "b9"))["type"] == "welcome"
    for bot in (*bots, again):
        await bot.close()


async def test_a_refused_connection_that_already_sent_its_hello_still_reads_the_reason(make_server):
    server = await make_server(max_connections=1)
    first = await joined(server.port, "first")
    extra = await SpecBot().connect(server.port)
    await extra.send(HELLO)  # unread by the server: the close must not reset it away
    await closing_error(extra, "rate_limited", within_s=1.0)
    await first.close()


async def test_connections_over_the_per_address_cap_are_refused_at_once(make_server):
    server = await make_server(max_connections_per_address=2)
    bots = [await joined(server.port, f"b{i}") for i in range(2)]
    extra = await SpecBot().connect(server.port)
    error = await closing_error(extra, "rate_limited", within_s=1.0)
    assert "127.0.0.1" in error["message"]
    for bot in bots:
        await bot.close()


async def test_the_arenas_own_local_bots_do_not_count_against_the_per_address_cap(make_server):
    """Local bots (arena match, tournaments) all come from 127.0.0.1."""
    server = await make_server(max_connections_per_address=2)
    local = []
    for i in range(6):
        bot = await SpecBot().connect(server.port)
        assert (await bot.hello(server.local_token(f"local{i}"), None))["type"] == "welcome"
        local.append(bot)
    remote = [await joined(server.port, f"r{i}") for i in range(2)]
    extra = await SpecBot().connect(server.port)
    await closing_error(extra, "rate_limited", within_s=1.0)
    for bot in (*local, *remote):
        await bot.close()


async def test_connections_over_the_per_token_cap_are_refused(make_server):
    server = await make_server(max_connections_per_token=2)
    twins = [await joined(server.port, "twin", token="same") for _ in range(2)]
    third = await SpecBot().connect(server.port)
    await third.send({"type": "hello", "protocol": 1, "token": "same", "name": "twin"})
    error = await closing_error(third, "rate_limited", within_s=1.0)
    assert "token" in error["message"]
    other = await joined(server.port, "other")  # another token is not affected
    for bot in (*twins, other):
        await bot.close()


async def test_a_connection_neither_seated_nor_waiting_for_a_seat_is_closed_when_idle(make_server):
    """No matchmaking (a directed match or tournament server): a bot nobody
    is going to claim holds a connection for nothing."""
    server = await make_server(matchmaking=False, idle_timeout_s=0.5)
    stranger = await joined(server.port, "stranger")
    error = await closing_error(stranger, "rate_limited", within_s=3.0)
    assert "idle" in error["message"]


async def test_a_bot_waiting_to_be_claimed_is_not_idle(make_server):
    server = await make_server(matchmaking=False, idle_timeout_s=0.3)
    server.lobby.reserved.add("entrant")  # a tournament's entrant waits between matches
    entrant = await joined(server.port, "entrant")
    async with directed(server, [None, None, "player", None, None], seed="idle"):
        player = await joined(server.port, "player")
        await asyncio.sleep(1.2)
        assert not entrant.eof and server.lobby.idle_bots() == ["entrant"]
        end = await player.play_to_end()
        assert end["type"] == "match_end"
    await entrant.close()
    await player.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_a_hello_trickled_byte_by_byte_is_cut_off_at_the_hello_timeout(make_server, encoding):
    server = await make_server(hello_timeout_s=1.0)
    bot = await SpecBot(encoding).connect(server.port)
    data = encode(padded(HELLO, 400, encoding), encoding)
    t0 = time.monotonic()

    async def trickle() -> None:
        for byte in data:
            await bot.send_raw(bytes([byte]))
            await asyncio.sleep(0.02)

    sender = asyncio.get_running_loop().create_task(trickle())
    try:
        await refused(bot, "hello_timeout")
    finally:
        sender.cancel()
    # Not before the timeout (the trickle would have finished after 8 s):
    # the exact instant is the link's rule, tested on a fake clock.
    assert 0.9 <= time.monotonic() - t0 <= 1.0 + 3000 * MS


async def test_failed_hellos_are_rate_limited_per_address_without_touching_the_store(make_server):
    server = await make_server(open=False, auth_failures_per_minute=3)
    server.store.add_bot("alice", hash_token("alice-secret"))
    lookups = []
    find = server.store.find_bot_by_token_hash
    server.store.find_bot_by_token_hash = lambda h: (lookups.append(h), find(h))[1]
    for i in range(3):
        bot = await SpecBot().connect(server.port)
        await bot.send({"type": "hello", "protocol": 1, "token": f"guess{i}"})
        await refused(bot, "auth_failed")
    assert len(lookups) == 3
    for token in ("guess3", "alice-secret"):  # the right token waits too
        bot = await SpecBot().connect(server.port)
        await bot.send({"type": "hello", "protocol": 1, "token": token})
        error = await closing_error(bot, "rate_limited", within_s=1.0)
        assert isinstance(error["retry_after_s"], int) and 1 <= error["retry_after_s"] <= 60
    assert len(lookups) == 3  # no store lookup for a throttled address
    local = await SpecBot().connect(server.port)  # the arena's own bots still get in
    assert (await local.hello(server.local_token("mine"), None))["type"] == "welcome"
    await local.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_a_flood_is_closed_with_its_reason_even_while_the_bot_keeps_sending(make_server, encoding):
    server = await make_server(rate_limit_per_s=10, rate_limit_burst=20, rate_limit_strikes=5)
    bot = await joined(server.port, "flooder", encoding)
    chunk = encode({"type": "dance"}, encoding) * 200

    async def flood() -> None:
        try:
            while True:
                await bot.send_raw(chunk)
                await asyncio.sleep(0)
        except (ConnectionError, OSError):
            pass

    sender = asyncio.get_running_loop().create_task(flood())
    try:
        got = await bot.closed_after(timeout=5)
    finally:
        sender.cancel()
    errors = [m for m in got if m["type"] == "error"]
    assert errors and errors[-1]["code"] == "rate_limited", got[-3:]
    assert "closed" in errors[-1]["message"]


async def test_the_listen_backlog_holds_a_thousand_connects_at_once(make_server):
    """1,000 bots connecting in the same instant all complete their TCP
    handshake, even before the server has accepted any of them."""
    server = await make_server(max_connections=5000, max_connections_per_address=5000)
    sockets = []
    try:
        for _ in range(1000):
            sock = socket.socket()
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", server.port))
            except BlockingIOError:
                pass
            sockets.append(sock)
        # The event loop is not run here, so nothing is accepted meanwhile.
        poller = select.poll()
        for sock in sockets:
            poller.register(sock, select.POLLOUT)
        connected: set[int] = set()
        deadline = time.monotonic() + 5000 * MS
        while time.monotonic() < deadline and len(connected) < len(sockets):
            for fd, _ in poller.poll(50):
                connected.add(fd)
                poller.unregister(fd)
        assert len(connected) == 1000
    finally:
        for sock in sockets:
            sock.close()


async def test_every_error_the_server_sends_is_counted(make_server):
    server = await make_server(rate_limit_per_s=1, rate_limit_burst=1, rate_limit_strikes=2)
    bad = await SpecBot(MSGPACK).connect(server.port)
    await bad.send_raw(b"\x00\x00\x00\x00")
    await refused(bad, "malformed")
    big = await SpecBot(JSONL).connect(server.port)
    await big.send_raw(b"{" + b"x" * 70_000)
    await refused(big, "frame_too_large")
    noisy = await joined(server.port, "noisy")
    await noisy.send_raw(encode({"type": "dance"}, MSGPACK) * 3)
    await refused(noisy, "rate_limited")
    first = await SpecBot().connect(server.port)
    await first.send({"type": "bye"})
    await refused(first, "expected_hello")
    await asyncio.sleep(0.05)
    counted = server.metrics.errors_total
    assert counted.get("malformed") == 1
    assert counted.get("frame_too_large") == 1
    assert counted.get("expected_hello") == 1
    assert counted.get("rate_limited") == 2  # one refused message, then the closing strike


def test_the_limits_table_shows_the_servers_defaults():
    """Each limit named on the page with its setting shows that setting's default."""
    from pathlib import Path
    import re

    from arena.server.config import ServerConfig

    page = (Path(__file__).resolve().parents[2] / "protocol" / "README.md").read_text()
    section = page.split("### Limits", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| [^|]+ \| ([^|]+?) \[`([a-z_]+)`\] \|", section, flags=re.M)
    assert len(rows) >= 10
    defaults = ServerConfig()
    for shown, setting in rows:
        value = getattr(defaults, setting)
        number = float(re.sub(r"[^0-9.]", "", shown.split()[0]))
        if shown.split()[-1] == "MiB":
            number *= 1 << 20
        assert number == value, f"{setting}: page says {shown}, default is {value}"
