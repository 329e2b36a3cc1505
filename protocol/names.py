"""The one rule for bot names, used by the bot port, the web and the CLI.

A bot name is 1 to 32 characters of ``A-Z a-z 0-9 _ . -`` (it must fit a
standings column and a replay's seat box), and the ``house`` family
(``house``, ``house-…``, ``house_…``, ``house.…``, in any case) is reserved:
the arena names its own house bots that way, and a page shows such a name as
a house bot.
"""

from __future__ import annotations

import re

MAX_BOT_NAME = 32
BOT_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,%d}" % MAX_BOT_NAME)
HOUSE_FAMILY = "house"
BOT_NAME_RULE = f"1-{MAX_BOT_NAME} letters, digits, '_', '.' or '-'"


class BotNameError(ValueError):
    """A name no bot may have; the message says which rule it breaks."""


def is_house_name(name: str) -> bool:
    """A name of the reserved ``house`` family."""
    lowered = name.lower()
    return lowered == HOUSE_FAMILY or (lowered.startswith(HOUSE_FAMILY)
                                       and lowered[len(HOUSE_FAMILY)] in "-_.")


def bot_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a bot's name, or None when it can."""
    if not isinstance(name, str):
        return f"a bot name must be a string, got {type(name).__name__}"
    shown = repr(name[:40] + "..." if len(name) > 40 else name)
    if not BOT_NAME_RE.fullmatch(name):
        return f"bot name {shown} must be {BOT_NAME_RULE}"
    if is_house_name(name):
        return (f"bot name {shown} is reserved: names of the {HOUSE_FAMILY!r} family "
                "are the arena's own house bots; pick another name")
    return None


def check_bot_name(name: object) -> str:
    """``name`` if a bot may have it, else :class:`BotNameError`."""
    problem = bot_name_problem(name)
    if problem is not None:
        raise BotNameError(problem)
    assert isinstance(name, str)
    return name
