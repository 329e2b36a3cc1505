"""The compliance checks, in the order they run.

Each check is a small async function of the :class:`Session` returning
``(passed, message)``; the message says what was expected and what the bot
did. A check that loses the connection ends the run: the checks after it
are reported as not run.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable

from arena.checkbot import checks_thirteen
from arena.checkbot.hand import Phase
from arena.checkbot.judging import Abort, Outcome, game_of, judge, strays_since
from arena.checkbot.leaving import (EXIT_WAIT_S, QUIET_WINDOW_S, SERVER_NAME, check_max_matches,
                                    read_hello)
from arena.checkbot.link import LinkClosed
from arena.checkbot.report import Verdict
from arena.checkbot.session import Session, short


CheckFn = Callable[[Session], Awaitable[Outcome]]
BOTH = ("muushig", "thirteen")
MUUSHIG = ("muushig",)
THIRTEEN = ("thirteen",)
# (name, games it runs in, function), in the order they run.
CHECKS: list[tuple[str, tuple[str, ...], CheckFn]] = []


def check(name: str, games: tuple[str, ...] = BOTH) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        CHECKS.append((name, games, fn))
        return fn
    return register


@check("hello")
async def check_hello(s: Session) -> Outcome:
    link = await s.wait_for_link(s.connect_timeout_s)
    if link is None:
        if s.process.returncode is not None:
            raise Abort(f"the bot exited with code {s.process.returncode} without connecting")
        raise Abort(f"the bot did not connect within {s.connect_timeout_s:.0f} s "
                    "(it should read ARENA_HOST and ARENA_PORT)")
    s.link = link
    return await read_hello(s, link)


@check("welcome")
async def check_welcome(s: Session) -> Outcome:
    await s.send({"type": "welcome", "protocol": 1, "bot": s.bot_name, "server": SERVER_NAME})
    message = await s.need_link().receive(QUIET_WINDOW_S)
    if message is not None:
        return False, f"after welcome the bot sent {short(message)}; it should wait for the server"
    return True, "welcome accepted: the bot stayed connected and waited"


@check("match_start")
async def check_match_start(s: Session) -> Outcome:
    game = game_of(s)
    s.match_a = match = game.main_match(s.bot_name, s.deadline_ms)
    await s.send(match.match_start())
    ask = await s.next_ask(match)
    assert ask is not None and ask.phase is game.first_phase, f"match A opens with a {game.first_phase} request"
    mark = len(s.notes)
    s.first_request = p = s.prepare(match, ask)
    await s.referee([p])
    if not p.answers:
        also = f"; it {strays_since(s, mark)}" if s.notes[mark:] else ""
        return False, (f"after match_start and the opening events ({game.opening}) "
                       f"the bot did not answer request #{p.id}{also}")
    if s.notes[mark:]:
        return False, f"the bot answered, but it also {strays_since(s, mark)}"
    return True, "match_start and the opening events accepted; the bot answered the next request"


@check("decide", MUUSHIG)
async def check_decide(s: Session) -> Outcome:
    assert s.first_request is not None
    return judge(s.first_request)


@check("exchange", MUUSHIG)
async def check_exchange(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    ask = await s.drive_to(match, Phase.EXCHANGE)
    assert ask is not None, "match A always reaches an exchange"
    p = s.prepare(match, ask)
    await s.referee([p])
    ok, message = judge(p)
    most = max(len(option) for option in ask.legal)
    return ok, f"{message} (hand of {len(ask.state['cards'])}, up to {most} discards allowed)"


@check("take", MUUSHIG)
async def check_take(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    ask = await s.drive_to(match, Phase.TAKE)
    assert ask is not None, "match A always reaches the bot's take"
    p = s.prepare(match, ask)
    await s.referee([p])
    return judge(p)


@check("play", MUUSHIG)
async def check_play(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    ask = await s.drive_to(match, Phase.PLAY)
    assert ask is not None, "match A always reaches a play"
    s.play_request = p = s.prepare(match, ask, reject_first=True)
    await s.referee([p])
    ok, message = judge(p)
    if ok:
        message += "; the checker then rejected it with illegal_action on purpose"
    return ok, message


check("arrange", THIRTEEN)(checks_thirteen.check_arrange)
check("illegal_action", THIRTEEN)(checks_thirteen.check_arrange_again)


@check("deadline")
async def check_deadline(s: Session) -> Outcome:
    late = [p for p in s.requests if not p.answered_in_time]
    if late:
        return False, "no answer within deadline_ms to " + ", ".join(p.label for p in late[:3])
    slowest = max(p.first_latency_ms or 0.0 for p in s.requests)
    return True, f"{len(s.requests)} requests answered within deadline_ms ({s.deadline_ms} ms); slowest {slowest:.0f} ms"


@check("illegal_action", MUUSHIG)
async def check_illegal_action(s: Session) -> Outcome:
    p = s.play_request
    assert p is not None
    if not p.answers:
        return False, f"not tested: the bot never answered {p.label}"
    retries = p.answers[1:]
    if not retries:
        return False, (f"after an illegal_action error on its first answer (the checker rejects it on purpose, "
                       f"even though it was legal) the bot did not answer again within {p.deadline_ms} ms")
    if not retries[0].legal:
        return False, f"after the illegal_action error the bot answered {short(retries[0].action)}, which is not legal"
    return True, (f"after an illegal_action error (the first answer was rejected on purpose) the bot answered "
                  f"again with {short(retries[0].action)} (legal) in {retries[0].latency_ms:.0f} ms")


@check("unknown_fields")
async def check_unknown_fields(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    mark = len(s.notes)
    # Things a newer server may send: an event kind this bot does not know,
    # unknown fields everywhere, and a stray "late" notice.
    await s.send({"type": "event", "match": match.match_id, "x_future": [1, {"a": None}],
                  "event": {"kind": "x_commentary", "text": "n\u00e9w \u2665", "seat": 0}})
    await s.send({"type": "error", "code": "late", "id": 1, "message": "request 1 was already settled"})
    ask = await s.drive_to(match, game_of(s).phase)
    assert ask is not None, "match A has a request left"
    ask.state["x_future_state"] = {"nested": [True, False, None, 1.5]}
    p = s.prepare(match, ask, extra={"x_hint": "ignore me", "x_number": 2**40})
    await s.referee([p])
    ok, message = judge(p)
    if ok and s.notes[mark:]:
        return False, f"the bot answered, but it also {strays_since(s, mark)}"
    return ok, "after an unknown event kind, unknown fields and an error notice: " + message


@check("multiplex")
async def check_multiplex(s: Session) -> Outcome:
    a = s.match_a
    assert a is not None
    b = game_of(s).short_match(s.bot_name, s.deadline_ms, a.next_id, "check-b", None)
    await s.send(b.match_start())
    ask_b = await s.next_ask(b)
    ask_a = await s.drive_to(a, game_of(s).phase)
    assert ask_a is not None and ask_b is not None, "both matches have a request ready"
    pa, pb = s.prepare(a, ask_a), s.prepare(b, ask_b)
    await s.referee([pa, pb])
    await s.next_ask(b)  # sends match B's last events; B stops here
    await s.send(b.match_end())
    results = [(p, judge(p)) for p in (pa, pb)]
    ok = all(r[0] for _, r in results)
    detail = "; ".join(f"{p.match.match_id} #{p.id} ({p.ask.phase}): {r[1]}" for p, r in results)
    return ok, f"two open requests with the same id in two matches: {detail}"


@check("error_names_match")
async def check_error_names_match(s: Session) -> Outcome:
    """Request ids repeat across matches; an error's ``match`` says which."""
    c = game_of(s).short_match(s.bot_name, s.deadline_ms, 50, "check-c", None)
    d = game_of(s).short_match(s.bot_name, s.deadline_ms, 50, "check-d", None)
    await s.send(c.match_start())
    await s.send(d.match_start())
    ask_c, ask_d = await s.next_ask(c), await s.next_ask(d)
    assert ask_c is not None and ask_d is not None, "both matches open with a request"
    mark = len(s.notes)
    pc, pd = s.prepare(c, ask_c), s.prepare(d, ask_d, reject_first=True)
    await s.referee([pc, pd])
    for match in (c, d):
        await s.next_ask(match)
        await s.send(match.match_end())
    if not pd.answers:
        return False, f"no answer to {pd.label}"
    for p in (pc, pd):
        ok, message = judge(p)
        if not ok:
            return False, message
    if s.notes[mark:]:
        return False, (f"after an illegal_action error naming match {d.match_id} (request #{pd.id}; match "
                       f"{c.match_id} has a request #{pc.id} too) the bot {strays_since(s, mark)}")
    if len(pd.answers) < 2 and not game_of(s).retry_required:
        return True, (f"after an illegal_action error naming match {d.match_id} (request #{pd.id}; match "
                      f"{c.match_id} has a request #{pc.id} too) the bot sent nothing stray (it did not "
                      f"resubmit: see illegal_action)")
    if len(pd.answers) < 2:
        return False, (f"after an illegal_action error naming match {d.match_id} request #{pd.id}, the bot did "
                       f"not answer that request again (match {c.match_id} has a request #{pc.id} too)")
    if not pd.answers[1].legal:
        return False, f"the answer again to {pd.label} was {short(pd.answers[1].action)}, which is not legal"
    return True, (f"an illegal_action error naming match {d.match_id} was applied to that match's "
                  f"request #{pd.id}, not to #{pc.id} of {c.match_id}")


