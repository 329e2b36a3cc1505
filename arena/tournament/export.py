"""Tournament results as files: JSON (everything) and CSV (spreadsheets)."""

from __future__ import annotations

import csv
import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable

from arena.storage.base import MatchRecord, SeatFaults
from arena.tournament.ranking import ranking_for
from arena.tournament.standings import OPTIONAL_FIELDS, StandingRow, counted

FORMAT_VERSION = 1
# Nested fields are JSON only (``figures`` becomes one ``figures.<key>`` column each).
_NESTED = ("vs_next", "figures")
STANDING_COLUMNS = [f.name for f in fields(StandingRow) if f.name not in _NESTED]
FIGURE_PREFIX = "figures."
MATCH_FAULT_COLUMNS = ["timeouts", "illegal", "disconnects"]
MATCH_COLUMNS = ["match", "finished_at", "seat", "bot", "rank", "stars", "score_sum",
                 *MATCH_FAULT_COLUMNS]  # for Muushig; other games name their own keys


def standing_columns(rows: Iterable[StandingRow]) -> list[str]:
    """The CSV columns of these rows: every row field, the optional ones
    only when a game of the rows fills them, then one column per ranking key."""
    rows = list(rows)
    filled: set[str] = set()
    figures: list[str] = []
    for game in dict.fromkeys(r.game for r in rows if r.game is not None):
        spec = ranking_for(game)
        filled.update(spec.row_fields())
        figures += [k.key for k in spec.keys if k.key not in figures]
    return ([c for c in STANDING_COLUMNS if c not in OPTIONAL_FIELDS or c in filled]
            + [FIGURE_PREFIX + key for key in figures])


def match_columns(matches: Iterable[MatchRecord]) -> list[tuple[str, str]]:
    """(column, result key) of the ranking keys of these matches' games."""
    out: list[tuple[str, str]] = []
    for game in dict.fromkeys(m.game for m in matches):
        for k in ranking_for(game).keys:
            column = (k.field or k.key, k.key)
            if column not in out:
                out.append(column)
    return out


def match_summary(match: MatchRecord) -> dict[str, Any]:
    """One finished match as plain JSON (no event log, no decks)."""
    assert match.result is not None
    faults = [f if isinstance(f, SeatFaults) else SeatFaults(**f)
              for f in (match.faults or [SeatFaults()] * len(match.players))]
    return {"id": match.id, "game": match.game, "tournament_id": match.tournament_id,
            "seed": match.seed, "started_at": match.started_at,
            "finished_at": match.finished_at, "players": list(match.players),
            "result": match.result,
            "faults": [{"timeouts": f.timeouts, "illegal": f.illegal,
                        "disconnects": f.disconnects, "autopilot": f.autopilot}
                       for f in faults]}


def results_document(rows: list[StandingRow], matches: Iterable[MatchRecord] = (), *,
                     meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"format": FORMAT_VERSION, "meta": dict(meta or {}),
            "standings": [r.to_dict() for r in rows],
            "matches": [match_summary(m) for m in counted(matches)]}


def write_json(path: Path | str, rows: list[StandingRow],
               matches: Iterable[MatchRecord] = (), *,
               meta: dict[str, Any] | None = None) -> Path:
    path = Path(path)
    path.write_text(json.dumps(results_document(rows, matches, meta=meta), indent=2,
                               allow_nan=False) + "\n", encoding="utf-8")
    return path


