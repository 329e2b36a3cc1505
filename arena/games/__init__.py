"""Game registry: the only place that names concrete games."""

from __future__ import annotations

import importlib

from arena.games.base import GameSpec

_MODULES = {
    "muushig": "arena.games.muushig",
    "thirteen": "arena.games.thirteen",
}


class UnknownGameError(LookupError):
    pass


def get_game(name: str) -> GameSpec:
    """Return the spec of game ``name`` (its module exposes ``SPEC``)."""
    try:
        module = importlib.import_module(_MODULES[name])
    except KeyError:
        raise UnknownGameError(
            f"unknown game {name!r}; known games: {', '.join(sorted(_MODULES))}"
        ) from None
    return module.SPEC


def game_names() -> list[str]:
    return sorted(_MODULES)