@check("short_deadline")
async def check_short_deadline(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    ask = await s.drive_to(match, game_of(s).phase)
    assert ask is not None, "match A has a request left"
    p = s.prepare(match, ask, deadline_ms=s.short_deadline_ms)
    await s.referee([p])
    ok, message = judge(p)
    return ok, f"deadline_ms {s.short_deadline_ms}: {message}"


@check("reconnect")
async def check_reconnect(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    ask = await s.next_ask(match)
    assert ask is not None, "match A has a request left"
    old = s.need_link()
    await old.wait_closed()
    closed_at = time.monotonic()
    s.link = None
    link = await s.wait_for_link(s.connect_timeout_s)
    if link is None:
        raise Abort(f"the checker closed the connection mid-match; the bot did not reconnect within "
                    f"{s.connect_timeout_s:.0f} s" + (f" (it exited with code {s.process.returncode})"
                                                       if s.process.returncode is not None else ""))
    s.link = link
    await read_hello(s, link)
    after = (time.monotonic() - closed_at) * 1000
    await s.send({"type": "welcome", "protocol": 1, "bot": s.bot_name, "server": SERVER_NAME})
    await s.send(match.match_start())
    p = s.prepare(match, ask)
    await s.referee([p])
    ok, message = judge(p)
    return ok, f"reconnected with a valid hello {after:.0f} ms after the drop; pending {ask.phase}: {message}"


@check("match_end")
async def check_match_end(s: Session) -> Outcome:
    match = s.match_a
    assert match is not None
    while (ask := await s.next_ask(match)) is not None:
        await s.referee([s.prepare(match, ask)])
    await s.send(match.match_end())
    link = s.need_link()
    mark = len(s.notes)
    try:
        message = await link.receive(QUIET_WINDOW_S)
    except LinkClosed:
        return True, "match_end (result and reveal) accepted; the bot then closed the connection"
    if message is None:
        return True, "match_end (result and reveal) accepted; the bot stayed connected"
    await s.handle(message)
    if s.bot_said_bye:
        return True, "match_end (result and reveal) accepted; the bot then said bye"
    return False, f"after match_end the bot {strays_since(s, mark)}"


@check("reseat")
async def check_reseat(s: Session) -> Outcome:
    """After match_end a server seats the connection again (unless the
    bot's hello asked for fewer matches)."""
    if s.link is None or s.link.closed or s.bot_said_bye:
        return False, ("the bot left after match_end; a server seats a connection again with a second "
                       "match_start (send hello.max_matches to ask for fewer matches)")
    e = game_of(s).short_match(s.bot_name, s.deadline_ms, 1, "check-e", 3)
    await s.send(e.match_start())
    ask = await s.next_ask(e)
    assert ask is not None, "match E opens with a request"
    mark = len(s.notes)
    p = s.prepare(e, ask)
    await s.referee([p])
    await s.next_ask(e)
    # Sealed, as in a duplicate tournament: the reveal follows (deferred_reveal).
    s.sealed_end = e.match_end()
    await s.send({**s.sealed_end, "reveal": [], "reveal_deferred": True})
    ok, message = judge(p)
    if ok and s.notes[mark:]:
        return False, f"in a second match_start on the same connection the bot {strays_since(s, mark)}"
    return ok, f"a second match_start on the same connection ({e.match_id}, ids from 1 again): {message}"


@check("deferred_reveal")
async def check_deferred_reveal(s: Session) -> Outcome:
    """Protocol §6: the ``reveal`` of a match that ended sealed, sent later
    outside any match; the bot takes it without a word and stays."""
    end, link = s.sealed_end, s.link
    if end is None or link is None or link.closed or s.bot_said_bye:
        return False, "no connection left to send a deferred reveal to (see reseat)"
    mark = len(s.notes)
    await s.send({"type": "reveal", "match": end["match"], "reveal": end["reveal"], "events": []})
    try:
        message = await link.receive(QUIET_WINDOW_S)
    except LinkClosed:
        return False, "the bot closed the connection on a deferred reveal message"
    if message is not None:
        await s.handle(message)
        return False, f"after a deferred reveal the bot {strays_since(s, mark)}"
    return True, f"a deferred reveal of {end['match']} (after its sealed match_end) accepted"


@check("bye")
async def check_bye(s: Session) -> Outcome:
    if s.link is not None and not s.link.closed:
        await s.send({"type": "bye"})
        await s.link.wait_closed()
    sent = time.monotonic()
    try:
        code = await asyncio.wait_for(s.process.wait(), EXIT_WAIT_S)
    except TimeoutError:
        return False, f"the bot was still running {EXIT_WAIT_S:.0f} s after bye; it should exit"
    took = (time.monotonic() - sent) * 1000
    if code != 0:
        return False, f"the bot exited with code {code} after bye; expected 0"
    return True, f"the bot exited with code 0, {took:.0f} ms after bye"


check("max_matches")(check_max_matches)
check("fouls", THIRTEEN)(checks_thirteen.check_fouls)


@check("all_answers")
async def check_all_answers(s: Session) -> Outcome:
    bad = []
    for p in s.requests:
        refused_on_purpose = p.reject_first and p.answers and p.answers[0].own
        if p.timed_out and refused_on_purpose and not game_of(s).retry_required:
            continue  # a valid answer the checker refused; resubmitting is optional (see illegal_action)
        if p.answers and not p.answers[0].legal:
            why = f": {p.answers[0].reason}" if p.ask.constraints is not None else ""
            bad.append(f"{p.label}: first answer {short(p.answers[0].action)} not legal{why}")
        elif p.timed_out:
            bad.append(f"{p.label}: no legal answer in time")
        elif p.answers and p.answers[0].fallback is not None:
            bad.append(f"{p.label}: {p.answers[0].describe_fallback()}")
    bad.extend(s.notes)
    if bad:
        return False, f"{len(bad)} problem(s): " + "; ".join(bad[:4])
    slowest = max((p.first_latency_ms or 0.0 for p in s.requests), default=0.0)
    return True, f"all {len(s.requests)} requests answered legally in time; slowest {slowest:.0f} ms"


def names(game: str = "muushig") -> list[str]:
    return [name for name, games, _ in CHECKS if game in games]


async def run_checks(s: Session) -> list[tuple[str, Verdict, str]]:
    """Run every check in order; after an abort the rest are 'not run'."""
    results: list[tuple[str, Verdict, str]] = []
    for name, games, fn in CHECKS:
        if game_of(s).name not in games:
            continue
        if s.aborted is not None:
            results.append((name, Verdict.FAIL, f"not run: {s.aborted}"))
            continue
        try:
            async with asyncio.timeout(s.check_timeout_s):
                ok, message = await fn(s)
        except TimeoutError:
            s.aborted = f"the check '{name}' did not finish within {s.check_timeout_s:g} s"
            ok, message = False, f"did not finish within {s.check_timeout_s:g} s (--check-timeout)"
        except Abort as exc:
            s.aborted = str(exc)
            ok, message = False, str(exc)
        except LinkClosed as exc:
            s.aborted = f"the connection was lost during '{name}' ({exc})"
            ok, message = False, s.aborted
        verdict = ok if isinstance(ok, Verdict) else (Verdict.PASS if ok else Verdict.FAIL)
        results.append((name, verdict, message))
    return results
