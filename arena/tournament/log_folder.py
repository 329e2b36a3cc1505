"""Where a tournament run's local bots write their output.

Beside an SQLite file the folder is ``bot-logs/``, where ``arena logs BOT
--db FILE`` finds it, and it stays. A store with no folder of its own (an
in-memory one, or a database server's) gets a temporary folder instead:
nothing can find it once the run is over, so it is made when the run starts
and removed when the run ends however it ends -- finished, failed or
stopped midway -- unless a bot crashed, whose output is what its author
needs (a warning names the folder). Made any earlier, or removed only on a
finished run, each run would leave one more folder in the system's
temporary directory.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import structlog

from arena.storage.deal_keys import store_directory

log = structlog.get_logger("arena.tournament")

TEMPORARY_PREFIX = "arena-bot-logs-"


def bot_log_dir(store: Any) -> Path:
    """Local bots' output lives beside the database (a new temporary folder
    for a store without one: the caller removes it)."""
    folder = store_directory(store)
    if folder is None:
        return Path(tempfile.mkdtemp(prefix=TEMPORARY_PREFIX))
    return folder / "bot-logs"


class RunLogFolder:
    """One run's bot log folder: ``given`` (the caller's, kept), else the
    store's ``bot-logs/``, else a temporary one between :meth:`open` and
    :meth:`close`."""

    def __init__(self, given: Path | None, store: Any) -> None:
        beside = store_directory(store)
        self.temporary = given is None and beside is None
        self.path: Path | None = given if given is not None else (
            None if beside is None else beside / "bot-logs")

    def open(self) -> Path:
        """The folder to write to (a temporary one is made now)."""
        if self.path is None:
            self.path = Path(tempfile.mkdtemp(prefix=TEMPORARY_PREFIX))
        return self.path

    def close(self, crashes: dict[str, int]) -> None:
        """The run is over: a temporary folder goes unless a bot crashed."""
        if not self.temporary or self.path is None:
            return
        crashed = sorted(name for name, count in crashes.items() if count)
        if crashed:
            log.warning("bot_logs_kept", folder=str(self.path), crashed=crashed)
            return
        shutil.rmtree(self.path, ignore_errors=True)
