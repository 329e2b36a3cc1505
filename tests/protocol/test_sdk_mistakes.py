"""A bot run with ``run_bot`` that cannot play says why in one line on
stderr and exits non-zero: no traceback for a wrong token or for a server
that is not there."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

from protocol import Error, ErrorCode
from protocol.testing import ScriptedServer

BOT = textwrap.dedent("""
    from protocol.sdk import run_bot
    run_bot(lambda phase, legal, state: legal[0])
""")
ROOT = Path(__file__).resolve().parents[2]


async def start_bot(tmp_path: Path, port: int) -> asyncio.subprocess.Process:
    (tmp_path / "bot.py").write_text(BOT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(ROOT)
    return await asyncio.create_subprocess_exec(
        sys.executable, "bot.py", "--port", str(port), "--token", "wrong", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def finished(proc: asyncio.subprocess.Process) -> tuple[int, list[str]]:
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, (out + err).decode().splitlines()


async def test_a_wrong_token_is_one_line_and_a_failed_exit(tmp_path: Path) -> None:
    async with ScriptedServer() as server:
        proc = await start_bot(tmp_path, server.port)
        conn = await server.accept(timeout=30)
        await conn.expect("hello")
        await conn.send(Error(ErrorCode.AUTH_FAILED, "unknown token"))
        await conn.close()
        code, lines = await finished(proc)
    assert code != 0
    assert len(lines) == 1, lines
    assert "auth_failed" in lines[0] and "unknown token" in lines[0]


async def test_an_unreachable_server_is_one_line_and_a_failed_exit(tmp_path: Path) -> None:
    async with ScriptedServer() as server:
        port = server.port  # closed again: nothing listens there
    proc = await start_bot(tmp_path, port)
    code, lines = await finished(proc)
    assert code != 0
    assert len(lines) == 1, lines
    assert f"127.0.0.1:{port}" in lines[0]
    assert "--port" in lines[0]  # what to check
