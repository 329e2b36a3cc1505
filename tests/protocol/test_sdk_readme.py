"""The README's Python bot, run exactly as printed, against a real arena server."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import MatchStatus

ROOT = Path(__file__).resolve().parents[2]


def readme_snippet(game: str = "muushig") -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    bots = [b for b in blocks if "run_bot(" in b and ('game="thirteen"' in b) == (game == "thirteen")]
    assert bots, f"README.md shows a Python bot for {game}"
    return bots[0]


async def play_readme_bot(tmp_path: Path, *, argv: list[str], env: dict[str, str],
                          game: str = "muushig") -> str:
    """Start a real server, run the snippet, return the name of the bot that
    finished a match (the snippet's process is stopped afterwards)."""
    bot_file = tmp_path / "mybot.py"
    bot_file.write_text(readme_snippet(game))
    store = open_store(":memory:")
    server = ArenaServer(ServerConfig(port=0, http_port=None, db=":memory:", open=True, house_wait_s=0.05,
                                      decision_ms=2000), store)
    await server.start()
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    # The checkout, not the working directory, is where the SDK comes from.
    clean_env["PYTHONPATH"] = str(ROOT)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(bot_file), *[a.replace("PORT", str(server.port)) for a in argv],
        env={**clean_env, **{k: v.replace("PORT", str(server.port)) for k, v in env.items()}},
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        for _ in range(600):
            finished = [m for m in store.list_matches() if m.status is MatchStatus.FINISHED
                        and m.game == game]
            if finished:
                return next(p for p in finished[0].players if not p.startswith("house"))
            if proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        output = b""
        if proc.returncode is not None:
            output = await proc.stdout.read()
        pytest.fail(f"no finished match; bot exit code {proc.returncode}: {output.decode()[-2000:]}")
    finally:
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)
        await server.stop()
        store.close()


async def test_the_readme_bot_reads_its_flags(tmp_path):
    name = await play_readme_bot(tmp_path, argv=["--host", "127.0.0.1", "--port", "PORT", "--token", "X",
                                                  "--name", "readme-flags"], env={})
    assert name == "readme-flags"


async def test_the_readme_bot_reads_arena_variables(tmp_path):
    name = await play_readme_bot(tmp_path, argv=[], env={"ARENA_HOST": "127.0.0.1", "ARENA_PORT": "PORT",
                                                         "ARENA_TOKEN": "X", "ARENA_NAME": "readme-env"})
    assert name == "readme-env"


async def test_the_readme_thirteen_bot_plays_a_thirteen_match(tmp_path):
    name = await play_readme_bot(tmp_path, argv=["--port", "PORT", "--token", "X", "--name", "readme-13"],
                                 env={}, game="thirteen")
    assert name == "readme-13"


def test_the_readme_says_why_the_system_python_lacks_the_sdk():
    text = (ROOT / "README.md").read_text()
    assert "No module named 'protocol'" in text
    why = text.split("No module named 'protocol'", 1)[0].rsplit("\n\n", 1)[-1]
    assert ".venv" in why
