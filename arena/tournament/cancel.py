"""``arena tournament cancel ID --db URL``: the organiser's stop, from a terminal.

The same as ``POST /api/tournaments/ID/cancel``: the tournament is marked
cancelled in the store, and every node playing it stops at its next poll
(``arena serve`` nodes and ``arena tournament --node`` processes alike).
``arena tournament resume ID`` takes it up again.
"""

from __future__ import annotations

import sys
from typing import Any

from arena.storage.base import NotFoundError, StorageError
from arena.storage.presence import TournamentOverError


def cancel_command(args: Any) -> int:
    from arena.storage import open_store, require_existing_store

    if not args.resume_id:
        print("arena tournament: give the tournament id: arena tournament cancel ID --db DB",
              file=sys.stderr)
        return 2
    try:
        # Cancelling in a store that is not there would create an empty one.
        require_existing_store(args.db, hint="check --db (the store the tournament runs on)")
        store = open_store(args.db)
    except StorageError as exc:
        print(f"arena tournament: {exc}", file=sys.stderr)
        return 2
    try:
        changed = store.cancel_tournament(args.resume_id)
    except NotFoundError:
        print(f"arena tournament: no tournament {args.resume_id!r} in {args.db}",
              file=sys.stderr)
        return 2
    except TournamentOverError as exc:
        print(f"arena tournament: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    if changed:
        print(f"tournament {args.resume_id} cancelled: the nodes playing it stop within a "
              f"second or two; to take it up again: arena tournament resume {args.resume_id} "
              f"--db {args.db}")
    else:
        print(f"tournament {args.resume_id} was cancelled already")
    return 0
