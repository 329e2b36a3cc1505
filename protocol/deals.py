"""Verifiable deals (protocol §5): the commitment and its check.

Before each hand the server sends ``commit {round, hand, commitment}``, the
lowercase hex SHA-256 of ``salt + ":" + ",".join(deck)``; ``match_end.reveal``
gives every ``salt`` and ``deck``. Both sides use these two functions.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Callable, Mapping, Sequence


def commitment(salt: str, deck: Sequence[str]) -> str:
    """The commitment to ``deck`` (cards in deck order) under ``salt``."""
    return hashlib.sha256(f"{salt}:{','.join(deck)}".encode("utf-8")).hexdigest()


def new_salt() -> str:
    """A fresh unguessable salt (server side)."""
    return secrets.token_hex(16)


def deal_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    """What names a deal in a ``commit`` event or a reveal entry: ``(round,
    hand)`` in Muushig, ``(deal,)`` in a game that numbers its deals."""
    if "round" in entry or "deal" not in entry:
        return (entry["round"], entry["hand"])
    return (entry["deal"],)


def _deal_name(key: tuple[Any, ...]) -> str:
    return f"round {key[0]} hand {key[1]}" if len(key) == 2 else f"deal {key[0]}"


def verify_reveal(
    commits: Mapping[tuple[int, int], str],
    reveal: Sequence[Mapping[str, Any]],
    *,
    require_all: bool = True,
) -> list[str]:
    """Check a match's reveal against the commitments seen during it.

    ``commits`` maps each deal's ``deal_key`` to the commitment received. Returns the
    problems found (an empty list means every deal checks out). A client that
    was disconnected for a while missed some commitments: it passes
    ``require_all=False`` so that decks it never saw committed are not
    reported.
    """
    problems: list[str] = []
    revealed: set[tuple[int, int]] = set()
    for entry in reveal:
        try:
            key = deal_key(entry)
            salt, deck = entry["salt"], entry["deck"]
            digest = commitment(salt, deck)
            hash(key)
        except (KeyError, TypeError, AttributeError) as exc:
            problems.append(f"reveal entry {entry!r:.80} is incomplete: {exc}")
            continue
        revealed.add(key)
        expected = commits.get(key)
        if expected is None:
            if require_all:
                problems.append(f"{_deal_name(key)}: revealed but never committed")
        elif expected != digest:
            problems.append(f"{_deal_name(key)}: deck does not match its commitment")
    for key in sorted(set(commits) - revealed):
        problems.append(f"{_deal_name(key)}: committed but not revealed")
    return problems


# -- keyed deals: decks derived from a secret key -------------------------------
#
# A tournament (or a single ladder match) draws one secret key with
# ``secrets`` and publishes ``key_commitment(key)`` before play. The deck of
# every deal is then a pure function of (key, table, deal label): an HMAC-SHA256
# of the label under the key seeds a SHAKE-256 byte stream, and the stream
# drives an unbiased Fisher-Yates shuffle. Nobody without the key can predict
# a deck (unlike Mersenne Twister fed with a public seed), and once the key is
# revealed anybody can recompute every deck and check it against the
# commitments sent during play.
#
# The unit of a deal is its label, ``{"round": r, "hand": h}`` for Muushig,
# not its position k in the match: a round ends as soon as a score reaches 0,
# so the k-th deal of two duplicate rotations may belong to different rounds
# (and different dealers). Keying by (round, hand) gives every rotation the
# same deck for the same hand with the same dealer seat.

import hmac
import json
import random

from protocol.codec import cached_json_encode

KEY_BYTES = 32
DEAL_SCHEME = "hmac-sha256/shake-256 fisher-yates v1"
_COMMIT_PREFIX = b"arena deal key v1:"


class DealKeyError(ValueError):
    """A deal key is malformed (not 64 hex digits)."""


def new_deal_key() -> bytes:
    """A fresh secret key for one tournament or one ladder match."""
    return secrets.token_bytes(KEY_BYTES)


def parse_deal_key(text: str) -> bytes:
    """A key from its hex form (``--secret HEX``)."""
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise DealKeyError("a deal key is 64 hexadecimal digits") from None
    if len(key) != KEY_BYTES:
        raise DealKeyError(f"a deal key is {KEY_BYTES * 2} hexadecimal digits, "
                           f"not {len(key) * 2}")
    return key


def key_commitment(key: bytes) -> str:
    """Published before play; hides the key (256 random bits) and binds it."""
    return hashlib.sha256(_COMMIT_PREFIX + key).hexdigest()


# json.dumps builds a new encoder on every call with these options, and so
# does JSONEncoder.encode: one kept C encoder gives the same text at a
# fraction of the cost (a deal per hand).
_LABEL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_label_json = cached_json_encode(_LABEL_JSON)


def deal_label_bytes(table: str, label: Mapping[str, Any]) -> bytes:
    """Canonical bytes naming one deal of one table."""
    return _label_json({"table": table, **label}).encode("utf-8")


class _ByteStream:
    """SHAKE-256 output of a seed, read in order, extended on demand."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._buf = b""
        self._pos = 0

    def take(self, n: int) -> bytes:
        while self._pos + n > len(self._buf):
            self._buf = hashlib.shake_256(self._seed).digest(max(64, 2 * len(self._buf)))
        out = self._buf[self._pos:self._pos + n]
        self._pos += n
        return out

    def below(self, n: int) -> int:
        """Uniform in [0, n) by rejection (no modulo bias)."""
        if n <= 1:
            return 0
        k = (n - 1).bit_length()
        nbytes = (k + 7) // 8
        while True:
            v = int.from_bytes(self.take(nbytes), "big") >> (nbytes * 8 - k)
            if v < n:
                return v


