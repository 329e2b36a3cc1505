"""``arena match`` keeps what each bot it started wrote where ``arena logs``
finds it, and a match a bot did not play says why, with that bot's last lines."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.cli import main

ROOT = Path(__file__).resolve().parents[2]
MUUSHIG_BOT = ROOT / "sample_bots" / "python_random" / "bot.py"

CHATTY = '''\
import sys
from protocol.sdk import run_bot

def play(phase, legal, state):
    print("thinking about", phase, file=sys.stderr)
    return legal[0]

print("chatty bot starting", file=sys.stderr)
run_bot(play)
'''


def test_a_bots_output_is_kept_beside_the_store_for_arena_logs(capsys, tmp_path):
    bot = tmp_path / "chatty.py"
    bot.write_text(CHATTY)
    db = tmp_path / "m.db"
    assert main(["match", "--db", str(db), "--seed", "1", "--rule", "max_hands=2",
                 f"me=python {bot}"]) == 0
    capsys.readouterr()
    assert main(["logs", "me", "--db", str(db)]) == 0
    listing = capsys.readouterr().out
    assert ".log" in listing, listing
    logs = "".join(p.read_text() for p in (tmp_path / "bot-logs" / "me").glob("*.log"))
    assert "chatty bot starting" in logs and "thinking about" in logs


def test_a_muushig_bot_in_a_thirteen_match_is_told_what_is_wrong(capsys):
    code = main(["match", "--game", "thirteen", "--decision-ms", "200", "--bank-ms", "0",
                 "--autopilot-after", "1", f"me=python {MUUSHIG_BOT}"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "aborted" in err
    assert "'me' answered none of its thirteen requests" in err
    assert '"game": "thirteen"' in err and "arena check-bot --game thirteen" in err
    assert "the last lines it wrote:" in err  # an in-memory run keeps no log folder
