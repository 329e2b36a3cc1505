"""What a tournament shows on the terminal while it runs and when it ends.

On a terminal: a live progress bar (matches done / total, ETA) above the
current standings. Elsewhere (a log file, CI): one plain line per finished
match and a plain-text table at the end, so output stays greppable.
"""

from __future__ import annotations

import functools
import shutil
import sys
import textwrap
import time
from typing import Callable, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Table
from rich.text import Text

from arena.tournament.ranking import ranking_for
from arena.tournament.standings import StandingRow


def format_vs_next(row: StandingRow) -> str:
    """Whether this row is really ahead of the next one (standings' vs_next)."""
    vs = row.vs_next
    if vs is None:
        return ""
    if vs["significant"]:
        return f"yes (p={vs['p_value']:.3f})"
    more = vs.get("more_matches")
    return f"not yet (p={vs['p_value']:.2f}" + (f", ~{more} more)" if more else ")")


Column = tuple[str, Callable[[StandingRow], str], str]  # header, cell, alignment


def _figure(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.2f}"


def _figure_of(key: str, row: StandingRow) -> str:
    return _figure(row.figures.get(key, 0))


def columns_for(rows: list[StandingRow]) -> tuple[list[Column], list[str]]:
    """The table's columns for rows of one game (its ranking keys, named by
    the game's descriptor), and the headers left out first when too wide."""
    game = next((r.game for r in rows if r.game is not None), None)
    spec = ranking_for(game) if game is not None else None
    name = spec.points_name if spec is not None else "points"
    keys: list[Column] = [(name, lambda r: _figure(r.points), "right")]
    for k in spec.keys[1:] if spec is not None else ():
        keys.append((k.label.lower(), functools.partial(_figure_of, k.key), "right"))
    per_match = f"{name}/match (95% CI)"
    columns: list[Column] = [
        ("#", lambda r: str(r.rank), "right"),
        ("bot", lambda r: r.bot, "left"),
        ("matches", lambda r: str(r.matches), "right"),
        *keys,
        ("wins", lambda r: str(r.wins), "right"),
        ("place", lambda r: f"{r.avg_place:.2f}", "right"),
        (per_match, lambda r: f"{r.points_per_match:.2f} "
                              f"({r.points_ci_low:.2f}-{r.points_ci_high:.2f})", "right"),
        ("rating", lambda r: f"{r.rating:.1f} ({r.rating_mu:.1f}±{r.rating_sigma:.1f})",
         "right"),
        ("ahead of next?", format_vs_next, "left"),
        ("t/o", lambda r: str(r.timeouts), "right"),
        ("illegal", lambda r: str(r.illegal), "right"),
        ("disc", lambda r: str(r.disconnects), "right"),
        ("median ms",
         lambda r: "-" if r.median_latency_ms is None else f"{r.median_latency_ms:.1f}",
         "right"),
    ]
    hide_first = ["disc", "illegal", "t/o", "median ms", "wins",
                  *(header for header, _, _ in keys[1:]), "place", per_match]
    return columns, hide_first


def _terminal_width() -> int | None:
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def render_table(rows: list[StandingRow], width: int | None = None) -> str:
    """The standings as an aligned plain-text table (no colours), at most
    ``width`` columns wide (default: the terminal's width on a terminal,
    unlimited otherwise); columns that do not fit are named in a last line."""
    width = _terminal_width() if width is None else width
    columns, hide_first = columns_for(rows)
    cells_of = {name: [name, *(fmt(row) for row in rows)] for name, fmt, _ in columns}
    widths = {name: max(len(c) for c in cells) for name, cells in cells_of.items()}
    hidden: list[str] = []

    def total() -> int:
        return sum(widths[name] for name, _, _ in columns) + 2 * (len(columns) - 1)

    for name in hide_first:
        if width is None or total() <= width:
            break
        columns = [c for c in columns if c[0] != name]
        hidden.append(name)

    def line(index: int) -> str:
        parts = [cells_of[name][index].ljust(widths[name]) if align == "left"
                 else cells_of[name][index].rjust(widths[name]) for name, _, align in columns]
        return "  ".join(parts).rstrip()

    out = [line(0), "  ".join("-" * widths[name] for name, _, _ in columns)]
    out += [line(i + 1) for i in range(len(rows))]
    if hidden and width is not None:
        out += textwrap.wrap(f"(hidden to fit {width} columns: {', '.join(hidden)}; "
                             "the web page and --export show them)", width)
    return "\n".join(out) + "\n"


