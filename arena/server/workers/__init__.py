"""``arena serve --workers N``: the bot port served by N worker processes.

The parent process accepts every bot connection on the public bot port,
reads its hello (one message) and hands the socket, with the bytes read, to
the worker its token belongs to (:mod:`.dispatch`): always the same worker
for the same token, so a bot that reconnects mid-match finds its seat, and
the per-token limits and open-mode names hold across the workers. Each
worker (:mod:`.child`) runs its own lobby, tables, admission and store
writer on the shared store; its live hub sends the public messages to the
parent through a local bridge (:mod:`.live`), the parent's web shows them.
:mod:`.pool` starts, watches, restarts and stops the workers. Bots that an
organiser's tournament names, hosted bots and the tournament director stay
in the parent (see ``arena.app.serve``).
"""

from __future__ import annotations

import argparse

MAX_WORKERS = 64


def worker_count(text: str) -> int:
    """``--workers N``: 1 (one process, as without the option) to 64."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of workers") from None
    if not 1 <= count <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"--workers must be between 1 and {MAX_WORKERS}, got {count}")
    return count
