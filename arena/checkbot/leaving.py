"""The checks of how a bot says hello and how it leaves: the hello read and
judged (protocol §2), and a second run of the bot that asks it for a number
of matches (``ARENA_MAX_MATCHES``) after which it must go (protocol §7).
:mod:`arena.checkbot.checks` registers them in their place in the run."""

from __future__ import annotations

import asyncio
import time

from arena.checkbot.judging import Abort, Outcome, game_of
from arena.checkbot.link import BotLink, LinkClosed
from arena.checkbot.report import Verdict
from arena.checkbot.session import Session, short

HELLO_TIMEOUT_S = 5.0
QUIET_WINDOW_S = 0.3  # how long the bot must stay quiet after welcome / match_end
EXIT_WAIT_S = 5.0
LEAVE_WAIT_S = 2.0  # how soon after its last match_end a bot that asked for N matches leaves
SERVER_NAME = "arena-checkbot/1"
# The second run of the bot gets this in its environment; a bot that honours
# it (the Python SDK does) announces hello.max_matches and leaves after them.
MAX_MATCHES_ENV = "ARENA_MAX_MATCHES"
MAX_MATCHES_RUN = 2
MAX_MATCHES_FOLLOWED = 5


async def read_hello(s: Session, link: BotLink) -> Outcome:
    """Protocol §2: a complete hello within 5 s of connecting."""
    message = await link.receive(HELLO_TIMEOUT_S)
    if message is None:
        await link.send({"type": "error", "code": "hello_timeout", "message": "no hello within 5 s"})
        raise Abort("no hello within 5 s of connecting")
    elapsed = (time.monotonic() - link.connected_at) * 1000
    problem, code = None, "expected_hello"
    if message.get("type") != "hello":
        problem = f"the first message has type {short(message.get('type'))}, expected 'hello'"
    elif message.get("protocol") != 1 or isinstance(message.get("protocol"), bool):
        problem, code = f"hello.protocol is {short(message.get('protocol'))}, expected 1", "unsupported_protocol"
    elif message.get("token") != s.token:
        problem, code = f"hello.token is {short(message.get('token'))}, expected the ARENA_TOKEN value", "auth_failed"
    elif "name" in message and message["name"] is not None and not isinstance(message["name"], str):
        problem, code = f"hello.name is {short(message['name'])}, expected a string", "malformed"
    if problem:
        await link.send({"type": "error", "code": code, "message": problem})
        raise Abort(problem)
    wanted, said = game_of(s).name, message.get("game", "muushig")  # absent: muushig (thirteen §5.1)
    if said != wanted:
        raise Abort(f"hello.game is {short(message.get('game'))}, so a server would seat this connection at "
                    f"{short(said)} tables only; a {wanted} bot sends \"game\": \"{wanted}\" in its hello"
                    + (" (or no game at all)" if wanted == "muushig" else ""))
    if "max_matches" in message:
        value = message["max_matches"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problem = f"hello.max_matches is {short(value)}, expected a positive integer"
            await link.send({"type": "error", "code": "malformed", "message": problem})
            raise Abort(problem)
    s.declared_max_matches = message.get("max_matches")
    s.bot_name = message.get("name") or s.name
    s.encoding = str(link.encoding)
    return True, f"hello after {elapsed:.0f} ms over {link.encoding}, name {short(s.bot_name)}"


async def check_max_matches(s: Session) -> Outcome:
    """A second run with ARENA_MAX_MATCHES: a bot that announces
    hello.max_matches leaves by itself after that many matches."""
    assert s.respawn is not None, "the runner can start the bot again"
    s.process = await s.respawn({MAX_MATCHES_ENV: str(MAX_MATCHES_RUN)})
    s.link, s.bot_said_bye = None, False
    link = await s.wait_for_link(s.connect_timeout_s)
    if link is None:
        return False, (f"started again with {MAX_MATCHES_ENV}={MAX_MATCHES_RUN}, the bot did not connect "
                       f"within {s.connect_timeout_s:.0f} s")
    s.link = link
    await read_hello(s, link)
    await s.send({"type": "welcome", "protocol": 1, "bot": s.bot_name, "server": SERVER_NAME})
    declared = s.declared_max_matches
    if declared is None:
        # Optional in the protocol: such a bot stays until the server says bye,
        # so it passes; but it cannot be asked for fewer matches, hence the warning.
        await s.send({"type": "bye"})
        await link.wait_closed()
        return Verdict.WARN, (f"started with {MAX_MATCHES_ENV}={MAX_MATCHES_RUN}, the bot's hello has no "
                              "max_matches: it stays until the server says bye. Read "
                              f"{MAX_MATCHES_ENV} (or a --max-matches flag) and send it in the hello, "
                              "so that a run can ask for N matches")
    if declared > MAX_MATCHES_FOLLOWED:
        return False, (f"started with {MAX_MATCHES_ENV}={MAX_MATCHES_RUN}, the bot announced max_matches "
                       f"{declared}; the checker follows at most {MAX_MATCHES_FOLLOWED}")
    for index in range(declared):
        m = game_of(s).short_match(s.bot_name, s.deadline_ms, 1, f"check-n{index + 1}", 2)
        await s.send(m.match_start())
        ask = await s.next_ask(m)
        assert ask is not None, "a short match opens with a request"
        await s.referee([s.prepare(m, ask)])
        await s.next_ask(m)
        await s.send(m.match_end())
        if index + 1 < declared:
            quiet = await link.receive(QUIET_WINDOW_S)
            if quiet is not None:
                await s.handle(quiet)
            if s.bot_said_bye or link.closed:
                return False, f"the bot announced max_matches {declared} but left after {index + 1}"
    how = await _leave_after_max_matches(s, link)
    if how.startswith("!"):
        return False, f"after max_matches {declared} " + how[1:]
    try:
        code = await asyncio.wait_for(s.process.wait(), EXIT_WAIT_S)
    except TimeoutError:
        return False, (f"after {declared} matches {how}, but the bot was still running "
                       f"{EXIT_WAIT_S:.0f} s later")
    if code != 0:
        return False, f"after {declared} matches {how}, then the bot exited with code {code}; expected 0"
    if s.bot_said_bye:
        return True, f"max_matches {declared} announced; the bot left by itself after {declared} matches and exited 0"
    return True, (f"max_matches {declared} announced; after {declared} matches {how}, "
                  "and the bot left and exited 0")


async def _leave_after_max_matches(s: Session, link: BotLink) -> str:
    """Protocol §7: after the N-th match_end the server sends bye and closes.
    A bot may say bye first (the Python SDK does) or wait for the server's;
    both are right. Returns how it went, or '!' and the problem."""
    try:
        while not s.bot_said_bye:
            message = await link.receive(QUIET_WINDOW_S)
            if message is None:
                break
            await s.handle(message)
    except LinkClosed:
        return "!the bot closed the connection without saying bye"
    if s.bot_said_bye:
        await link.wait_closed()
        return "the bot said bye"
    # What the real server does: bye, then close.
    await s.send({"type": "bye"})
    await link.wait_closed()
    return "the checker said bye as a server does"
