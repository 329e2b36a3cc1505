"""Every sample bot passes the compliance checker, and the non-Python ones
survive what the checker does not script: escaped strings, big frames and
``--max-matches``."""

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.checkbot import check_bot
from protocol.codec import Decoder, Encoding, encode

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"


def _build(folder: str, tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed, so the {folder} sample bot cannot be built")
    subprocess.run([str(BOTS / folder / "build")], check=True, timeout=300)


@pytest.fixture(scope="module")
def js_bot() -> list[str]:
    _build("js_msgpack", "npm")
    return ["node", str(BOTS / "js_msgpack" / "bot.js")]


@pytest.fixture(scope="module")
def c_bot() -> list[str]:
    _build("c_jsonl", "gcc")
    return [str(BOTS / "c_jsonl" / "bot")]


def _python_bot(folder: str) -> list[str]:
    path = BOTS / folder / "bot.py"
    if not path.exists():
        pytest.skip(f"{path.name} in {folder} is not written yet")
    return [sys.executable, str(path)]


@pytest.mark.parametrize("bot", ["js", "c", "python_random", "python_heuristic"])
async def test_the_sample_bot_passes_every_check(bot, request):
    command = {"js": lambda: request.getfixturevalue("js_bot"), "c": lambda: request.getfixturevalue("c_bot")}.get(
        bot, lambda: _python_bot(f"sample_bots/{bot}".split("/")[-1])
    )()
    report = await check_bot(command, timeout_s=20)
    assert report.failed_names() == [] and report.warned_names() == [], report.render(symbols=False)
    assert report.encoding == {"js": "msgpack", "c": "jsonl"}.get(bot, report.encoding)


# A match id full of JSON escapes: a bot must send it back byte for byte.
ODD_MATCH = 'm-\u00e9\U0001f0a1"\\/\t-x'


async def _scripted_server(command: list[str], encoding: Encoding) -> tuple[dict, list[dict], int]:
    """Serve one tiny match by hand; return the bot's answer, what it sent
    after match_end, and its exit code."""
    accepted: asyncio.Queue = asyncio.Queue()
    server = await asyncio.start_server(lambda r, w: accepted.put_nowait((r, w)), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    env = dict(os.environ, ARENA_HOST="127.0.0.1", ARENA_PORT=str(port), ARENA_TOKEN="t0k", ARENA_NAME="odd")
    process = await asyncio.create_subprocess_exec(*command, "--max-matches", "1", env=env,
                                                   stdout=asyncio.subprocess.DEVNULL,
                                                   stderr=asyncio.subprocess.DEVNULL)
    try:
        reader, writer = await asyncio.wait_for(accepted.get(), 20)
        decoder = Decoder.for_server()

        async def receive() -> dict:
            while True:
                for message in decoder:
                    return message
                chunk = await asyncio.wait_for(reader.read(65536), 10)
                assert chunk, "the bot closed the connection"
                decoder.receive_data(chunk)

        def send(message: dict) -> None:
            if encoding is Encoding.JSONL:
                # ensure_ascii: every non-ASCII character travels as \\uXXXX
                writer.write(json.dumps(message, ensure_ascii=True).encode() + b"\n")
            else:
                writer.write(encode(message, encoding))

        hello = await receive()
        assert hello["token"] == "t0k" and decoder.encoding is encoding
        send({"type": "welcome", "protocol": 1, "bot": "odd", "server": "test"})
        send({"type": "match_start", "match": ODD_MATCH, "game": "muushig", "seat": 0,
              "players": ["odd", "a", "b", "c", "d"], "rules": {}, "limits": {"decision_ms": 1000, "bank_ms": 0}})
        # Close to the 1 MiB a server line may hold, sent in pieces.
        big = {"type": "event", "match": ODD_MATCH, "event": {"kind": "x_big", "blob": "\u00e9" * 150_000}}
        send(big)
        state = {"round": 0, "hand": 0, "dealer": 4, "seat": 0, "trump": "S", "face_up": "9S",
                 "cards": ["7H", "KH", "8S", "QD", "AC"], "scores": [15] * 5, "stars": [0] * 5,
                 "status": ["waiting"] * 5, "stock": 6, "face_up_taken": False, "trick": [], "leader": None,
                 "tricks": [0] * 5, "played": []}
        send({"type": "request", "match": ODD_MATCH, "id": 41, "phase": "decide", "deadline_ms": 2000,
              "legal": ["enter", "fold"], "state": state})
        await writer.drain()
        answer = await receive()
        send({"type": "match_end", "match": ODD_MATCH, "result": {"stars": [0] * 5, "final_scores": [[15]] * 5,
              "sums": [15] * 5, "ranks": [1] * 5}, "reveal": []})
        await writer.drain()
        after = []
        while True:
            try:
                after.append(await receive())
            except AssertionError:
                break
        code = await asyncio.wait_for(process.wait(), 10)
        writer.close()
        return answer, after, code
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("bot,encoding", [("js", Encoding.MSGPACK), ("c", Encoding.JSONL)])
async def test_escaped_ids_big_frames_and_max_matches(bot, encoding, request):
    command = request.getfixturevalue(f"{bot}_bot")
    answer, after, code = await _scripted_server(command, encoding)
    assert answer["type"] == "action" and answer["match"] == ODD_MATCH and answer["id"] == 41
    assert answer["action"] in ("enter", "fold")
    assert after == [{"type": "bye"}], "after its last match the bot says bye"
    assert code == 0
