"""Tournament results as files: JSON (everything) and CSV (spreadsheets)."""

from __future__ import annotations

import csv
import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable

from arena.storage.base import MatchRecord, SeatFaults
from arena.tournament.standings import StandingRow, counted

FORMAT_VERSION = 1
STANDING_COLUMNS = [f.name for f in fields(StandingRow) if f.name != "vs_next"]  # nested: JSON only
MATCH_COLUMNS = ["match", "finished_at", "seat", "bot", "rank", "stars", "score_sum",
                 "timeouts", "illegal", "disconnects"]


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
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=STANDING_COLUMNS)
        writer.writeheader()
        for row in rows:
            data = row.to_dict()
            writer.writerow({k: "" if data[k] is None else data[k] for k in STANDING_COLUMNS})
    return path


def read_standings_csv(path: Path | str) -> list[StandingRow]:
    """Parse a standings CSV back into rows (types restored)."""
    types = {f.name: f.type for f in fields(StandingRow)}
    rows = []
    with Path(path).open(newline="", encoding="utf-8") as f:
        for raw in csv.DictReader(f):
            values: dict[str, Any] = {}
            for key, text in raw.items():
                kind = str(types[key])
                if kind == "str":
                    values[key] = text
                elif text == "":
                    values[key] = None
                elif kind == "int":
                    values[key] = int(text)
                else:
                    values[key] = float(text)
            rows.append(StandingRow(**values))
    return rows


def write_matches_csv(path: Path | str, matches: Iterable[MatchRecord]) -> Path:
    """One line per seat of every finished match."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(MATCH_COLUMNS)
        for m in counted(matches):
            s = match_summary(m)
            result = s["result"]
            n = len(s["players"])
            stars = result.get("stars") or [0] * n
            sums = result.get("sums") or [0] * n
            for seat, bot in enumerate(s["players"]):
                fault = s["faults"][seat]
                writer.writerow([m.id, m.finished_at, seat, bot, result["ranks"][seat],
                                 stars[seat], sums[seat], fault["timeouts"], fault["illegal"],
                                 fault["disconnects"]])
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
