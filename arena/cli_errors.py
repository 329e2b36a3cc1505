"""Turning a user's mistake into one line that says what to do.

The ``arena`` command catches every exception in one place (``main``);
:func:`describe` names the mistakes a user can make and fix -- a missing or
invalid file, a bad option value, a command that does not exist, a store
that is not there -- and the command prints that line with exit code 2.
Anything else is a defect of the arena: one line too, exit code 1, and the
traceback with ``--debug``.
"""

from __future__ import annotations

import argparse
USAGE_EXIT = 2  # the user's mistake: fix the command or the file
FAILURE_EXIT = 1  # the command ran but failed (a bot crashed, a match aborted)
INTERNAL_EXIT = 1


class UserError(Exception):
    """A mistake in how the command was called; the message says how to fix it."""


class CommandFailed(Exception):
    """The command ran as asked but did not succeed (exit code 1)."""


def describe(exc: BaseException, args: argparse.Namespace | None = None) -> str | None:
    """One line for a mistake the user can fix, or None for anything else."""
    from arena.games import UnknownGameError
    from arena.games.base import RuleConfigError
    from arena.storage.base import StorageError
    from arena.storage.existing import NoStoreError
    from arena.tournament.config import ConfigError
    from arena.tournament.schedule import ScheduleError

    if isinstance(exc, UserError):
        return str(exc)
    if isinstance(exc, ConfigError):
        source = getattr(args, "config", None)
        text = str(exc)
        if source and source != "resume" and not text.startswith(str(source)):
            # The config's own messages start with the key; say which file.
            text = f"{source}: {text}"
        return f"{text} (see the tournament file reference in docs/tournaments.md)"
    if isinstance(exc, RuleConfigError):
        return f"{exc} (rule options are --rule KEY=VALUE)"
    if isinstance(exc, (UnknownGameError, ScheduleError)):
        return str(exc).strip("'\"")
    if isinstance(exc, NoStoreError):
        return str(exc)  # it names the location already
    if isinstance(exc, StorageError):
        return f"store {getattr(args, 'db', '')!s}: {exc}".replace("store : ", "store: ")
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return (f"cannot start {str(exc.filename)!r}: no such file or command "
                "(check the bot's command and its working directory)")
    if isinstance(exc, PermissionError) and exc.filename:
        return f"cannot start {str(exc.filename)!r}: permission denied (is it executable?)"
    if isinstance(exc, OSError) and exc.errno in (98, 48):  # EADDRINUSE (Linux, macOS)
        return f"{exc.strerror}: another process listens on that port (pick another with --port / --http-port, or 0 for any)"
    return None
