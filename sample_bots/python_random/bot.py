"""A Muushig Arena bot that answers every request with a random legal action.

    python sample_bots/python_random/bot.py --host 127.0.0.1 --port 7000 --token T --name N

(or set ARENA_HOST, ARENA_PORT, ARENA_TOKEN, ARENA_NAME).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

try:
    from protocol.sdk import run_bot
except ImportError:  # run from a checkout without installing the project
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.sdk import run_bot


def choose(phase: str, legal: list, state: dict):
    return random.choice(legal)


if __name__ == "__main__":
    run_bot(choose, argv=sys.argv[1:])
