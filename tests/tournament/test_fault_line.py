"""An entrant that could not play is reported with why: the last lines it
wrote before it exited."""

from arena.tournament.runner import fault_line


def test_a_crashed_entrant_is_reported_with_the_last_lines_it_wrote():
    tail = ["Traceback (most recent call last):", '  File "bot.py", line 1', "",
            "ModuleNotFoundError: No module named 'numpy'"]
    text = fault_line("a", 3, 5, 1, tail, local=True)
    first, *rest = text.splitlines()
    assert first == ("a: 3 match(es) played by autopilot (not connected), exited 5 time(s), "
                     "last exit code 1; output: arena logs a; its last output:")
    assert rest[-1] == "  | ModuleNotFoundError: No module named 'numpy'"
    assert len(rest) == 3  # blank lines dropped


def test_a_remote_entrant_that_never_came_has_one_line():
    assert fault_line("r", 2, 0, None, [], local=False) == "r: 2 match(es) played by autopilot (not connected)"
