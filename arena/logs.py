"""structlog set-up: JSON lines when not on a terminal, readable on one.

While a live display (the tournament's progress bar) owns the terminal,
:func:`divert_logs` sends every log line to a file instead and lets only
warnings and errors through to stderr, where the display prints them above
itself -- so info lines never tear through the bar.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from pathlib import Path
from typing import Any, Iterator, MutableMapping, TextIO

import structlog

_SHOWN_WHILE_DIVERTED = {"warning", "error", "critical", "exception"}


class _Stderr:
    """Whatever ``sys.stderr`` is when a line is written (tests swap it, and
    a live display swaps it for a proxy that prints above itself)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class _Diversion:
    """Where log lines go while a display owns the terminal (None: stderr)."""

    def __init__(self) -> None:
        self.file: TextIO | None = None
        self.lock = threading.Lock()
        self.json = structlog.processors.JSONRenderer()


_diversion = _Diversion()


def _renderer(console: structlog.types.Processor) -> structlog.types.Processor:
    def render(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> Any:
        target = _diversion.file
        if target is not None:
            line = _diversion.json(logger, method_name, dict(event_dict))
            assert isinstance(line, str)  # JSONRenderer's default serializer writes text
            with _diversion.lock:
                target.write(f"{line}\n")
                target.flush()
            if method_name not in _SHOWN_WHILE_DIVERTED:
                raise structlog.DropEvent
        return console(logger, method_name, event_dict)
    return render


def configure_logging(level: str = "info", *, json: bool | None = None) -> None:
    """Send every log line to stderr; stdout is kept for what commands print."""
    if json is None:
        json = not sys.stderr.isatty()
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            _renderer(renderer),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        # Not cached: a module's logger must follow a later configure()
        # (a command run in-process after another, or a test capturing logs).
        cache_logger_on_first_use=False,
    )


@contextlib.contextmanager
def divert_logs(path: Path | str) -> Iterator[Path]:
    """Append every log line to ``path`` (JSON lines); only warnings and
    errors still reach stderr. For as long as a live display is shown."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        previous, _diversion.file = _diversion.file, file
        try:
            yield path
        finally:
            _diversion.file = previous


def diverted_to() -> str | None:
    """The file :func:`divert_logs` is appending to now, if any (a worker
    process started meanwhile appends there too)."""
    file = _diversion.file
    return None if file is None else str(file.name)
