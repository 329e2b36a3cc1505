"""Files and folders only their owner may read.

The database holds the decks of running matches, the deal-key folder the
keys behind every deck, the bot logs what bots printed: none of it is for
the machine's other users. A common umask (022) would make new files 0644,
so they are created with explicit modes, and what an older version left
looser is tightened when the arena opens it again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def _tighten(path: Path, mode: int) -> None:
    try:
        current = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if current & 0o077:
        try:
            os.chmod(path, current & ~0o077 | (mode & 0o700))
        except PermissionError:
            pass  # not ours (a shared folder): nothing to tighten from here


def private_dir(path: Path | str) -> Path:
    """``path`` and missing parents created; ``path`` itself 0700."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    _tighten(path, FOLDER_MODE)
    return path


def private_file(path: Path | str) -> Path:
    """``path`` exists and is 0600 (created empty if missing)."""
    path = Path(path)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        pass  # opened as it is (it may be read-only), only made private
    _tighten(path, FILE_MODE)
    return path


def tighten_file(path: Path | str) -> None:
    """``path``, if it exists, readable by its owner only."""
    _tighten(Path(path), FILE_MODE)


def open_private_append(path: Path | str) -> BinaryIO:
    """``path`` opened to append bytes, created 0600 if missing."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    return os.fdopen(fd, "ab")
