"""The checker's thirteen-card matches are what the arena would send
(protocol thirteen §5), and its referee reads arrangements as the arena does."""

from __future__ import annotations

import re
from typing import Any

from arena.checkbot.hand import Ask, Phase, Tell
from arena.checkbot.thirteen import ThirteenMatch, match_a, match_b
from arena.games.thirteen.cards import CARD_INDEX
from arena.games.thirteen.rules import ThirteenRules
from arena.games.thirteen.scoring import score_deal
from arena.games.thirteen.wire import check_arrangement, seat_hands
from protocol.deals import deal_key, verify_reveal

CARD = re.compile(r"^[2-9TJQKA][HSDC]$")


def play_through(match: ThirteenMatch, answer=None) -> list[Tell | Ask]:
    """Every step of the match, answering each request with ``answer(ask)``
    (default: the server's own arrangement)."""
    steps: list[Tell | Ask] = []
    while (step := match.next_step()) is not None:
        steps.append(step)
        if isinstance(step, Ask):
            steps.extend(step.followups)
            verdict = match.assess(step, (answer or match.default)(step))
            assert verdict.legal, verdict.reason
            match.settle(verdict.applied)
    return steps


def events(steps: list[Tell | Ask], kind: str) -> list[dict[str, Any]]:
    return [s.event for s in steps if isinstance(s, Tell) and s.event["kind"] == kind]


def cards_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def test_match_start_names_the_game_and_carries_every_rule_flag():
    start = match_a("bot", 2000).match_start()
    assert start["game"] == "thirteen"
    assert set(start["rules"]) == set(ThirteenRules.__dataclass_fields__)
    assert start["rules"]["foul_policy"] == "penalize" and start["rules"]["mid_full_house_bonus"] == 2
    other = match_b("bot", 2000, first_id=1).match_start()["rules"]
    assert other["foul_policy"] == "reject" and other["wheel"] == "second_highest"
    assert other["shoot"] == "double" and other["mid_full_house_bonus"] == 1


def test_each_deal_is_commit_deal_start_request_arranged_showdown():
    match = match_a("bot", 2000)
    kinds = []
    for step in play_through(match):
        kinds.append("request" if isinstance(step, Ask) else step.event["kind"])
    deal = ["commit", "deal_start", "request", "arranged", "arranged", "arranged", "arranged", "showdown"]
    assert kinds == deal * 6
    assert [c["deal"] for c in events(play_through(match_a("bot", 2000)), "commit")] == list(range(6))


def test_the_request_has_constraints_and_no_legal_list():
    match = match_a("bot", 2000)
    ask = next(s for s in iter(match.next_step, None) if isinstance(s, Ask))
    request = match.request(ask, 1, 2000)
    assert request["phase"] == "arrange" and "legal" not in request
    assert request["constraints"] == {"front": 3, "middle": 5, "back": 5}
    state = request["state"]
    assert {"deal", "deals", "seat", "cards", "totals"} <= set(state)
    assert state["seat"] == 1 and state["deals"] == 6 and len(state["cards"]) == 13


def test_no_message_before_a_showdown_shows_another_seats_cards():
    steps = play_through(match_a("bot", 2000))
    own: set[str] = set()
    for step in steps:
        payload = step.state if isinstance(step, Ask) else step.event
        if isinstance(step, Tell) and step.event["kind"] == "deal_start":
            own = set(step.event["cards"])
        if isinstance(step, Tell) and step.event["kind"] == "showdown":
            continue
        assert cards_in(payload) <= own, payload


