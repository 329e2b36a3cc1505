"""A hosted run's token and the name it reserves live as long as the run:
a long-running arena's token tables do not grow by one entry per run."""

from __future__ import annotations

from arena.hosting.builder import submit_and_build
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import Arena, needs_sandbox

pytestmark = needs_sandbox

BOT = b"from protocol.sdk import run_bot\nrun_bot(lambda phase, legal, state: legal[0])\n"


def table_sizes(arena: Arena) -> tuple[int, int, int]:
    tokens = arena.server.local_tokens
    names = tokens._names
    return len(tokens._bot_of), len(names._name_of), len(names._owner_of)


async def test_token_and_name_tables_are_empty_after_every_run(arena: Arena) -> None:
    version = await submit_and_build(arena.versions, "regular", BOT, "bot.py")  # with its start check
    assert version.status is BuildStatus.READY, arena.versions.build_log("regular", 1)
    assert table_sizes(arena) == (0, 0, 0)
    await arena.validate("regular")
    for _ in range(3):
        outcome = await arena.play("regular")
        assert outcome.aborted is None
        assert table_sizes(arena) == (0, 0, 0)
