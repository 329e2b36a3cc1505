"""Protocol §3, §5, §6 from one seat's view of whole matches.

Each test audits one clause over every recorded match (msgpack and JSON
Lines, lobby and directed seats, default rules and ``max_hands = 1``).
"""

from __future__ import annotations

import pytest

from tests.conformance_server import audit as a
from tests.conformance_server import clauses as c

VIEWS = ["lobby/msgpack", "lobby/jsonl", "directed/seat1/msgpack", "directed/seat3/jsonl",
         "max_hands=1/seat4/jsonl",
         *(f"{script}/seat{i}/{'msgpack' if i % 2 == 0 else 'jsonl'}"
           for script in ("all-fold", "forced") for i in range(5))]


@pytest.fixture(scope="session")
def audits(recordings) -> dict[str, a.Auditor]:
    assert [r.label for r in recordings] == VIEWS
    return {r.label: a.audit(r) for r in recordings}


def problems(audits, view: str, clause: str) -> list[str]:
    return audits[view].problems.get(clause, [])[:10]


@pytest.mark.parametrize("view", VIEWS)
def test_match_start_has_match_game_seat_players_rules_and_limits(audits, view):
    assert problems(audits, view, c.MATCH_START) == []


@pytest.mark.parametrize("view", VIEWS)
def test_every_match_message_carries_the_match_id(audits, view):
    assert problems(audits, view, c.MATCH_FIELD) == []


@pytest.mark.parametrize("view", VIEWS)
def test_every_event_kind_has_exactly_its_listed_fields(audits, view):
    assert problems(audits, view, c.EVENT_SHAPE) == []


@pytest.mark.parametrize("view", VIEWS)
def test_a_commit_comes_just_before_its_hands_hand_start(audits, view):
    assert problems(audits, view, c.COMMIT_ORDER) == []


@pytest.mark.parametrize("view", VIEWS)
def test_every_reveal_matches_its_commitment(audits, view):
    assert problems(audits, view, c.REVEAL) == []


@pytest.mark.parametrize("view", VIEWS)
def test_revealed_decks_reproduce_the_cards_the_seat_saw(audits, view):
    assert problems(audits, view, c.DEAL) == []


@pytest.mark.parametrize("view", VIEWS)
def test_rounds_hands_and_dealers_follow_the_rules(audits, view):
    assert problems(audits, view, c.STRUCTURE) == []


@pytest.mark.parametrize("view", VIEWS)
def test_scores_tricks_and_winners_agree_with_the_cards_played(audits, view):
    assert problems(audits, view, c.SCORES) == []


@pytest.mark.parametrize("view", VIEWS)
def test_hand_end_follows_every_hand(audits, view):
    assert problems(audits, view, c.HAND_END) == []


@pytest.mark.parametrize("view", VIEWS)
def test_a_seat_never_sees_cards_hidden_from_it(audits, view):
    assert problems(audits, view, c.PRIVACY) == []


@pytest.mark.parametrize("view", VIEWS)
def test_request_ids_are_unique_within_the_match(audits, view):
    assert problems(audits, view, c.REQUEST_IDS) == []


@pytest.mark.parametrize("view", VIEWS)
def test_legal_lists_every_answer_in_the_documented_order(audits, view):
    assert problems(audits, view, c.LEGAL) == []


@pytest.mark.parametrize("view", VIEWS)
def test_state_is_the_whole_observation(audits, view):
    assert problems(audits, view, c.STATE) == []


@pytest.mark.parametrize("view", VIEWS)
def test_deadline_ms_is_decision_ms_plus_the_bank(audits, view):
    assert problems(audits, view, c.DEADLINE) == []


@pytest.mark.parametrize("view", VIEWS)
def test_forced_decisions_are_announced_never_requested(audits, view):
    assert problems(audits, view, c.FORCED) == []


@pytest.mark.parametrize("view", VIEWS)
def test_match_end_result_agrees_with_the_rounds_seen(audits, view):
    assert problems(audits, view, c.RESULT) == []


@pytest.mark.parametrize("view", VIEWS)
def test_a_clean_match_has_no_errors_or_timeouts(audits, view):
    """Exchange answers went out in reverse order: accepted as sets."""
    assert problems(audits, view, c.CLEAN) == []


def test_the_views_covered_every_phase_and_event_kind(recordings):
    """The audits above are only as good as what the matches exercised."""
    phases = {m["phase"] for r in recordings for m in r.messages if m["type"] == "request"}
    kinds = {m["event"]["kind"] for r in recordings for m in r.messages if m["type"] == "event"}
    assert phases == {"decide", "exchange", "take", "play"}
    assert kinds >= {"round_start", "hand_start", "commit", "decision", "exchange", "take",
                     "play", "trick", "hand_end", "round_end"}
    multi = [a for r in recordings for rid, a in r.answers.items()
             if isinstance(a, list) and len(a) >= 2]
    assert multi, "no exchange of two or more cards was answered out of order"


def test_two_seats_of_one_match_see_the_same_public_events(recordings):
    alpha, beta = (r for r in recordings if r.label.startswith("directed/"))
    assert alpha.messages[0]["match"] == beta.messages[0]["match"]

    def public(rec):
        out = []
        for m in rec.messages:
            if m["type"] == "event" and m["event"]["kind"] not in ("hand_start", "exchange"):
                out.append(m["event"])
            elif m["type"] == "event" and m["event"]["kind"] == "exchange":
                out.append({k: v for k, v in m["event"].items() if k != "drawn"})
        return out

    assert public(alpha) == public(beta)
    assert alpha.messages[-1]["result"] == beta.messages[-1]["result"]
    assert alpha.messages[-1]["reveal"] == beta.messages[-1]["reveal"]


def test_short_rules_reach_match_start_and_end_each_round_after_one_hand(recordings):
    (short,) = (r for r in recordings if r.label.startswith("max_hands=1"))
    assert short.messages[0]["rules"]["max_hands"] == 1
    hands = [m["event"] for m in short.messages
             if m["type"] == "event" and m["event"]["kind"] == "hand_start"]
    assert [(h["round"], h["hand"]) for h in hands] == [(r, 0) for r in range(5)]


def test_default_rules_name_the_variants_all_off(recordings):
    rules = recordings[0].messages[0]["rules"]
    assert rules.get("max_hands") == 200
    assert not rules.get("last_two_forced") and not rules.get("trump_ace_first_lead")
    assert not rules.get("auto_enter_after_folds")
