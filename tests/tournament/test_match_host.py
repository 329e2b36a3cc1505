"""The tournament code plays through its own small interface, ``MatchHost``,
which the arena server satisfies; it never reaches into the server's parts."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.sqlite import SqliteStore
from arena.tournament.host import MatchHost

TOURNAMENT = Path(__file__).resolve().parents[2] / "arena" / "tournament"
SERVER_PARTS = {"lobby", "tables", "_tasks", "_connections"}


def host_members() -> set[str]:
    names = set(MatchHost.__annotations__)
    names.update(n for n, v in vars(MatchHost).items()
                 if not n.startswith("_") and inspect.isfunction(v))
    return names


def test_the_arena_server_has_every_member_a_match_host_needs() -> None:
    store = SqliteStore(":memory:")
    try:
        server = ArenaServer(ServerConfig(port=0, http_port=None, db=":memory:"), store)
        assert {name for name in host_members() if not hasattr(server, name)} == set()
    finally:
        store.close()


def test_no_tournament_module_reaches_into_the_servers_parts() -> None:
    reaching = []
    for path in sorted(TOURNAMENT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in SERVER_PARTS \
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "server":
                reaching.append(f"{path.name}:{node.lineno}: server.{node.attr}")
    assert reaching == []
