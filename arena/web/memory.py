"""The tournament page's note on memory across duplicate rotations.

Sealing (protocol §6) keeps every deck from the bots until no match deals
it again, but a Muushig bot sees the cards played in each trick: one that
remembers a rotation can recognise its deals in the next. Only a program
that does not outlive its match is sure to forget, so the page says, per
entrant, whether it could have carried memory across rotations.
"""

from __future__ import annotations

from typing import Any

from arena.web.render import e

_WHY = {
    "local": "one process for the whole tournament, with a writable working directory",
    "remote": "its own program, wherever it runs",
}
HOSTED = "hosted"  # a new sandbox for each match, nothing writable kept: it cannot


def entrant_kinds(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, "local" | "remote" | "hosted") of each entrant of a stored config."""
    kinds = []
    for entrant in config.get("entrants") or []:
        if isinstance(entrant, dict) and isinstance(entrant.get("name"), str):
            kinds.append((entrant["name"], HOSTED if entrant.get("hosted") else
                          "local" if entrant.get("command") is not None else "remote"))
    return kinds


def memory_section(config: dict[str, Any]) -> str:
    """HTML for a duplicate tournament ("" otherwise): never a command or path."""
    if not config.get("duplicate", True):
        return ""
    kinds = entrant_kinds(config)
    if not kinds:
        return ""
    rows = "".join(f'<li data-entrant="{e(name)}" data-memory="no"><strong>{e(name)}</strong>'
                   f" ({kind}): could not -- a new sandbox for every match</li>"
                   if kind == HOSTED else
                   f'<li data-entrant="{e(name)}" data-memory="yes"><strong>{e(name)}</strong>'
                   f' ({kind}): could remember earlier rotations -- {_WHY[kind]}</li>'
                   for name, kind in kinds)
    return (
        '<section aria-labelledby="h-memory"><h2 id="h-memory">Memory across rotations</h2>'
        "<p>Each table is played once per seat rotation on the same decks. No bot is sent a "
        "deck, or another seat's cards, before the last rotation dealing it is over; but a "
        "bot sees the cards played in tricks and may remember them. Which entrants could "
        "have carried memory from one rotation to the next:</p>"
        f'<ul class="memory">{rows}</ul>'
        "<p>House bots keep nothing between matches. Hosted versions are started fresh "
        "in a new sandbox for every match, with nothing they wrote kept, so they could "
        "not.</p>"
        "</section>")
