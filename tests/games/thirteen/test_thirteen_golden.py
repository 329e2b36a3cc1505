"""Replay the thirteen-card golden playthroughs and diff them line by line."""

import difflib

import pytest

from .golden import SCRIPTS, golden_path, playthrough


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_golden_playthrough_is_unchanged(name):
    rules, seed, choosers = SCRIPTS[name]
    expected = golden_path(name).read_text(encoding="utf-8")
    actual = playthrough(rules, seed, choosers)
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "golden", "now", n=1, lineterm="")
        pytest.fail(
            f"{name} differs from its golden file (regenerate with `python -m tests.golden.regen` "
            "if the change is intended):\n" + "\n".join(list(diff)[:40])
        )
