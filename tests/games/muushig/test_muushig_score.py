"""Rules §8–§9: scores, the end of a round, stars and places."""

from arena.games.muushig.views import rank_places

from .helpers import act, engine_with, of_kind, set_scores, table

# Seat 2 takes tricks 1-4 with hearts; seat 1 trumps the fifth with 7C;
# seat 3 never takes a trick.
HANDS = {1: "7H 8H 9H TH 7C", 2: "AH KH QH JH 8S", 3: "7D 8D 9D TD JD"}
PLAY = ["7H", "AH", "7D", "KH", "8D", "8H", "QH", "9D", "9H", "JH", "TD", "TH", "8S", "JD", "7C"]


def test_muushig_plus_five_for_an_entered_seat_without_a_trick():
    engine, _ = table(HANDS, face_up="9C", entered={1, 2, 3})
    events = act(engine, *PLAY)
    assert [t["winner"] for t in of_kind(events, "trick")] == [2, 2, 2, 2, 1]
    assert of_kind(events, "hand_end") == [
        {"kind": "hand_end", "tricks": [0, 1, 4, 0, 0], "muushig": [3], "scores": [15, 14, 11, 20, 15]}
    ]
    # Folded seats 0 and 4 took no trick but get no +5.


def test_round_ending_on_the_fifth_trick_gives_no_muushig():
    engine, _ = table(HANDS, face_up="9C", entered={1, 2, 3})
    set_scores(engine, [15, 1, 15, 15, 15])
    events = act(engine, *PLAY)
    assert of_kind(events, "hand_end") == [
        {"kind": "hand_end", "tricks": [0, 1, 4, 0, 0], "muushig": [], "scores": [15, 0, 11, 15, 15]}
    ]
    assert of_kind(events, "round_end") == [
        {"kind": "round_end", "round": 0, "winner": 1, "scores": [15, 0, 11, 15, 15]}
    ]
    assert of_kind(events, "round_start")[0]["round"] == 1


def test_round_ends_mid_hand_the_moment_a_score_reaches_zero():
    engine, _ = table(HANDS, face_up="9C", entered={1, 2, 3})
    set_scores(engine, [15, 15, 1, 15, 15])
    events = act(engine, "7H", "AH", "7D")
    assert [e.kind for e in events] == [
        "play", "play", "play", "trick", "hand_end", "round_end", "round_start", "deal", "hand_start",
    ]
    assert of_kind(events, "hand_end")[0] == {
        "kind": "hand_end", "tricks": [0, 0, 1, 0, 0], "muushig": [], "scores": [15, 15, 0, 15, 15]
    }
    assert of_kind(events, "round_end")[0]["winner"] == 2
    assert engine.observation(0)["stars"] == [0, 0, 1, 0, 0]
    assert engine.observation(0)["round"] == 1 and engine.observation(0)["dealer"] == 1


def test_hand_bound_ends_the_round_and_ties_go_to_the_lower_seat():
    engine, events = engine_with([], {"max_hands": 2}, seed=1)
    events += act(engine, "fold", "fold", "fold", "fold")  # hand 0: dealer 0 takes 5
    events += act(engine, "fold", "fold", "fold", "fold")  # hand 1: dealer 1 takes 5
    assert len(of_kind(events, "hand_end")) == 2
    assert of_kind(events, "round_end") == [
        {"kind": "round_end", "round": 0, "winner": 0, "scores": [10, 10, 15, 15, 15]}
    ]


def test_places_are_shared_as_in_sport():
    assert rank_places([2, 2, 1, 0, 0], [30, 30, 10, 5, 5]) == [1, 1, 3, 4, 4]
    assert rank_places([1, 1, 1, 1, 1], [50, 40, 60, 40, 70]) == [3, 1, 4, 1, 5]
    assert rank_places([0, 3, 1, 1, 0], [9, 9, 9, 9, 9]) == [4, 1, 2, 2, 4]


def test_match_result_stars_sums_and_shared_places():
    engine, _ = engine_with([], {"max_hands": 2}, seed=9)
    while not engine.finished:
        act(engine, engine.default_action())  # everyone folds: dealers take 5
    result = engine.result()
    assert result["stars"] == [2, 1, 1, 1, 0]
    assert result["final_scores"][0] == [10, 15, 15, 15, 10]
    assert result["sums"] == [65] * 5
    assert result["ranks"] == [1, 2, 2, 2, 5]


def test_a_one_hand_bound_gives_everyone_a_star_and_first_place():
    engine, _ = engine_with([], {"max_hands": 1}, seed=2)
    while not engine.finished:
        act(engine, "fold")
    assert engine.result()["stars"] == [1] * 5 and engine.result()["ranks"] == [1] * 5
    assert engine.current_seat is None and engine.phase is None and engine.legal_actions() == []
