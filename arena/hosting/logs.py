"""What a hosted bot writes, kept within bounds.

A bot's stderr in a match and the output of a build are each kept up to
``LOG_CAP_BYTES``; past it the writer (the relay inside the sandbox) keeps
reading so the bot never blocks, and drops the rest with one closing line.
The arena cuts the file to the cap again when the run ends, whatever the bot
did, and keeps it in the store; per version, the stderr of the newest
``KEEP_STDERR`` matches is kept there.
"""

from __future__ import annotations

from pathlib import Path

LOG_CAP_BYTES = 1 << 20  # 1 MiB per match's stderr and per build log
KEEP_STDERR = 50  # matches per version whose stderr is kept


def cut_to_cap(path: Path, cap: int = LOG_CAP_BYTES) -> None:
    """The backstop: whatever reached the file, at most ``cap`` bytes stay
    (and a line saying so). Call it off the event loop."""
    try:
        if path.stat().st_size <= cap + 256:  # the relay's closing line fits
            return
        with open(path, "r+b") as handle:
            handle.truncate(cap)
            handle.seek(cap)
            handle.write(f"\n[log cut at {cap} bytes; the rest was not kept]\n".encode())
    except FileNotFoundError:
        pass
