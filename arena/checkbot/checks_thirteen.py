"""The checks of the thirteen-card game's own phase (protocol thirteen §5.4).

``checks`` registers them in their place in the run; the game-neutral
checks (deadline, multiplexing, reconnecting...) run for this game too.
"""

from __future__ import annotations

from arena.checkbot.hand import Phase
from arena.checkbot.judging import Outcome, judge
from arena.checkbot.report import Verdict
from arena.checkbot.session import Session, short

FOUL_PREFIX = "fouled"  # how the engine's refusal of a fouled arrangement begins


async def check_arrange(s: Session) -> Outcome:
    """The first arrangement: 3/5/5 of the seat's own 13 cards, none twice."""
    assert s.first_request is not None
    p = s.first_request
    ok, message = judge(p)
    if ok:
        message += " — 3, 5 and 5 of its own 13 cards, none twice"
    return ok, message


async def check_arrange_again(s: Session) -> Outcome:
    """After ``illegal_action`` the request stays open: a bot may send
    another arrangement until its deadline, else the server plays its own."""
    match = s.match_a
    assert match is not None
    ask = await s.drive_to(match, Phase.ARRANGE)
    assert ask is not None, "match A has a deal left"
    p = s.prepare(match, ask, reject_first=True)
    await s.referee([p])
    if not p.answers:
        return False, f"not tested: the bot never answered {p.label}"
    first = p.answers[0]
    if not first.legal:
        return judge(p)
    retries = p.answers[1:]
    if not retries:
        return Verdict.WARN, (
            f"after an illegal_action error (the checker refused its valid arrangement on purpose) the bot "
            f"did not answer again within {p.deadline_ms} ms, so the server's own arrangement was played; "
            f"the request stays open after illegal_action: send a valid arrangement again to keep your own")
    again = retries[0]
    if not again.legal:
        return False, f"after the illegal_action error the bot answered {short(again.action, 120)}, refused: {again.reason}"
    return True, (f"after an illegal_action error (its first arrangement was refused on purpose) the bot "
                  f"answered again with a valid arrangement in {again.latency_ms:.0f} ms")


async def check_fouls(s: Session) -> Outcome:
    """A fouled arrangement is refused under ``foul_policy = reject`` (a
    failure: the answer was not valid) and costs every segment under
    ``penalize`` (a warning: valid, but it loses points)."""
    arranged = [p for p in s.requests if p.ask.phase is Phase.ARRANGE]
    refused = [(p, a) for p in arranged for a in p.answers if not a.legal and a.reason.startswith(FOUL_PREFIX)]
    if refused:
        p, a = refused[0]
        return False, (f"{len(refused)} fouled arrangement(s) sent under foul_policy = reject, e.g. to {p.label}: "
                       f"{a.reason}")
    penalized = [(p, a) for p in arranged for a in p.answers if a.legal and a.warning]
    if penalized:
        p, a = penalized[0]
        return Verdict.WARN, (f"{len(penalized)} fouled arrangement(s) under foul_policy = penalize (accepted, "
                              f"but a fouled seat loses all three segments to every other seat), e.g. to "
                              f"{p.label}: {a.warning.removeprefix(FOUL_PREFIX + ': ')}")
    return True, f"none of the {sum(len(p.answers) for p in arranged)} arrangements sent was fouled"
