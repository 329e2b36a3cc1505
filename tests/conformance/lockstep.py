"""Drive the engine and the independent reading side by side, one action at a
time, and report the first difference in anything a bot can observe:
per-seat events, who is asked what, the legal list, the default action, the
``state`` of every seat, and the final result."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from arena.games import get_game
from arena.games.base import GameError, IllegalActionError

from .independent import RANKS, SUITS, Independent, canonical, full_deck

# The `state` fields protocol §3 names; an engine may send more.
STATE_FIELDS = (
    "round", "hand", "dealer", "seat", "trump", "face_up", "cards", "scores",
    "stars", "status", "stock", "face_up_taken", "trick", "leader", "tricks",
    "played",
)


class Divergence(AssertionError):
    pass


@dataclass
class Outcome:
    steps: int = 0
    hands: int = 0
    defaults: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    phases: dict[str, int] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    seen: Counter[str] = field(default_factory=Counter)
    illegal_probes: int = 0


def make_decks(rng: random.Random, count: int, players: int = 5) -> list[list[str]]:
    decks = []
    for _ in range(count):
        deck = full_deck(players)
        rng.shuffle(deck)
        decks.append(deck)
    return decks


def _cards_in(value: Any) -> set[str]:
    if isinstance(value, str):
        is_card = len(value) == 2 and value[0] in RANKS and value[1] in SUITS
        return {value} if is_card else set()
    if isinstance(value, dict):
        return set().union(*(_cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_cards_in(v) for v in value)) if value else set()
    return set()


class PublicView:
    """What a spectator may know: the face-up card and the cards played in
    the current hand. ``for_public()`` must never show any other card."""

    def __init__(self) -> None:
        self.known: set[str] = set()

    def check(self, ev: Any) -> None:
        seen_by_all = ev.for_seat(0)
        if seen_by_all is not None and seen_by_all["kind"] == "hand_start":
            self.known = {seen_by_all["face_up"]}
        if seen_by_all is not None and seen_by_all["kind"] == "play":
            self.known.add(seen_by_all["card"])
        public = ev.for_public()
        if public is not None:
            leaked = _cards_in(public) - self.known
            if leaked:
                raise Divergence(f"for_public() of {ev.kind} shows hidden cards {sorted(leaked)}: {public!r}")


def _engine_events(events: list[Any], n: int, public: PublicView) -> list[list[dict[str, Any]]]:
    per_seat: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for ev in events:
        public.check(ev)
        for s in range(n):
            payload = ev.for_seat(s)
            if payload is not None:
                per_seat[s].append(payload)
    return per_seat


def _check(what: str, got: Any, want: Any, history: list[Any]) -> None:
    if got != want:
        tail = history[-12:]
        raise Divergence(f"{what}:\n engine      = {got!r}\n independent = {want!r}\n last actions = {tail!r}")


def play_lockstep(
    rules: dict[str, Any] | None,
    seed: int,
    *,
    default_rate: float = 0.1,
    fold_rate: float = 0.4,
    n_decks: int = 400,
    probe_rate: float = 0.0,
    impl: type[Independent] = Independent,
) -> Outcome:
    rng = random.Random(seed)
    players = int((rules or {}).get("players", 5))
    decks = make_decks(rng, n_decks, players)
    engine = get_game("muushig").new_match(rules, random.Random(seed + 1), decks)
    mine = impl(rules, decks)
    n = engine.n_seats
    _check("n_seats", n, mine.n, [])
    out = Outcome()
    history: list[Any] = []
    public = PublicView()

    def compare_events(got_events: list[Any], want: list[list[dict[str, Any]]]) -> None:
        got = _engine_events(got_events, n, public)
        for s in range(n):
            _check(f"events for seat {s}", got[s], want[s], history)
        for payload in want[0]:
            out.kinds[payload["kind"]] = out.kinds.get(payload["kind"], 0) + 1
            if payload["kind"] == "hand_end":
                out.hands += 1

    compare_events(engine.start(), mine.start())
    while not mine.finished:
        req = mine.pending
        assert req is not None
        _check("finished", engine.finished, False, history)
        _check("current_seat", engine.current_seat, req.seat, history)
        _check("phase", engine.phase, req.phase, history)
        _check("legal", engine.legal_actions(), req.legal, history)
        _check("default", engine.default_action(), mine.default(), history)
        for s in range(n):
            obs = engine.observation(s)
            got = {k: obs.get(k, "<missing>") for k in STATE_FIELDS}
            _check(f"state of seat {s}", got, mine.state(s), history)
        out.phases[req.phase] = out.phases.get(req.phase, 0) + 1
        if rng.random() < probe_rate:
            out.illegal_probes += _probe_illegal(engine, mine, rng, history)
        if rng.random() < default_rate:
            action = mine.default()
            out.defaults += 1
        elif req.phase == "decide":
            action = "fold" if rng.random() < fold_rate else "enter"
        else:
            action = rng.choice(req.legal)
        # Exchange answers are compared as sets: send them shuffled.
        if req.phase == "exchange":
            action = list(action)
            rng.shuffle(action)
        history.append((req.seat, req.phase, action))
        want = mine.act(action)
        compare_events(engine.play(action), want)
        out.steps += 1
    _check("finished at end", engine.finished, True, history)
    _check("current_seat at end", engine.current_seat, None, history)
    _check("phase at end", engine.phase, None, history)
    try:
        engine.play("fold")
    except GameError:
        pass
    else:
        raise Divergence("engine accepted an action after the match ended")
    out.seen = mine.seen
    out.result = mine.result()
    if len(set(out.result["ranks"])) < n:
        out.seen["shared_rank"] += 1
    _check("result", engine.result(), out.result, history)
    return out


def _illegal_candidates(mine: Independent, rng: random.Random) -> list[Any]:
    """Answers a bot might send that are not legal now."""
    req = mine.pending
    assert req is not None
    hand = canonical(mine.hands[req.seat])
    others = [c for c in full_deck(mine.n) if c not in hand]
    if req.phase == "decide":
        return ["pass", None, "ENTER", ["enter"], 1]
    if req.phase == "exchange":
        limit = max(len(x) for x in req.legal)
        # (A card listed twice is left out: "compared as a set" could read
        # either way, and refusing it is the engine's documented choice.)
        cands: list[Any] = [[rng.choice(others)], "7H", None, [1]]
        if limit < len(hand):
            cands.append(hand[: limit + 1])
        return cands
    if req.phase == "take":
        return [rng.choice(others), mine.face_up, [hand[0]], "", True]
    # play
    return [c for c in hand if c not in req.legal] + [rng.choice(others), None, [hand[0]]]


def _probe_illegal(engine: Any, mine: Independent, rng: random.Random, history: list[Any]) -> int:
    """Every illegal answer is refused with IllegalActionError and changes
    nothing; every legal one is accepted by ``check_action``."""
    req = mine.pending
    assert req is not None
    before = engine.observation(req.seat)
    probes = 0
    for bad in _illegal_candidates(mine, rng):
        try:
            engine.check_action(bad)
        except IllegalActionError:
            probes += 1
            continue
        raise Divergence(f"engine accepted illegal {req.phase} answer {bad!r}; legal={req.legal!r}; "
                         f"last actions={history[-8:]!r}")
    for good in req.legal:
        engine.check_action(good)
    _check("state after refused answers", engine.observation(req.seat), before, history)
    return probes
