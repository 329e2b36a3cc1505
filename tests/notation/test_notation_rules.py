"""The reader and the replay, rule by rule, on one short stored match of
each game: what each kind of broken file is told, and on which line."""

from __future__ import annotations

import pytest

from arena.dataset import notation_of
from arena.notation import NotationError, parse_notation, replay_notation
from arena.storage.sqlite import SqliteStore

from .matches import detail, play, store_match


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> dict[str, str]:
    store = SqliteStore(tmp_path_factory.mktemp("rules") / "arena.db")
    try:
        out = {}
        for game, rules in (("muushig", {"players": 3, "max_hands": 4}),
                            ("thirteen", {"players": 2, "deals": 2})):
            out[game] = notation_of(detail(store, store_match(store, play(game, rules, 3),
                                                              match_id=game)))
        return out
    finally:
        store.close()


def rejected(text: str) -> NotationError:
    with pytest.raises(NotationError) as caught:
        replay_notation(parse_notation(text))
    return caught.value


def first(text: str, keyword: str) -> int:
    """0-based index of the first line starting with ``keyword``."""
    return next(i for i, line in enumerate(text.split("\n")) if line.startswith(keyword))


def edit(text: str, index: int, new: str) -> str:
    lines = text.split("\n")
    lines[index] = new
    return "\n".join(lines)


def test_a_written_match_is_valid(texts) -> None:
    for game, text in texts.items():
        assert replay_notation(parse_notation(text)).summary().startswith(f"valid: {game}")


def test_a_file_must_start_with_the_format_line(texts) -> None:
    assert rejected("hello\n" + texts["muushig"]).line == 1


def test_an_unknown_line_is_named(texts) -> None:
    text = texts["muushig"]
    i = first(text, "play ")
    err = rejected(edit(text, i, "lead 1 AS"))
    assert err.line == i + 1 and "'lead' is no muushig line" in err.reason


def test_a_badly_spelt_card_is_named(texts) -> None:
    text = texts["muushig"]
    i = first(text, "play ")
    seat = text.split("\n")[i].split(" ")[1]
    err = rejected(edit(text, i, f"play {seat} 1S"))
    assert err.line == i + 1 and "is not a card" in err.reason


def test_a_card_the_seat_does_not_hold_is_refused_at_its_line(texts) -> None:
    text = texts["muushig"]
    i = first(text, "play ")
    line = text.split("\n")[i]
    hands = text.split("\n")[first(text, "hand ")].split(" hands ")[1]
    absent = next(c for c in (r + s for s in "HSDC" for r in "789TJQKA") if c not in hands)
    err = rejected(edit(text, i, line.rsplit(" ", 1)[0] + " " + absent))
    assert err.line == i + 1 and "may not do this" in err.reason


def test_a_seat_acting_out_of_turn_is_refused(texts) -> None:
    text = texts["muushig"]
    i = first(text, "play ")
    _, seat, card = text.split("\n")[i].split(" ")
    other = (int(seat) + 1) % 3
    err = rejected(edit(text, i, f"play {other} {card}"))
    assert err.line == i + 1 and f"seat {other} acts" in err.reason


def test_a_deck_without_its_salt_cannot_be_checked(texts) -> None:
    text = texts["thirteen"]
    i = first(text, "Salt deal=0")
    deal = first(text, "deal 0 ") - 1  # the line shifts up by one
    err = rejected("\n".join(line for n, line in enumerate(text.split("\n")) if n != i))
    assert err.line == deal + 1 and "no Salt header" in err.reason


def test_a_changed_salt_breaks_the_commitment_at_the_deal(texts) -> None:
    text = texts["thirteen"]
    i = first(text, "Salt deal=1")
    err = rejected(edit(text, i, "Salt deal=1: " + "0" * 32))
    assert err.line == first(text, "deal 1 ") + 1 and "not the one committed" in err.reason


def test_a_changed_result_is_refused_at_the_result_header(texts) -> None:
    text = texts["thirteen"]
    i = first(text, "Result: ")
    err = rejected(edit(text, i, 'Result: {"ranks":[1,2],"totals":[0,0]}'))
    assert err.line == i + 1 and "the engine's result is" in err.reason


def test_a_file_cut_short_ends_before_the_match(texts) -> None:
    text = texts["thirteen"]
    lines = text.rstrip("\n").split("\n")
    err = rejected("\n".join(lines[:-1]))
    assert err.line == len(lines) - 1


def test_a_line_that_is_not_what_the_engine_did_is_named(texts) -> None:
    text = texts["muushig"]
    i = first(text, "trick ")
    line = text.split("\n")[i]
    head, scores = line.split(" scores ")
    err = rejected(edit(text, i, head + " scores " + ",".join("9" for _ in scores.split(","))))
    assert err.line == i + 1 and "the engine's next line is: trick" in err.reason


def test_rules_must_be_given_in_full(texts) -> None:
    text = texts["thirteen"]
    i = first(text, "Rules: ")
    err = rejected(edit(text, i, 'Rules: {"players":2,"deals":2}'))
    assert err.line == i + 1 and "in full" in err.reason
