"""A policy of the environments, playing on a server as a protocol bot.

A policy is a function of an environment observation (the dict
``{"observation": features, "action_mask": mask}`` that ``env.last()``
gives) returning an action index. :func:`policy_strategy` wraps it as an
SDK strategy ``(phase, legal, state) -> action``: each request is encoded
by the same codec the environment uses, from the same three things (the
environment reads them from the engine, the SDK from the wire), so the
policy gets the arrays it was trained on, and its index is turned into
the wire action. ::

    from arena.envs.policy_bot import run_policy

    run_policy("muushig", my_policy)            # --host --port --token, like run_bot

The codec is built from the rules the policy was trained with (keywords,
as for ``env()``); a match whose ``match_start.rules`` differ is played
anyway, with a warning in the log, since features are scaled by them
(and thirteen's candidates depend on ``wheel`` and
``mid_full_house_bonus``). An index the mask forbids or a policy that
raises is handled as the SDK handles any strategy: the arena's default is
sent and the fallback counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from arena.envs.codec import GameCodec, Observation
from arena.envs.muushig_codec import MuushigCodec
from arena.envs.thirteen_codec import DEFAULT_CANDIDATES, ThirteenCodec
from arena.games import get_game
from protocol.sdk import BotClient, MatchInfo, run_bot

Policy = Callable[[Observation], int]

log = structlog.get_logger("arena.envs")


def make_codec(game: str, rules: dict[str, Any] | None = None, *,
               candidates: int = DEFAULT_CANDIDATES) -> GameCodec:
    """The codec an environment of ``game`` with these rule options uses."""
    if game == "muushig":
        return MuushigCodec(rules)
    if game == "thirteen":
        return ThirteenCodec(rules, candidates)
    get_game(game)  # UnknownGameError for a name no game has
    raise ValueError(f"no environment for the game {game!r}")


class PolicyBot:
    """``strategy`` for the SDK and ``on_match_start`` to check each match's
    game and rules against the ones the policy was trained with."""

    def __init__(self, game: str, policy: Policy, *, candidates: int = DEFAULT_CANDIDATES,
                 **rules: Any) -> None:
        self.game = game
        self.policy = policy
        self.codec = make_codec(game, rules, candidates=candidates)
        # Every rule as the engine resolves it: what match_start.rules carries.
        self.rules = dict(get_game(game).new_match(rules, None, None).rules)

    def strategy(self, phase: str, legal: Any, state: dict[str, Any]) -> Any:
        observation = self.codec.encode(phase, legal, state)
        return self.codec.decode(self.policy(observation), phase, legal, state)

    def on_match_start(self, info: MatchInfo) -> None:
        if info.game and info.game != self.game:
            log.warning("a policy for another game: the SDK will answer with defaults",
                        policy_game=self.game, match_game=info.game, match=info.match)
        elif info.rules and dict(info.rules) != self.rules:
            log.warning("the match's rules differ from the policy's", match=info.match,
                        policy_rules=self.rules, match_rules=dict(info.rules))


def policy_strategy(game: str, policy: Policy, *, candidates: int = DEFAULT_CANDIDATES,
                    **rules: Any) -> Callable[[str, Any, dict[str, Any]], Any]:
    """The SDK strategy that plays ``policy``."""
    return PolicyBot(game, policy, candidates=candidates, **rules).strategy


def run_policy(game: str, policy: Policy, *, rules: dict[str, Any] | None = None,
               candidates: int = DEFAULT_CANDIDATES, **run_bot_options: Any) -> BotClient:
    """Connect ``policy`` to a server and play until it says bye (blocking);
    ``run_bot_options`` as for :func:`protocol.sdk.run_bot` (host, port,
    token, name, max_matches, ...)."""
    bot = PolicyBot(game, policy, candidates=candidates, **(rules or {}))
    run_bot_options.setdefault("on_match_start", bot.on_match_start)
    run_bot_options.setdefault("game", game)  # hello.game: wait at this game's tables
    return run_bot(bot.strategy, **run_bot_options)
