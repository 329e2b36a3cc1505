"""Protocol §3 "Forced decisions are never requested", under the variant
rules that force seats other than the dealer (rules page, *Variants*)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conformance_server.conftest import directed, joined
from tests.conformance_server.wire import ENCODINGS, SpecBot


def hands(bot: SpecBot) -> list[dict[str, Any]]:
    """Per hand: dealer, decisions (in order), and whether this seat was asked."""
    out: list[dict[str, Any]] = []
    for m in bot.seen:
        if m["type"] == "event" and m["event"]["kind"] == "hand_start":
            out.append({"round": m["event"]["round"], "dealer": m["event"]["dealer"],
                        "decisions": [], "asked": False})
        elif m["type"] == "event" and m["event"]["kind"] == "decision":
            out[-1]["decisions"].append(m["event"])
        elif m["type"] == "request" and m["phase"] == "decide":
            out[-1]["asked"] = True
    return out


async def all_fold_match(make_server, rules: dict[str, Any]) -> list[SpecBot]:
    server = await make_server(matchmaking=False, decision_ms=5000)
    names = [f"folder{i}" for i in range(5)]
    async with directed(server, list(names), seed="variants", rules=rules):
        bots = [await joined(server.port, name, ENCODINGS[i % 2]) for i, name in enumerate(names)]
        starts = await asyncio.gather(*(b.until(lambda m: m["type"] == "match_start") for b in bots))
        assert all(s["rules"] == {**s["rules"], **rules} for s in starts)
        await asyncio.gather(*(b.play_to_end(lambda r: "fold" if r["phase"] == "decide"
                                             else r["legal"][0]) for b in bots))
    return bots


def check_own_forced_flags(bots: list[SpecBot]) -> None:
    for seat, bot in enumerate(bots):
        for hand in hands(bot):
            own = [d for d in hand["decisions"] if d["seat"] == seat]
            if own:
                assert own[0]["forced"] != hand["asked"], (seat, hand)
            else:
                assert not hand["asked"], (seat, hand)


async def test_last_two_forced_seats_are_announced_not_asked(make_server):
    bots = await all_fold_match(make_server, {"last_two_forced": True, "max_hands": 6})
    check_own_forced_flags(bots)
    for hand in hands(bots[0]):
        d = hand["dealer"]
        got = [(e["seat"], e["choice"], e["forced"]) for e in hand["decisions"]]
        assert got == [((d + 1) % 5, "fold", False), ((d + 2) % 5, "fold", False),
                       ((d + 3) % 5, "fold", False), ((d + 4) % 5, "enter", True),
                       (d, "enter", True)], got


async def test_auto_enter_after_three_folds_is_announced_not_asked(make_server):
    bots = await all_fold_match(make_server, {"auto_enter_after_folds": 3, "max_hands": 8})
    check_own_forced_flags(bots)
    forced_seen = 0
    streak = [0] * 5
    current_round = -1
    for hand in hands(bots[0]):
        if hand["round"] != current_round:
            current_round, streak = hand["round"], [0] * 5
        entered_nondealer = 0
        for e in hand["decisions"]:
            seat = e["seat"]
            must = streak[seat] >= 3 or (seat == hand["dealer"] and entered_nondealer == 1)
            assert e["forced"] == must, (hand, e, streak)
            if must:
                assert e["choice"] == "enter"
                forced_seen += 1
            if e["choice"] == "enter" and seat != hand["dealer"]:
                entered_nondealer += 1
            streak[seat] = streak[seat] + 1 if e["choice"] == "fold" else 0
        if not any(e["seat"] == hand["dealer"] for e in hand["decisions"]):
            streak[hand["dealer"]] = 0  # took 5 tricks unasked: not a fold
    assert forced_seen > 0
