"""The admission rules as pure logic: caps per server, address and token,
and the sliding window of failed hellos."""

from __future__ import annotations

from arena.server.admission import ConnectionCaps, FailureWindow
from arena.server.identity import IdentityError, OpenNames
from protocol.errors import ErrorCode

import pytest


def test_caps_count_per_address_and_free_on_release():
    caps = ConnectionCaps(total=3, per_address=2, per_token=1)
    assert caps.admit("a") is None and caps.admit("a") is None
    assert caps.admit("a").code is ErrorCode.RATE_LIMITED
    assert caps.admit("b") is None
    assert "3 connections" in caps.admit("c").message  # the server is full
    caps.release("a", None)
    assert caps.admit("a") is None


def test_an_exempt_connection_leaves_its_address_share():
    caps = ConnectionCaps(total=10, per_address=1, per_token=5)
    assert caps.admit("127.0.0.1") is None
    caps.exempt("127.0.0.1")
    assert caps.admit("127.0.0.1") is None
    caps.release(None, None)  # the exempt one leaves: only the total counted it
    assert caps.open == 1


def test_a_token_holds_at_most_its_share():
    caps = ConnectionCaps(total=10, per_address=10, per_token=2)
    assert caps.claim_token("t") is None and caps.claim_token("t") is None
    assert "token" in caps.claim_token("t").message
    caps.release("a", "t")
    assert caps.claim_token("t") is None


def test_failed_hellos_lock_an_address_until_the_oldest_leaves_the_window():
    now = [100.0]
    window = FailureWindow(limit=3, window_s=60.0, clock=lambda: now[0])
    for _ in range(3):
        assert window.check("a") is None
        window.failed("a")
        now[0] += 10
    refusal = window.check("a")
    assert refusal is not None and refusal.retry_after_s == 30
    assert window.check("b") is None  # other addresses are not affected
    now[0] = 160.5  # the first failure (at 100) has left the window
    assert window.check("a") is None


def test_a_name_belongs_to_the_first_token_and_a_token_to_one_name():
    names = OpenNames()
    assert names.resolve("h1", "tuul") == "tuul"
    assert names.resolve("h1", None) == "tuul"
    with pytest.raises(IdentityError, match="taken"):
        names.resolve("h2", "tuul")
    with pytest.raises(IdentityError, match="cannot also be"):
        names.resolve("h1", "bo")
    names.reserve("local", "h3")
    with pytest.raises(IdentityError, match="taken"):
        names.resolve("h4", "local")
    with pytest.raises(IdentityError, match="1-32 letters"):
        names.resolve("h5", "no spaces")
