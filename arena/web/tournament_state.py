"""The parts of a tournament's API record that depend on where it stands:
what it waits for while it is open, its deal key once it is over, and a
gauntlet's decision so far.

The deal key is shown only for a finished tournament: until then a
cancelled or interrupted tournament may still be resumed and deal from it,
and anyone holding it could compute every unplayed deck. Finished, it is
what lets a visitor check every deck against the commitment published
before the first match (``arena verify``, or by hand).
"""

from __future__ import annotations

from typing import Any

from arena.storage.base import Store, StorageError, TournamentRecord, TournamentStatus
from arena.storage.deal_keys import DealKeyring
from arena.tournament.waiting import waiting_for
from protocol.deals import key_commitment


def tournament_state(store: Store, record: TournamentRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    waiting = waiting_for(store, record)
    out["waiting"] = waiting.to_wire() if waiting is not None else None
    out["deal_key"] = revealed_key(store, record)
    if (record.config.get("schedule") or {}).get("kind") == "gauntlet":
        out["gauntlet"] = gauntlet_state(store, record)
    return out


def gauntlet_state(store: Store, record: TournamentRecord) -> dict[str, Any]:
    """A gauntlet's decision so far and its result per field member
    (arena/tournament/gauntlet_play.py)."""
    from arena.tournament.config import config_from_wire
    from arena.tournament.gauntlet_play import stored_matches, summary

    result = summary(config_from_wire(record.config), store.get_schedule(record.id),
                     stored_matches(store, record.id))
    if record.status is TournamentStatus.CANCELLED and result["verdict"] == "continue":
        # Not playing on: stopped by the organiser before the rule decided.
        result["reason"] = (f"cancelled by the organiser after {result['deck_sets']} deck "
                            "set(s), before the stopping rule decided")
    return result


def revealed_key(store: Store, record: TournamentRecord) -> str | None:
    """The tournament's deal key (hex) once it is finished and the key
    matches its published commitment; None before, or if it is not kept here."""
    if record.status is not TournamentStatus.FINISHED:
        return None
    published = (record.config.get("deals") or {}).get("commitment")
    try:
        key = DealKeyring.for_store(store).load(record.id)
    except StorageError:
        return None
    if key is None or published is None or key_commitment(key) != published:
        return None
    return key.hex()
