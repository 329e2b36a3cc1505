"""Verifiable deals: the commitment of protocol §5 and the reveal check."""

from __future__ import annotations

import hashlib

from protocol import commitment, new_salt, verify_reveal

# The worked example of protocol/README.md.
SALT = "a3f1c9e07b5d2468"
DECK = "9H,7H,9S,KS,TC,TD,JS,JD,TH,8H,QD,AC,JC,8C,JH,9C,7D,7C,TS,AS,AH,8D,7S,KD,QS,QC,KH,8S,9D,AD,QH,KC".split(",")
DIGEST = "731566df79ca3bdb617fbebd60679f89d39ffbecbcffc9967c27ce80719e5a75"


def test_commitment_is_sha256_of_salt_colon_cards_joined_by_commas():
    assert commitment(SALT, DECK) == DIGEST
    assert DIGEST == hashlib.sha256((SALT + ":" + ",".join(DECK)).encode()).hexdigest()


def test_a_different_deck_or_salt_changes_the_commitment():
    swapped = DECK[1:2] + DECK[:1] + DECK[2:]
    assert commitment(SALT, swapped) != DIGEST
    assert commitment(SALT + "0", DECK) != DIGEST


def test_salts_are_fresh():
    assert len({new_salt() for _ in range(50)}) == 50


def test_verify_reveal_accepts_honest_deals_and_names_the_bad_ones():
    commits = {(0, 0): DIGEST, (0, 1): commitment("s", DECK), (1, 0): commitment("t", DECK)}
    reveal = [
        {"round": 0, "hand": 0, "salt": SALT, "deck": DECK},
        {"round": 0, "hand": 1, "salt": "s", "deck": DECK[::-1]},
        {"round": 2, "hand": 0, "salt": "u", "deck": DECK},
        {"round": 3},
    ]
    problems = verify_reveal(commits, reveal)
    assert problems[0] == "round 0 hand 1: deck does not match its commitment"
    assert problems[1] == "round 2 hand 0: revealed but never committed"
    assert "incomplete" in problems[2]
    assert problems[3] == "round 1 hand 0: committed but not revealed"
    assert len(problems) == 4
    assert verify_reveal(commits, reveal[:1] + reveal[2:3], require_all=False) == [
        "round 0 hand 1: committed but not revealed",
        "round 1 hand 0: committed but not revealed",
    ]
    assert verify_reveal({(0, 0): DIGEST}, reveal[:1]) == []
