"""The public events of a running match, rebuilt from its stored log.

The live hub keeps only a short recent tail of each match's public events
(:mod:`arena.live`); a viewer who opens a match later gets the older ones
from the store. The store holds every event's *record* form, which carries
hidden cards, so the public forms are not read from it but made again: the
recorded decks and actions are replayed through the game's engine, and each
engine event's ``for_public()`` is taken in the order the records were
written. The server's own records (``commit``, ``timeout``, ``autopilot``)
are public as they are; its ``action`` notes are not shown.

Numbered from 0 in order, these are the hub's ``seq`` numbers: :func:`join`
lays the hub's tail over them, by seq, with no gap and no event twice.

Sans-IO: the caller reads the stored events (a blocking read: off the event
loop) and hands them in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from arena.games import UnknownGameError, get_game
from arena.games.base import GameError, GameEvent

Wire = dict[str, Any]
Entry = dict[str, Any]  # {"seq", "at", "data"}: one public event as the hub shows it

# Records the session writes itself, and whether a spectator sees them.
SERVER_PUBLIC = frozenset({"commit", "timeout", "autopilot"})
SERVER_PRIVATE = frozenset({"action"})


class HistoryError(Exception):
    """A stored log that does not rebuild into the public events (an unknown
    game, or records that disagree with the replayed engine)."""


def _engine_events(game: str, rules: Wire | None,
                   log: Sequence[Mapping[str, Any]]) -> Iterator[GameEvent]:
    """The engine's events of the replayed match, in order, as far as the
    recorded decks and actions go."""
    try:
        spec = get_game(game)
    except UnknownGameError:
        raise HistoryError(f"no replay for game {game!r}") from None
    if spec.replay_inputs is None:
        raise HistoryError(f"game {game!r} does not say how its records replay")
    decks, actions = spec.replay_inputs(log)
    engine = spec.new_match(dict(rules) if rules else None, None, decks)
    yield from engine.start()
    for seat, action in actions:
        try:
            events = engine.play(action) if seat is None else engine.play_for(seat, action)
        except (GameError, ValueError, IndexError, RuntimeError):
            # The last step's deal is not stored yet (the store lags): the
            # records end before these events anyway.
            return
        yield from events


def public_history(game: str, rules: Wire | None,
                   stored: Sequence[tuple[int, float, Mapping[str, Any]]]) -> list[Entry]:
    """The public events of the stored records ``(seq, at, data)`` (in store
    order, from the first), numbered as the hub numbers them, each with the
    time its record was stored."""
    log = [data for _, _, data in stored]
    events = _engine_events(game, rules, log)
    out: list[Entry] = []
    for _, at, data in stored:
        kind = data.get("kind")
        if kind in SERVER_PRIVATE:
            continue
        if kind in SERVER_PUBLIC:
            public: Wire | None = dict(data)
        else:
            event = next(events, None)
            if event is None or event.kind != kind:
                raise HistoryError(f"stored event {len(out)} ({kind!r}) does not follow from "
                                   f"the replay ({getattr(event, 'kind', None)!r})")
            public = event.for_public()
        if public is not None:
            out.append({"seq": len(out), "at": at, "data": public})
    return out


def join(history: list[Entry], tail: list[Entry]) -> list[Entry] | None:
    """The history up to where the hub's tail begins, then the tail: every
    event once, in seq order. None if the store has not caught up with the
    start of the tail yet (there would be a gap)."""
    if not tail:
        return list(history)
    first = tail[0]["seq"]
    if len(history) < first:
        return None
    return history[:first] + tail


__all__ = ["HistoryError", "join", "public_history"]
