"""``arena match`` with bots the arena starts: one interpreter rule, and a
bot that dies before it connects fails the command at once."""

from __future__ import annotations

import sys
import time

from arena.cli import main
from tests.timing import MS


def test_a_bot_that_exits_at_once_fails_fast_with_its_code_and_stderr(capsys):
    crash = "me=python -c \"import sys; sys.stderr.write('boom: no strategy here\\n'); sys.exit(3)\""
    started = time.monotonic()
    assert main(["match", "--port", "0", crash]) == 1
    took = time.monotonic() - started
    err = capsys.readouterr().err
    # Well before the 30 s a wait for the bot to connect would take.
    assert took < 15_000 * MS, f"took {took:.1f} s"
    assert "'me' exited with code 3 before it connected" in err
    assert "boom: no strategy here" in err
    assert "Traceback" not in err
    assert len(err.splitlines()) < 15, err


def test_python_means_the_arenas_interpreter(capsys):
    # The bot prints which interpreter runs it, then plays as the SDK bot.
    probe = ("me=python -c \"import sys; sys.stderr.write(sys.executable + '\\n'); sys.exit(4)\"")
    assert main(["match", "--port", "0", probe]) == 1
    assert sys.executable in capsys.readouterr().err
