"""A policy of the environments plays on a real server through the SDK, and
makes there exactly the choices it makes offline."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

from arena.envs.policy_bot import PolicyBot, run_policy  # noqa: E402
from arena.games import get_game  # noqa: E402
from arena.server.matches import PlayerSpec  # noqa: E402
from protocol.sdk import BotClient  # noqa: E402


def last_allowed(observation) -> int:
    # Not the arena's default (fold, keep, decline, lowest card; the best
    # arrangement): a fallback by the SDK would show in the record.
    return int(np.flatnonzero(observation["action_mask"])[-1])


async def _play(server, game: str, rules: dict, house: str, seats: int) -> tuple[BotClient, object, PolicyBot]:
    bot = PolicyBot(game, last_allowed, **rules)
    client = BotClient("127.0.0.1", server.port, "tok", "policy", bot.strategy,
                       on_match_start=bot.on_match_start, max_matches=1, reconnect=False, game=game)
    players = [PlayerSpec(f"house-{i}", house=house) for i in range(seats - 1)]
    players.insert(1, PlayerSpec("policy"))
    running = asyncio.ensure_future(client.run())
    try:
        async with asyncio.timeout(120):
            outcome = await server.play_match(players, rules=rules, game=game, claim_timeout_s=60)
            await running
    finally:
        running.cancel()
    await server.writer.flush()
    return client, outcome, bot


def _check_choices(server, outcome, bot: PolicyBot, game: str) -> int:
    """Replays the stored match; at each of the policy's seat's decisions,
    the policy given the offline encoding of that request chose the action
    the server recorded."""
    record = server.store.get_match(outcome.match_id)
    seat = record.players.index("policy")
    spec = get_game(game)
    log = [e.data for e in server.store.get_events(record.id)]
    decks, steps = spec.replay_inputs(log)
    engine = spec.new_match(record.rules, None, decks)
    engine.start()
    checked = 0
    for who, action in steps:
        acting = engine.current_seat if who is None else who
        if acting == seat:
            asked = engine.request_for(seat)
            legal = asked.get("legal", asked.get("constraints"))
            phase, state = engine.phase_for(seat), engine.observation(seat)
            offline = bot.codec.decode(last_allowed(bot.codec.encode(phase, legal, state)), phase, legal, state)
            assert offline == action
            checked += 1
        engine.play_for(acting, action)
    assert engine.result() == record.result
    return checked


async def test_a_muushig_policy_plays_a_match_on_a_server(make_server):
    server = await make_server(decision_ms=5000)
    rules = {"max_hands": 30}
    client, outcome, bot = await _play(server, "muushig", rules, "heuristic", 5)
    assert outcome.result is not None, outcome.aborted
    assert client.matches_played == 1 and client.fallbacks == 0
    assert _check_choices(server, outcome, bot, "muushig") > 10


async def test_a_thirteen_policy_plays_a_match_on_a_server(make_server):
    server = await make_server(decision_ms=5000)
    rules = {"deals": 3, "wheel": "second_highest"}
    client, outcome, bot = await _play(server, "thirteen", rules, "strong", 4)
    assert outcome.result is not None, outcome.aborted
    assert client.matches_played == 1
    assert _check_choices(server, outcome, bot, "thirteen") == 3
    # The bot answered each deal itself (a seat left to the server's
    # default would have no latency for that deal).
    record = server.store.get_match(outcome.match_id)
    assert len(record.latency_ms[record.players.index("policy")]) == 3


async def test_run_policy_connects_like_run_bot_and_says_which_game(make_server):
    server = await make_server(decision_ms=5000)
    rules = {"deals": 1, "players": 2}
    players = [PlayerSpec("policy"), PlayerSpec("house-0", house="random")]
    running = asyncio.ensure_future(asyncio.to_thread(
        run_policy, "thirteen", last_allowed, rules=rules, host="127.0.0.1", port=server.port,
        token="tok", name="policy", max_matches=1, argv=[], reconnect=False))
    async with asyncio.timeout(120):
        outcome = await server.play_match(players, rules=rules, game="thirteen", claim_timeout_s=60)
        client = await running
    assert outcome.result is not None, outcome.aborted
    assert client.matches_played == 1 and client.fallbacks == 0