def test_showdowns_are_the_engines_scores_antisymmetric_and_summing_to_the_totals():
    match = match_a("bot", 2000)
    steps = play_through(match)
    rules = match.engine.options
    totals = [0] * 4
    for show in events(steps, "showdown"):
        hands = []
        for row in show["arrangements"]:
            cards = tuple(CARD_INDEX[c] for c in row["front"] + row["middle"] + row["back"])
            hands.append(seat_hands(check_arrangement(row, cards, rules.wheel, reject_fouls=False), rules.wheel))
        score = score_deal(hands, shoot=rules.shoot, mid_full_house_bonus=rules.mid_full_house_bonus)
        assert show["pairs"] == [list(r) for r in score.pairs]
        assert show["scores"] == list(score.scores) == [sum(r) for r in show["pairs"]]
        assert all(show["pairs"][i][j] == -show["pairs"][j][i] for i in range(4) for j in range(4))
        totals = [t + s for t, s in zip(totals, show["scores"])]
        assert show["totals"] == totals
    end = match.match_end()
    assert end["result"]["totals"] == totals == match.engine.result()["totals"]
    assert end["result"] == match.engine.result()


def test_the_reveal_opens_every_commitment():
    match = match_a("bot", 2000)
    steps = play_through(match)
    commits = {deal_key(c): c["commitment"] for c in events(steps, "commit")}
    reveal = match.match_end()["reveal"]
    assert [r["deal"] for r in reveal] == list(range(6)) and all(len(r["deck"]) == 52 for r in reveal)
    assert verify_reveal(commits, reveal) == []


def test_a_short_match_can_seat_fewer_players():
    match = match_b("bot", 2000, first_id=1, match_id="check-e", players=3)
    steps = play_through(match)
    show = events(steps, "showdown")[0]
    assert match.seat == 2 and len(show["scores"]) == 3 and len(show["pairs"]) == 3
    assert match.match_end()["result"]["ranks"] == match.engine.result()["ranks"]


def first_ask(match: ThirteenMatch) -> Ask:
    return next(s for s in iter(match.next_step, None) if isinstance(s, Ask))


def good_answer(match: ThirteenMatch, ask: Ask) -> dict[str, list[str]]:
    return match.default(ask)


def test_wrong_sizes_foreign_cards_and_duplicates_are_refused_with_the_reason():
    match = match_a("bot", 2000)
    ask = first_ask(match)
    good = good_answer(match, ask)
    stranger = next(c for c in CARD_INDEX if c not in ask.state["cards"])
    cases = {
        "front must hold 3 cards, not 2": {**good, "front": good["front"][:2]},
        "not a card in your hand": {**good, "back": [*good["back"][:4], stranger]},
        "card listed twice": {**good, "back": [*good["back"][:4], good["front"][0]]},
        "no middle": {"front": good["front"], "back": good["back"]},
        "malformed card": {**good, "front": [*good["front"][:2], "1X"]},
    }
    for reason, action in cases.items():
        verdict = match.assess(ask, action)
        assert not verdict.legal and reason in verdict.reason, (reason, verdict)
    assert match.assess(ask, good).legal and not match.assess(ask, good).warning


def fouled(match: ThirteenMatch, ask: Ask) -> dict[str, list[str]]:
    good = good_answer(match, ask)
    # The back (the strongest row) and the middle swapped: a foul unless they tie.
    swapped = {"front": good["front"], "middle": good["back"], "back": good["middle"]}
    assert match.assess(ask, swapped).warning or match.reject_fouls
    return swapped


def test_a_foul_is_accepted_with_a_warning_under_penalize():
    match = match_a("bot", 2000)
    ask = first_ask(match)
    verdict = match.assess(ask, fouled(match, ask))
    assert verdict.legal and verdict.warning.startswith("fouled")


def test_a_foul_is_refused_under_reject():
    match = match_b("bot", 2000, first_id=1)
    ask = first_ask(match)
    verdict = match.assess(ask, fouled(match, ask))
    assert not verdict.legal and verdict.reason.startswith("fouled")


def test_the_default_at_the_deadline_is_a_valid_unfouled_arrangement():
    for match in (match_a("bot", 2000), match_b("bot", 2000, first_id=1)):
        ask = first_ask(match)
        verdict = match.assess(ask, match.default(ask))
        assert verdict.legal and not verdict.warning
        assert ask.phase is Phase.ARRANGE
