"""Argument types for command-line options: each refuses a bad value where
it is parsed, with a message naming what the option takes (argparse puts
the option's name in front). Plain functions of text, for every layer's
commands."""

from __future__ import annotations

import argparse
import math
from typing import Callable

MAX_PORT = 65535


def port(text: str) -> int:
    """A TCP port: 0 (any free one) to 65535."""
    value = integer(text)
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"must be a port from 0 (any free one) to {MAX_PORT}, got {value}")
    return value


def integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None


def at_least(low: int, unit: str = "") -> Callable[[str], int]:
    """A whole number of at least ``low``."""
    def parse(text: str) -> int:
        value = integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}{unit}, got {value}")
        return value
    parse.__name__ = f"at_least_{low}"
    return parse


def seconds(*, positive: bool = False) -> Callable[[str], float]:
    """A finite number of seconds, at least 0 (above 0 when ``positive``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            bound = "above 0" if positive else "0 or more"
            raise argparse.ArgumentTypeError(f"must be {bound} seconds, got {text}")
        return value
    parse.__name__ = "seconds"
    return parse