class _EtaColumn(ProgressColumn):
    """Time left at this run's pace; "estimating…" until a match has finished
    (rich's own column shows -:--:-- for a long while)."""

    def __init__(self, eta: Callable[[], float | None]) -> None:
        super().__init__()
        self._eta = eta

    def render(self, task: Task) -> Text:
        seconds = self._eta()
        if seconds is None:
            return Text("ETA estimating…", style="progress.remaining")
        h, rest = divmod(int(round(seconds)), 3600)
        m, s = divmod(rest, 60)
        return Text(f"ETA {h}:{m:02d}:{s:02d}", style="progress.remaining")


def rich_table(rows: list[StandingRow], *, title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False)
    columns, _ = columns_for(rows)
    for name, _, align in columns:
        table.add_column(name, justify=align)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(fmt(row) for _, fmt, _ in columns))
    return table


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class TournamentProgress:
    """Live display of a running tournament; use as a context manager.

    ``advance()`` after each finished match (optionally with fresh
    standings); ``finish(rows)`` prints the final table.
    """

    def __init__(self, total: int, *, title: str = "tournament", done: int = 0,
                 file: TextIO | None = None, force_terminal: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.done = done
        self.title = title
        self.console = Console(file=file, force_terminal=force_terminal)
        self.live_mode = self.console.is_terminal
        self._clock = clock
        self._started = clock()
        self._done_at_start = done
        self._rows: list[StandingRow] = []
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TextColumn("matches"),
                                  _EtaColumn(self.eta), console=self.console)
        self._task = self._progress.add_task(title, total=total, completed=done)
        self._live: Live | None = None

    def eta(self) -> float | None:
        """Seconds left at the pace of this run so far."""
        played = self.done - self._done_at_start
        if played <= 0:
            return None
        per_match = (self._clock() - self._started) / played
        return per_match * (self.total - self.done)

    def __enter__(self) -> TournamentProgress:
        if self.live_mode:
            self._live = Live(self._renderable(), console=self.console, refresh_per_second=4,
                              transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def _renderable(self) -> Group:
        parts: list = [self._progress]
        if self._rows:
            parts.append(rich_table(self._rows))
        return Group(*parts)

    def advance(self, rows: list[StandingRow] | None = None, *, note: str = "") -> None:
        self.done += 1
        if rows is not None:
            self._rows = rows
        self._progress.update(self._task, completed=self.done)
        if self._live is not None:
            self._live.update(self._renderable())
        else:
            extra = f" {note}" if note else ""
            self.console.print(f"{self.title}: {self.done}/{self.total} matches, "
                               f"ETA {format_eta(self.eta())}{extra}", highlight=False,
                               soft_wrap=True, markup=False)

    def finish(self, rows: list[StandingRow]) -> None:
        """Print the final standings (rich on a terminal, plain text otherwise)."""
        self.__exit__()
        if self.live_mode:
            self.console.print(rich_table(rows, title=self.title))
        else:
            self.console.print(render_table(rows), end="", highlight=False, soft_wrap=True,
                               markup=False)


class ProgressDisplay:
    """A progress-only display driven by ``update(done, total)`` callbacks
    (the runner's ``on_progress``); a context manager like
    :class:`TournamentProgress`, created before the total is known."""

    def __init__(self, *, title: str = "tournament", file: TextIO | None = None,
                 force_terminal: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._args = {"title": title, "file": file, "force_terminal": force_terminal,
                      "clock": clock}
        self._inner: TournamentProgress | None = None
        self._entered = False

    def __enter__(self) -> ProgressDisplay:
        self._entered = True
        if self._inner is not None:
            self._inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._entered = False
        if self._inner is not None:
            self._inner.__exit__()

    def update(self, done: int, total: int) -> None:
        if self._inner is None or self._inner.total != total:
            if self._inner is not None:
                self._inner.__exit__()
            self._inner = TournamentProgress(total, done=done, **self._args)  # type: ignore[arg-type]
            if self._entered:
                self._inner.__enter__()
            return
        while self._inner.done < done:
            self._inner.advance()
