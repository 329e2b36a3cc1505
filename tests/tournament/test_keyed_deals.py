"""Decks derived from a secret key: a pure function of (key, table, deal
label), uniform, and never Mersenne Twister."""

from __future__ import annotations

import hashlib
import random
from collections import Counter

import pytest

from arena.games.muushig.engine import MuushigEngine
from arena.tournament.verify import derive_deck
from protocol.deals import (
    DealKeyError,
    KeyedDeals,
    key_commitment,
    keyed_shuffle,
    new_deal_key,
    parse_deal_key,
)

KEY = bytes(range(32))


def shuffled(key: bytes, table: str, label: dict, n: int = 20) -> list[int]:
    items = list(range(n))
    keyed_shuffle(key, table, label, items)
    return items


def test_a_deck_depends_on_key_table_and_label_only():
    label = {"round": 1, "hand": 2}
    assert shuffled(KEY, "7:0", label) == shuffled(KEY, "7:0", dict(reversed(label.items())))
    assert shuffled(KEY, "7:0", label) != shuffled(new_deal_key(), "7:0", label)
    assert shuffled(KEY, "7:0", label) != shuffled(KEY, "7:1", label)
    assert shuffled(KEY, "7:0", label) != shuffled(KEY, "7:0", {"round": 1, "hand": 3})
    assert sorted(shuffled(KEY, "7:0", label)) == list(range(20))


def test_every_position_is_equally_likely():
    counts = Counter(shuffled(KEY, "t", {"deal": i}, n=5).index(0) for i in range(5000))
    expected = 1000
    chi2 = sum((counts[p] - expected) ** 2 / expected for p in range(5))
    assert chi2 < 18.5  # p ~ 0.001 for 4 degrees of freedom


def test_keyed_deals_has_no_mersenne_twister_state():
    rng = KeyedDeals(KEY, "t")
    with pytest.raises(TypeError):
        rng.getstate()
    a, b = KeyedDeals(KEY, "t"), KeyedDeals(KEY, "t")
    assert [a.randrange(100) for _ in range(10)] == [b.randrange(100) for _ in range(10)]
    random.seed(0)
    before = random.getstate()
    KeyedDeals(KEY, "t").shuffle(list(range(10)))
    assert random.getstate() == before


def test_the_engine_deals_round_and_hand_keyed_decks():
    rng = KeyedDeals(KEY, "7:0")
    engine = MuushigEngine(None, rng, None)
    rng.label_of = lambda: engine.deal_label
    engine.start()
    while not engine.finished and len(engine.deals()) < 6:
        engine.play(engine.legal_actions()[0])
    for deal in engine.deals():
        label = {"round": deal.round, "hand": deal.hand}
        assert list(deal.deck) == derive_deck("muushig", None, KEY, "7:0", label)


def test_the_commitment_binds_the_key():
    assert key_commitment(KEY) == hashlib.sha256(b"arena deal key v1:" + KEY).hexdigest()
    assert key_commitment(KEY) != key_commitment(new_deal_key())


@pytest.mark.parametrize("text", ["", "zz" * 32, "ab" * 31, "ab" * 33])
def test_a_malformed_key_is_refused_with_its_rule(text):
    with pytest.raises(DealKeyError, match="64 hexadecimal digits|hexadecimal"):
        parse_deal_key(text)


def test_a_key_round_trips_through_hex():
    assert parse_deal_key(KEY.hex()) == KEY


# The scheme as docs/tournaments.md states it, one draw at a time: anybody
# re-deriving a deck from the revealed key follows these steps, so the
# server's shuffle must give exactly their deck at every size.
def documented_shuffle(key: bytes, table: str, label: dict, items: list) -> None:
    import hmac
    import json

    name = json.dumps({"table": table, **label}, sort_keys=True, separators=(",", ":"))
    seed = hmac.new(key, name.encode("utf-8"), hashlib.sha256).digest()
    stream = hashlib.shake_256(seed).digest(1 << 16)
    pos = 0
    for i in range(len(items) - 1, 0, -1):
        bits = i.bit_length()
        width = (bits + 7) // 8
        while True:
            j = int.from_bytes(stream[pos:pos + width], "big") >> (width * 8 - bits)
            pos += width
            if j <= i:
                break
        items[i], items[j] = items[j], items[i]


@pytest.mark.parametrize("n", [0, 1, 2, 32, 52, 255, 256, 257, 300])
def test_the_shuffle_is_the_documented_scheme_at_every_deck_size(n):
    for deal in range(40):
        label = {"round": deal // 4 + 1, "hand": deal % 4 + 1}
        expected = list(range(n))
        documented_shuffle(KEY, "7:0", label, expected)
        assert shuffled(KEY, "7:0", label, n) == expected


def test_a_known_deck_never_changes():
    # Recorded once: a deck published under a revealed key must re-derive to
    # the same cards in every later version of the arena.
    assert derive_deck("muushig", None, KEY, "7:0", {"round": 2, "hand": 3}) == [
        "QH", "QS", "KH", "7D", "AS", "JH", "KD", "AD", "8D", "AH", "TC", "TD",
        "7H", "JD", "QC", "TH", "KC", "TS", "JC", "8S", "QD", "JS", "8H", "9D",
        "7S", "8C", "AC", "9C", "9S", "KS", "7C", "9H"]


@pytest.mark.parametrize("key_length", [0, 1, 32, 63, 64, 65, 200])
def test_a_deals_seed_is_the_hmac_sha256_of_its_label(key_length):
    # The HMAC is computed from the key's padded hashes, made once per key:
    # it must be RFC 2104's at every key length (longer than the hash's
    # block, the key is hashed first).
    import hmac

    from protocol.deals import _seed, deal_label_bytes

    key = bytes(range(key_length))
    for label in ({"round": 1, "hand": 2}, {"deal": 7}, {"extra": 0}):
        expected = hmac.digest(key, deal_label_bytes("7:0", label), "sha256")
        assert _seed(key, "7:0", label) == expected
