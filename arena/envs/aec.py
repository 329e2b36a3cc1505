"""A match of an arena game as a PettingZoo AEC environment.

The engine plays the match exactly as the server does: ``new_match(rules,
rng)`` deals from one seeded ``random.Random``, each agent's turn is the
engine's request for its seat (``phase_for``, ``request_for``,
``observation``), and its index is turned back into the wire action the
server would have received. Seats given to house bots (``opponents``) are
played inside the environment, through the same requests, and are not
agents.

``infos[agent]["events"]`` holds the events that seat was sent since its
last turn, each in the form the server sends that seat (``for_seat``):
never another seat's hidden cards.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Mapping
from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv

from arena.envs.codec import GameCodec, Observation
from arena.games import get_game
from arena.games.base import GameEngine, GameSpec, GameEvent, HouseBot, RuleConfigError


def house_bot(spec: GameSpec, name: str, rng: random.Random, rules: dict[str, Any]) -> HouseBot:
    """House bot ``name`` as the server makes it: factories that take the
    match's rules get them."""
    factory = spec.house_bots[name]
    if len(inspect.signature(factory).parameters) >= 2:
        return factory(rng, rules)
    return factory(rng)


def agent_name(seat: int) -> str:
    return f"player_{seat}"


class ArenaAEC(AECEnv):
    """One game's matches, one after another (``reset`` deals a new one)."""

    def __init__(self, game: str, codec: Callable[[dict[str, Any]], GameCodec],
                 rules: Mapping[str, Any], *, seed: int | None = None,
                 opponents: Mapping[int, str] | None = None, render_mode: str | None = None) -> None:
        super().__init__()
        self.spec_ = get_game(game)
        # The engine checks the rules (RuleConfigError names a bad option).
        self.rules = self.spec_.new_match(dict(rules), random.Random(0), None).rules
        self.codec = codec(self.rules)
        n = self.rules.get("players", self.spec_.n_seats)
        self.n_seats: int = n
        self.opponents = dict(opponents or {})
        for seat, bot in self.opponents.items():
            if not isinstance(seat, int) or not 0 <= seat < n:
                raise RuleConfigError(f"opponent seat {seat!r}: seats are 0 to {n - 1}")
            if bot not in self.spec_.house_bots:
                raise RuleConfigError(f"no {game} house bot {bot!r}; "
                                      f"known: {', '.join(sorted(self.spec_.house_bots))}")
        self.seats = [s for s in range(n) if s not in self.opponents]
        if not self.seats:
            raise RuleConfigError("every seat is a house bot: leave at least one seat to the agents")
        self.possible_agents = [agent_name(s) for s in self.seats]
        self._seat_of = {agent_name(s): s for s in self.seats}
        self.metadata = {"name": f"arena_{game}_v0", "render_modes": ["ansi"], "is_parallelizable": False}
        self.render_mode = render_mode
        self._seed = seed
        self._rng = random.Random(seed)
        self.engine: GameEngine | None = None
        self._pending: tuple[str, tuple[str, Any, dict[str, Any]], Observation] | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.codec.observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self.codec.action_space

    # ---------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)
        # One rng for the decks, one per house bot, all drawn from the env's:
        # the same seed replays the same matches.
        deck_rng = random.Random(self._rng.getrandbits(64))
        self._house: dict[int, HouseBot] = {}
        for seat, name in sorted(self.opponents.items()):
            self._house[seat] = house_bot(self.spec_, name, random.Random(self._rng.getrandbits(64)), self.rules)
        self.engine = self.spec_.new_match(self.rules, deck_rng, None)
        self._pending = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {"events": []} for a in self.agents}
        self._seen: dict[str, list[dict[str, Any]]] = {a: [] for a in self.agents}
        self.agent_selection = self.agents[0]
        self._deliver(self.engine.start())
        self._play_house_bots()
        self._select_next()

    # ------------------------------------------------- the engine's side
    def request(self, agent: str) -> tuple[str, Any, dict[str, Any]]:
        """The request the server would send ``agent`` now: (phase, legal
        list or constraints map, state)."""
        return self._pending_for(agent)[0]

    def _pending_for(self, agent: str) -> tuple[tuple[str, Any, dict[str, Any]], Observation]:
        """``agent``'s request and its encoding, made once per decision
        (``observe`` and ``step`` both need them; every apply forgets them)."""
        pending = self._pending
        if pending is not None and pending[0] == agent:
            return pending[1], pending[2]
        engine, seat = self._engine(), self._seat_of[agent]
        asked = engine.request_for(seat)
        legal = asked["legal"] if "legal" in asked else asked["constraints"]
        request = (engine.phase_for(seat), legal, engine.observation(seat))
        observation = self.codec.encode(*request)
        self._pending = (agent, request, observation)
        return request, observation

    def _engine(self) -> GameEngine:
        if self.engine is None:
            raise RuntimeError("call reset() before using the environment")
        return self.engine

    def _deliver(self, events: Any) -> None:
        """Rewards and each agent's view of ``events``."""
        rewards_of = self.codec.rewards
        for event in events:
            self._deliver_one(event, rewards_of)

    def _deliver_one(self, event: GameEvent, rewards_of: Callable[..., list[float] | None]) -> None:
        public = event.for_public()
        if public is not None:
            gained = rewards_of(public)
            if gained is not None:
                for agent, seat in self._seat_of.items():
                    self.rewards[agent] += gained[seat]
        for agent, seat in self._seat_of.items():
            seen = event.for_seat(seat)
            if seen is not None:
                self._seen[agent].append(seen)

    def _play_house_bots(self) -> None:
        """Seats of house bots answer their requests, in seat order, until
        only agents owe one (in thirteen every seat owes one at once: the
        house bots answer first)."""
        engine = self._engine()
        house = self._house
        while not engine.finished:
            acting = [s for s in engine.to_act if s in house]
            if not acting:
                return
            seat = acting[0]
            asked = engine.request_for(seat)
            legal = asked["legal"] if "legal" in asked else asked["constraints"]
            action = house[seat](engine.phase_for(seat), legal, engine.observation(seat))
            self._pending = None
            self._deliver(engine.play_for(seat, action))

    def _agent_turn(self) -> str | None:
        for seat in self._engine().to_act:
            if seat not in self._house:
                return agent_name(seat)
        return None

    def _select_next(self) -> None:
        engine = self._engine()
        if engine.finished:
            for agent in self.agents:
                self.terminations[agent] = True
            for agent in self.agents:
                self.infos[agent] = {"events": self._seen[agent]}
                self._seen[agent] = []
        else:
            turn = self._agent_turn()
            assert turn is not None  # house bots answered; an agent owes one
            self.agent_selection = turn
            self.infos[turn] = {"events": self._seen[turn]}
            self._seen[turn] = []
        self._accumulate_rewards()
        if engine.finished:
            self._deads_step_first()

    # -------------------------------------------------------- the API
    def observe(self, agent: str) -> Observation:
        seat = self._seat_of[agent]
        engine = self._engine()
        if seat in engine.to_act:
            return self._pending_for(agent)[1]
        # Not this seat's turn: what it knows now, nothing allowed.
        return self.codec.encode("", [], engine.observation(seat))

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        (phase, legal, state), observation = self._pending_for(agent)
        wire = self.codec.decode(action, phase, legal, state, observation["action_mask"])
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._pending = None
        self._deliver(self._engine().play_for(self._seat_of[agent], wire))
        self._play_house_bots()
        self._select_next()

    def render(self) -> str | None:
        engine = self.engine
        if engine is None:
            return None
        if engine.finished:
            return f"finished: {engine.result()}"
        return f"to act: {list(engine.to_act)}"

    def close(self) -> None:
        self.engine = None