def _seed(key: bytes, table: str, label: Mapping[str, Any]) -> bytes:
    """What seeds the SHAKE-256 stream of one labelled draw: the HMAC-SHA256
    of the label under the key."""
    return hmac.digest(key, deal_label_bytes(table, label), "sha256")


def keyed_shuffle(key: bytes, table: str, label: Mapping[str, Any], items: list[Any]) -> None:
    """Shuffle ``items`` in place, determined by (key, table, label) alone:
    Fisher-Yates from the last position down. Each swap partner j in [0, i]
    is drawn from the SHAKE-256 stream of the label's seed by rejection:
    read the fewest whole bytes that hold i's bit length, big-endian, keep
    their top (i).bit_length() bits, and draw again while the value is over
    i (``_ByteStream.below`` reads the stream the same way)."""
    shake = hashlib.shake_256(_seed(key, table, label))
    buf, pos = shake.digest(64), 0
    for i in range(len(items) - 1, 0, -1):
        bits = i.bit_length()
        size = (bits + 7) // 8
        shift = size * 8 - bits
        while True:
            if pos + size > len(buf):  # the stream is longer the more is asked of it
                buf = shake.digest(2 * len(buf))
            # One byte for a deck of up to 256 cards: read it without a slice.
            j = (buf[pos] if size == 1 else int.from_bytes(buf[pos:pos + size], "big")) >> shift
            pos += size
            if j <= i:
                break
        items[i], items[j] = items[j], items[i]


class KeyedDeals(random.Random):
    """A ``random.Random`` for game engines whose every shuffle is a keyed deal.

    Engines shuffle exactly once per deal (arena.games.base). ``label_of``
    names the deal being made (the engine's ``deal_label``); without it the
    k-th shuffle is labelled ``{"deal": k}``. Any other draw (``random()``,
    ``randrange``...) also comes from the keyed stream, never from Mersenne
    Twister.
    """

    def __init__(self, key: bytes, table: str,
                 label_of: "Callable[[], Mapping[str, Any]] | None" = None) -> None:
        self._key = key
        self._table = table
        self.label_of = label_of
        self._shuffles = 0
        self._extra = _ByteStream(_seed(key, table, {"extra": 0}))
        super().__init__()

    def seed(self, a: Any = None, version: int = 2) -> None:  # noqa: ARG002
        """Ignored: the key is the only source (Random.__init__ calls this)."""

    def getstate(self) -> Any:
        raise TypeError("KeyedDeals has no Mersenne Twister state")

    def setstate(self, state: Any) -> None:
        raise TypeError("KeyedDeals has no Mersenne Twister state")

    def getrandbits(self, k: int) -> int:
        if k <= 0:
            return 0
        nbytes = (k + 7) // 8
        return int.from_bytes(self._extra.take(nbytes), "big") >> (nbytes * 8 - k)

    def random(self) -> float:
        return self.getrandbits(53) * 2.0 ** -53

    def shuffle(self, x: Any) -> None:
        label = dict(self.label_of()) if self.label_of is not None else {"deal": self._shuffles}
        self._shuffles += 1
        keyed_shuffle(self._key, self._table, label, x)
