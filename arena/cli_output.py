"""How the ``arena`` command formats its help and its results."""

from __future__ import annotations

import argparse
from typing import Any


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default after its help, where it has one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or "default:" in text or default in (None, False, [], "")
                or default is argparse.SUPPRESS or action.option_strings == []):
            return text
        if text.endswith(")"):
            return f"{text[:-1]}; default: %(default)s)"
        return f"{text} (default: %(default)s)"


class RawHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The top-level help keeps its examples' line breaks."""


def format_result(match_id: str, players: list[str], result: dict[str, Any]) -> str:
    rounds = len(result["final_scores"][0]) if result["final_scores"] else 0
    header = ["rank", "seat", "bot", "stars", *[f"r{r + 1}" for r in range(rounds)], "sum"]
    rows = []
    for seat in sorted(range(len(players)), key=lambda s: (result["ranks"][s], s)):
        rows.append([str(result["ranks"][seat]), str(seat), players[seat],
                     "★" * result["stars"][seat] or "-",
                     *[str(v) for v in result["final_scores"][seat]], str(result["sums"][seat])])
    return _match_table(match_id, header, rows)


def format_result_columns(match_id: str, players: list[str], result: dict[str, Any],
                          columns: list[list[str]]) -> str:
    """A match result as the game describes it: one row per seat (best
    place first), one column per ``[result key, label]`` of its descriptor
    (``GameSpec.extra["web"]["result_columns"]``)."""
    header = ["seat", "bot", *[label for _, label in columns]]
    ranks = result.get("ranks") or [0] * len(players)
    rows = [[str(seat), players[seat], *[str(result[key][seat]) for key, _ in columns]]
            for seat in sorted(range(len(players)), key=lambda s: (ranks[s], s))]
    return _match_table(match_id, header, rows)


def _match_table(match_id: str, header: list[str], rows: list[list[str]]) -> str:
    """``match <id>`` over a left-aligned table: header, dashes, rows."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [f"match {match_id}",
             "  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)
