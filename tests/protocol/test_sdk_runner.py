"""The blocking wrapper ``run_bot``, its settings, and ``python -m protocol.sdk``."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest

from protocol import Limits, MatchEnd, MatchStart, Request
from protocol.sdk import BotConfigError, load_strategy, resolve_settings, run_bot
from protocol.testing import ScriptedServer


def test_keyword_arguments_beat_flags_which_beat_the_environment():
    env = {"ARENA_HOST": "env-host", "ARENA_PORT": "7100", "ARENA_TOKEN": "env-token", "ARENA_NAME": "env-name"}
    assert resolve_settings(env=env).host == "env-host"
    settings = resolve_settings(argv=["--host", "flag-host", "--port", "7200"], env=env)
    assert (settings.host, settings.port, settings.token, settings.name) == ("flag-host", 7200, "env-token", "env-name")
    settings = resolve_settings(host="kw-host", argv=["--host", "flag-host", "--max-matches", "3"], env=env)
    assert (settings.host, settings.max_matches) == ("kw-host", 3)


def test_defaults_and_a_missing_token():
    settings = resolve_settings(token="t", env={})
    assert (settings.host, settings.port, settings.encoding, settings.name) == ("127.0.0.1", 7000, "msgpack", None)
    with pytest.raises(BotConfigError, match="no token"):
        resolve_settings(env={})
    with pytest.raises(BotConfigError, match="port must be a number"):
        resolve_settings(token="t", env={"ARENA_PORT": "seven"})


def test_load_strategy_explains_bad_specs():
    assert load_strategy("protocol.sdk.strategy:default_action").__name__ == "default_action"
    with pytest.raises(BotConfigError, match="module:function"):
        load_strategy("justamodule")
    with pytest.raises(BotConfigError, match="cannot import"):
        load_strategy("no_such_module_xyz:f")
    with pytest.raises(BotConfigError, match="no function"):
        load_strategy("protocol.sdk.strategy:nope")


async def serve_one_match(server: ScriptedServer) -> dict:
    conn = await server.accept(timeout=20)
    await conn.handshake()
    await conn.send(MatchStart("m", "muushig", 0, ("a", "b", "c", "d", "e"), {}, Limits(5000, 0)))
    await conn.send(Request("m", 1, "decide", 5000, ["enter", "fold"], {"seat": 0}))
    answer = await conn.expect("action")
    await conn.send(MatchEnd("m", {"stars": [0, 0, 0, 0, 1]}, []))
    await conn.expect("bye")
    return answer


async def test_run_bot_blocks_until_done_and_returns_the_client():
    async with ScriptedServer() as server:
        blocking = asyncio.to_thread(
            run_bot, lambda phase, legal, state: "enter", host="127.0.0.1", port=server.port, token="t", max_matches=1
        )
        client, answer = await asyncio.wait_for(asyncio.gather(blocking, serve_one_match(server)), 20)
    assert answer["action"] == "enter"
    assert client.matches_played == 1
    assert client.finished[0].result == {"stars": [0, 0, 0, 0, 1]}


async def test_command_line_entry_runs_a_module_function(tmp_path):
    (tmp_path / "mybot.py").write_text(textwrap.dedent("""
        def choose(phase, legal, state):
            return legal[-1]
    """))
    async with ScriptedServer() as server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "protocol.sdk", "--host", "127.0.0.1", "--port", str(server.port),
            "--token", "t", "--name", "mine", "--bot", "mybot:choose", "--max-matches", "1",
            cwd=tmp_path, env={k: v for k, v in os.environ.items() if not k.startswith("ARENA_")},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        try:
            answer = await serve_one_match(server)
            output, _ = await asyncio.wait_for(proc.communicate(), 20)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert answer["action"] == "fold"
    assert proc.returncode == 0, output.decode()


async def test_command_line_reports_a_bad_bot_spec(tmp_path):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "protocol.sdk", "--token", "t", "--bot", "nothing_here:f",
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    _, errors = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert b"cannot import 'nothing_here'" in errors
