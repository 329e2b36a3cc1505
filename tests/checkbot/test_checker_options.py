"""check-bot runs where the author says, as long as each check may take,
with output a CI can read; a bare ``python`` is the arena's interpreter."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from pathlib import Path

from arena.checkbot import check_bot
from arena.cli import main

FAKE_BOT = str(Path(__file__).with_name("fake_bot.py"))


async def test_a_bare_python_is_the_arenas_interpreter(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nsys.stderr.write(sys.executable + '\\n')\nsys.exit(5)\n")
    report = await check_bot(["python", str(probe)], timeout_s=5)
    assert report.bot_exit_code == 5
    assert sys.executable in report.stderr_tail


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_the_checker_listens_where_it_is_told():
    port = free_port()
    report = await check_bot([sys.executable, FAKE_BOT, "good"], timeout_s=10, host="127.0.0.1", port=port)
    assert report.failed_names() == [], report.render(symbols=False)
    assert report.port == port


def test_port_zero_picks_one_and_prints_it(capsys):
    assert main(["check-bot", "--plain", "--port", "0", "--", sys.executable, FAKE_BOT, "good"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("check-bot: listening on 127.0.0.1:")
    assert int(first.rsplit(":", 1)[1].split()[0]) > 0


async def test_a_check_that_takes_too_long_fails_on_its_own_timeout():
    started = time.monotonic()
    report = await check_bot([sys.executable, FAKE_BOT, "silent"], timeout_s=10, check_timeout_s=1.0)
    assert time.monotonic() - started < 4.5
    assert "did not finish within 1 s" in report.result("hello").message
    assert report.exit_code == 1


def test_json_output_for_ci(capsys):
    # An illegal bot's requests each stay open to their deadline: keep it short.
    assert main(["check-bot", "--json", "--deadline-ms", "400", "--",
                 sys.executable, FAKE_BOT, "illegal"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    assert data["failed"] >= 1 and data["passed"] >= 1
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["hello"]["passed"] is True
    assert checks["decide"]["passed"] is False and "certainly-not-legal" in checks["decide"]["message"]
    assert data["encoding"] == "jsonl"
    assert "port" in data and "bot_exit_code" in data and "stderr_tail" in data
