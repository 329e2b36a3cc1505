"""A bot on the Python SDK whose behaviour is chosen by argv[1].

good     the first legal answer
zz       plays "ZZ" in the play phase (the SDK replaces it by a legal card)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.sdk import run_bot  # noqa: E402

MODE = sys.argv[1]


def play(phase, legal, state):
    if MODE == "zz" and phase == "play":
        return "ZZ"
    return legal[0]


run_bot(play, argv=sys.argv[2:])
