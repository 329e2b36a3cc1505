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

Where the time of a step goes (bench/README.md has the figures): an
observation is made only when asked (``observe``, ``last``), once per
decision, by the game's :class:`SeatFace`; the events are kept once, in
one log, and an agent's views of them are made when its ``info["events"]``
is first read (:class:`SeatEvents`); rewards are
looked at only in the events of the kinds that carry them, and PettingZoo's
reward bookkeeping runs only in the steps that had one.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, overload

import numpy as np
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


class SeatFace(Protocol):
    """How an environment reads a seat's observation out of the engine and
    applies an agent's action index."""

    def observe(self, engine: Any, seat: int, acting: bool) -> Observation:
        """``seat``'s observation now; the mask allows nothing unless
        ``acting`` (the seat owes a decision)."""
        ...

    def apply(self, engine: Any, seat: int, action: Any, mask: np.ndarray | None) -> Sequence[GameEvent]:
        """Apply ``action`` for ``seat`` (``mask``: this decision's, if made),
        or :class:`~arena.envs.codec.IllegalChoiceError` with nothing changed."""
        ...


class CodecFace:
    """Any game, through the wire request and the game's codec: what a
    protocol bot sees (``phase_for``, ``request_for``, ``observation``)."""

    def __init__(self, codec: GameCodec) -> None:
        self.codec = codec

    def observe(self, engine: Any, seat: int, acting: bool) -> Observation:
        if acting:
            return self.codec.encode(*wire_request(engine, seat))
        # Not this seat's turn: what it knows now, nothing allowed.
        return self.codec.encode("", [], engine.observation(seat))

    def apply(self, engine: Any, seat: int, action: Any, mask: np.ndarray | None) -> Sequence[GameEvent]:
        phase, legal, state = wire_request(engine, seat)
        return engine.play_for(seat, self.codec.decode(action, phase, legal, state, mask))


def wire_request(engine: Any, seat: int) -> tuple[str, Any, dict[str, Any]]:
    """The request the server sends ``seat``: (phase, legal list or
    constraints map, state)."""
    asked = engine.request_for(seat)
    legal = asked["legal"] if "legal" in asked else asked["constraints"]
    return engine.phase_for(seat), legal, engine.observation(seat)


class SeatEvents(Sequence[dict[str, Any]]):
    """``info["events"]``: the events one seat was sent, each as the server
    sends it to that seat (``for_seat``), made when first read.

    Making the views was a fifth of a Muushig step, and a learner that never
    reads them paid it all the same. An event keeps what it says (its
    fields do not change after the engine made it), so a view made later is
    the one made at once. A read-only sequence: a list of dicts when read,
    equal to that list.
    """

    __slots__ = ("_events", "_seat", "_made")

    def __init__(self, events: list[GameEvent], seat: int) -> None:
        self._events, self._seat = events, seat
        self._made: list[dict[str, Any]] | None = None

    def _views(self) -> list[dict[str, Any]]:
        made = self._made
        if made is None:
            seat = self._seat
            views = [event.for_seat(seat) for event in self._events]
            made = self._made = [v for v in views if v is not None]
            self._events = []
        return made

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._views()[index]

    def __len__(self) -> int:
        return len(self._views())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._views())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SeatEvents):
            other = other._views()
        return isinstance(other, list) and self._views() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._views())

    def __reduce__(self) -> tuple[type[list[dict[str, Any]]], tuple[list[dict[str, Any]]]]:
        # Pickled (a vector environment sends infos between processes) or
        # deep-copied as the plain list of its views: the engine's events
        # stay behind.
        return list, (self._views(),)


