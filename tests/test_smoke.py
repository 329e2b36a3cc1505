from arena.games import UnknownGameError, get_game, game_names


def test_unknown_game_is_a_clear_error():
    try:
        get_game("chess")
    except UnknownGameError as exc:
        assert "muushig" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected UnknownGameError")


def test_registry_lists_muushig():
    assert "muushig" in game_names()
