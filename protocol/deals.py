"""Verifiable deals (protocol §5): the commitment and its check.

Before each hand the server sends ``commit {round, hand, commitment}``, the
lowercase hex SHA-256 of ``salt + ":" + ",".join(deck)``; ``match_end.reveal``
gives every ``salt`` and ``deck``. Both sides use these two functions.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Mapping, Sequence


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