class ArenaAEC(AECEnv):
    """One game's matches, one after another (``reset`` deals a new one)."""

    def __init__(self, game: str, codec: Callable[[dict[str, Any]], GameCodec],
                 rules: Mapping[str, Any], *, seed: int | None = None,
                 opponents: Mapping[int, str] | None = None, render_mode: str | None = None,
                 face: Callable[[Any], SeatFace] | None = None) -> None:
        super().__init__()
        self.spec_ = get_game(game)
        # The engine checks the rules (RuleConfigError names a bad option).
        self.rules = self.spec_.new_match(dict(rules), random.Random(0), None).rules
        self.codec = codec(self.rules)
        self.face: SeatFace = CodecFace(self.codec) if face is None else face(self.codec)
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
        self._agent_of = {s: agent_name(s) for s in self.seats}
        self._reward_kinds = self.codec.reward_kinds
        self.metadata = {"name": f"arena_{game}_v0", "render_modes": ["ansi"], "is_parallelizable": False}
        self.render_mode = render_mode
        self._seed = seed
        self._rng = random.Random(seed)
        self.engine: GameEngine | None = None
        # The acting agent's observation, made once per decision (``last``
        # and ``step`` both need it); every apply forgets it.
        self._pending: tuple[str, Observation] | None = None

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
        self._rewarded = False  # a reward is in self.rewards: clear it next step
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {"events": SeatEvents([], self._seat_of[a])}
                                                 for a in self.agents}
        # Every event since the agent furthest behind last read; per agent,
        # where its unread events start.
        self._log: list[GameEvent] = []
        self._read = {a: 0 for a in self.agents}
        self.agent_selection = self.agents[0]
        self._deliver(self.engine.start())
        self._play_house_bots()
        self._select_next()

    # ------------------------------------------------- the engine's side
    def request(self, agent: str) -> tuple[str, Any, dict[str, Any]]:
        """The request the server would send ``agent`` now: (phase, legal
        list or constraints map, state)."""
        return wire_request(self._engine(), self._seat_of[agent])

    def _engine(self) -> GameEngine:
        if self.engine is None:
            raise RuntimeError("call reset() before using the environment")
        return self.engine

    def _deliver(self, events: Sequence[GameEvent]) -> None:
        """Keep ``events`` for the agents' views; rewards from those that
        carry some."""
        self._log.extend(events)
        kinds = self._reward_kinds
        for event in events:
            if event.kind in kinds:
                public = event.for_public()
                gained = self.codec.rewards(public) if public is not None else None
                if gained is not None:
                    for agent, seat in self._seat_of.items():
                        self.rewards[agent] += gained[seat]
                    self._rewarded = True

    def _views(self, agent: str) -> SeatEvents:
        """``agent``'s views of the events it has not read yet."""
        log = self._log
        start = self._read[agent]
        self._read[agent] = len(log)
        return SeatEvents(log[start:], self._seat_of[agent])

    def _play_house_bots(self) -> None:
        """Seats of house bots answer their requests, in seat order, until
        only agents owe one (in thirteen every seat owes one at once: the
        house bots answer first)."""
        house = self._house
        if not house:
            return
        engine = self._engine()
        while not engine.finished:
            acting = [s for s in engine.to_act if s in house]
            if not acting:
                return
            seat = acting[0]
            self._pending = None
            self._deliver(engine.play_for(seat, house[seat](*wire_request(engine, seat))))

    def _select_next(self) -> None:
        engine = self._engine()
        finished = engine.finished
        if finished:
            for agent in self.agents:
                self.terminations[agent] = True
            for agent in self.agents:
                self.infos[agent] = {"events": self._views(agent)}
        else:
            agent_of = self._agent_of
            for seat in engine.to_act:  # house bots have answered: an agent owes one
                if seat in agent_of:
                    turn = self.agent_selection = agent_of[seat]
                    break
            self.infos[turn] = {"events": self._views(turn)}
            log = self._log
            if len(log) > 1024:  # drop what every agent has read
                read = self._read
                done = min(read.values())
                if done > 512:
                    del log[:done]
                    for agent in read:
                        read[agent] -= done
        if self._rewarded:
            self._accumulate_rewards()
        if finished:
            self._deads_step_first()

    # -------------------------------------------------------- the API
    def observe(self, agent: str) -> Observation:
        pending = self._pending
        if pending is not None and pending[0] == agent:
            return pending[1]
        engine, seat = self._engine(), self._seat_of[agent]
        acting = seat in engine.to_act
        observation = self.face.observe(engine, seat, acting)
        if acting:
            self._pending = (agent, observation)
        return observation

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        pending = self._pending
        mask = pending[1]["action_mask"] if pending is not None and pending[0] == agent else None
        events = self.face.apply(self._engine(), self._seat_of[agent], action, mask)
        self._pending = None
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        self._deliver(events)
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