def read_json(path: Path | str) -> tuple[list[StandingRow], dict[str, Any]]:
    """The standings rows and the whole document of a results file."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: unknown results format {doc.get('format')!r}")
    return [StandingRow.from_dict(r) for r in doc["standings"]], doc


def write_standings_csv(path: Path | str, rows: list[StandingRow]) -> Path:
    path = Path(path)
    columns = standing_columns(rows)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            data = row.to_dict()
            for key, value in row.figures.items():
                data[FIGURE_PREFIX + key] = value
            writer.writerow({k: "" if data.get(k) is None else data[k] for k in columns})
    return path


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


def read_standings_csv(path: Path | str) -> list[StandingRow]:
    """Parse a standings CSV back into rows (types restored)."""
    types = {f.name: str(f.type) for f in fields(StandingRow)}
    rows = []
    with Path(path).open(newline="", encoding="utf-8") as f:
        for raw in csv.DictReader(f):
            values: dict[str, Any] = {}
            figures: dict[str, int | float] = {}
            for key, text in raw.items():
                if key.startswith(FIGURE_PREFIX):
                    if text != "":
                        figures[key[len(FIGURE_PREFIX):]] = _number(text)
                    continue
                kind = types[key]
                if "str" in kind:
                    values[key] = text if text != "" or "None" not in kind else None
                elif text == "":
                    values[key] = None
                elif kind in ("int", "int | None"):
                    values[key] = int(text)
                elif "int" in kind:  # int | float
                    values[key] = _number(text)
                else:
                    values[key] = float(text)
            rows.append(StandingRow(**values, figures=figures))
    return rows


def write_matches_csv(path: Path | str, matches: Iterable[MatchRecord]) -> Path:
    """One line per seat of every finished match, with its game's ranking keys."""
    path = Path(path)
    done = counted(matches)
    keys = match_columns(done)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["match", "finished_at", "seat", "bot", "rank",
                         *(column for column, _ in keys), *MATCH_FAULT_COLUMNS])
        for m in done:
            s = match_summary(m)
            result = s["result"]
            n = len(s["players"])
            spec = ranking_for(m.game)
            own = {k.key for k in spec.keys}
            figures = [(result.get(key) or [0] * n) if key in own else None for _, key in keys]
            for seat, bot in enumerate(s["players"]):
                fault = s["faults"][seat]
                writer.writerow([m.id, m.finished_at, seat, bot, result[spec.places][seat],
                                 *("" if v is None else v[seat] for v in figures),
                                 fault["timeouts"], fault["illegal"], fault["disconnects"]])
    return path


def export_results(folder: Path | str, rows: list[StandingRow],
                   matches: Iterable[MatchRecord] = (), *, stem: str = "results",
                   meta: dict[str, Any] | None = None) -> list[Path]:
    """Write ``<stem>.json``, ``<stem>-standings.csv`` and ``<stem>-matches.csv``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    matches = list(matches)
    return [write_json(folder / f"{stem}.json", rows, matches, meta=meta),
            write_standings_csv(folder / f"{stem}-standings.csv", rows),
            write_matches_csv(folder / f"{stem}-matches.csv", matches)]


def export_standings(rows: list[StandingRow], target: Path | str, *, store: Any = None,
                     tournament_id: str | None = None,
                     meta: dict[str, Any] | None = None) -> list[Path]:
    """Export for ``arena tournament --export TARGET``.

    ``TARGET`` ending in ``.json`` or ``.csv`` names the standings file (its
    sibling of the other kind is written too, plus ``<stem>-matches.csv``);
    anything else is a folder receiving ``results.json`` and the CSVs. With a
    ``store`` and ``tournament_id`` the finished matches are included.
    """
    matches: list[MatchRecord] = []
    if store is not None and tournament_id is not None:
        matches = store.finished_matches(tournament_id=tournament_id)
    meta = dict(meta or {})
    if tournament_id is not None:
        meta.setdefault("tournament_id", tournament_id)
    target = Path(target)
    if target.suffix in (".json", ".csv"):
        folder = target.parent
        folder.mkdir(parents=True, exist_ok=True)
        stem = target.stem
        return [write_json(folder / f"{stem}.json", rows, matches, meta=meta),
                write_standings_csv(folder / f"{stem}.csv", rows),
                write_matches_csv(folder / f"{stem}-matches.csv", matches)]
    return export_results(target, rows, matches, meta=meta)
