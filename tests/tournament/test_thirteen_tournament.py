"""Tournaments of thirteen cards: the file's rules are the game's, tables have
the game's seats, house bots of the game fill them, and duplicate rotations
replay the same decks so every bot holds every hand once."""

from __future__ import annotations

import random
import tomllib
from collections import defaultdict

import pytest

from arena.games import get_game
from arena.games.thirteen.engine import ThirteenEngine
from arena.tournament.config import ConfigError, parse_config, table_seats
from arena.tournament.plan import game_plan
from arena.tournament.verify import derive_deck
from protocol.deals import KeyedDeals

KEY = bytes(range(32))


def config(text: str, entrants: int = 4):
    doc = tomllib.loads(text)
    doc["entrant"] = [{"name": f"bot{i}", "remote": True} for i in range(entrants)]
    return parse_config(doc)


def test_a_thirteen_tournament_plays_four_seat_tables_rotated_four_times():
    cfg = config('name = "cup"\ngame = "thirteen"\n', entrants=4)
    base, reserve = game_plan(cfg)
    assert reserve == [] and len(base) == 4
    assert {len(t.players) for t in base} == {4} and {t.seed for t in base} == {"0:0"}
    for bot in cfg.entrant_names:  # every bot in every seat once
        assert sorted(t.players.index(bot) for t in base) == [0, 1, 2, 3]


def test_the_players_rule_sets_the_seats_and_house_bots_of_the_game_fill_them():
    cfg = config('name = "cup"\ngame = "thirteen"\n[rules]\nplayers = 3\n', entrants=1)
    assert table_seats("thirteen", cfg.rules) == 3 and table_seats("thirteen") == 4
    base, _ = game_plan(cfg)
    assert len(base) == 3
    assert set(base[0].players) == {"bot0", "house-strong-1", "house-strong-2"}
    cfg = config('name = "cup"\ngame = "thirteen"\n[schedule]\nhouse_bot = "random"\n',
                 entrants=2)
    assert set(game_plan(cfg)[0][0].players) == {"bot0", "bot1", "house-random-1",
                                                "house-random-2"}


def play(seed: str, players: tuple[str, ...], rules: dict) -> tuple[list, dict]:
    """Play one scheduled match on keyed decks with random arrangers; return
    its decks and, per (bot, deal), the hand the bot held."""
    keyed = KeyedDeals(KEY, seed)
    engine = ThirteenEngine(rules, keyed, None)
    keyed.label_of = lambda: engine.deal_label
    arranger = get_game("thirteen").house_bots["random"](random.Random(1))
    held: dict[tuple[str, int], frozenset[str]] = {}
    engine.start()
    while not engine.finished:
        deal = engine.deal_label["deal"]
        for seat in engine.to_act:
            state = engine.observation(seat)
            held[(players[seat], deal)] = frozenset(state["cards"])
            engine.play_for(seat, arranger("arrange", engine.request_for(seat)["constraints"],
                                            state))
    return [list(d.deck) for d in engine.deals()], held


def test_duplicate_rotations_deal_the_same_decks_and_every_bot_holds_every_hand_once():
    cfg = config('name = "cup"\ngame = "thirteen"\n[rules]\ndeals = 3\n', entrants=4)
    base, _ = game_plan(cfg)
    decks, hands = [], defaultdict(list)
    for table in base:
        d, held = play(table.seed, table.players, cfg.rules)
        decks.append(d)
        for (bot, deal), cards in held.items():
            hands[(bot, deal)].append(cards)
    assert all(d == decks[0] for d in decks)  # the same three decks in every rotation
    for deal, deck in enumerate(decks[0]):
        four_hands = {frozenset(deck[s::4]) for s in range(4)}  # card i to seat i mod 4
        for bot in cfg.entrant_names:
            assert len(hands[(bot, deal)]) == 4 and set(hands[(bot, deal)]) == four_hands


def test_the_engine_names_each_deal_so_keyed_decks_follow_the_deal_number():
    keyed = KeyedDeals(KEY, "7:1")
    engine = ThirteenEngine({"deals": 3}, keyed, None)
    keyed.label_of = lambda: engine.deal_label
    engine.start()
    labels = []
    while not engine.finished:
        labels.append(engine.deal_label)
        for seat in engine.to_act:
            engine.play_for(seat, engine.default_for(seat))
    assert labels == [{"deal": 0}, {"deal": 1}, {"deal": 2}]
    for d, info in enumerate(engine.deals()):
        assert list(info.deck) == derive_deck("thirteen", None, KEY, "7:1", {"deal": d})


@pytest.mark.parametrize("rules, key, words", [
    ("players = 5", "rules.players", "integer from 2 to 4"),
    ("deals = 0", "rules.deals", "integer from 1"),
    ('foul_policy = "maybe"', "rules.foul_policy", "'penalize' or 'reject'"),
    ('wheel = "highest"', "rules.wheel", "'lowest' or 'second_highest'"),
    ("mid_full_house_bonus = 3", "rules.mid_full_house_bonus", "2 or 1"),
    ("jokers = true", "rules", "unknown thirteen rule option.*jokers"),
    ("last_two_forced = true", "rules", "unknown thirteen rule option"),
])
def test_thirteen_rules_are_checked_by_the_game_when_the_file_is_read(rules, key, words):
    with pytest.raises(ConfigError, match=words) as info:
        config(f'name = "cup"\ngame = "thirteen"\n[rules]\n{rules}\n')
    assert info.value.key == key


def test_a_house_bot_of_another_game_is_refused():
    with pytest.raises(ConfigError, match="thirteen has random, strong") as info:
        config('name = "cup"\ngame = "thirteen"\n[schedule]\nhouse_bot = "heuristic"\n')
    assert info.value.key == "schedule.house_bot"


def test_muushig_rules_are_checked_when_the_file_is_read_too():
    with pytest.raises(ConfigError, match="from 2 to 5") as info:
        config('name = "cup"\n[rules]\nplayers = 9\n')
    assert info.value.key == "rules.players"
    assert table_seats("muushig", {"players": 3}) == 3
