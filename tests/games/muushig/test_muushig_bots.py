"""House bots: legal answers from the observation alone; heuristic ≫ random."""

import random

from arena.games.muushig import SPEC, MuushigEngine


def play_match(seed: int, bots) -> dict:
    engine = MuushigEngine(None, random.Random(seed))
    engine.start()
    while not engine.finished:
        seat = engine.current_seat
        legal = engine.legal_actions()
        action = bots[seat](engine.phase, legal, engine.observation(seat))
        engine.check_action(action)  # a house bot never answers illegally
        engine.play(action)
    return engine.result()


def test_spec_registers_both_house_bots():
    assert SPEC.name == "muushig" and SPEC.n_seats == 5
    assert set(SPEC.house_bots) == {"random", "heuristic"} and SPEC.default_house_bot == "heuristic"
    bot = SPEC.house_bots["heuristic"](random.Random(0))
    engine = SPEC.new_match(None, random.Random(1), None)
    engine.start()
    assert bot(engine.phase, engine.legal_actions(), engine.observation(engine.current_seat)) in ("enter", "fold")


def test_heuristic_wins_clearly_more_stars_than_random():
    heuristic_seats = {0, 3}
    stars = [0] * 5
    for m in range(30):
        bots = [
            SPEC.house_bots["heuristic" if s in heuristic_seats else "random"](random.Random(m * 5 + s))
            for s in range(5)
        ]
        for s, n in enumerate(play_match(m, bots)["stars"]):
            stars[s] += n
    h = sum(stars[s] for s in heuristic_seats) / len(heuristic_seats)
    r = sum(stars[s] for s in range(5) if s not in heuristic_seats) / 3
    # 150 rounds; by chance each seat would win about 30
    assert h > 3 * r and h > 45, stars


def test_heuristic_plays_a_whole_match_against_itself():
    bots = [SPEC.house_bots["heuristic"](random.Random(s)) for s in range(5)]
    result = play_match(3, bots)
    assert sum(result["stars"]) == 5
