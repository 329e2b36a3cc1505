"""The server writes its messages from the types of ``protocol.messages``,
one place per message (the types' ``to_wire``), never as literal dicts."""

from __future__ import annotations

import ast
from pathlib import Path

from protocol.messages import Bye, Error, MatchEnd, MatchStart, Request, Welcome

SERVER = Path(__file__).resolve().parents[2] / "arena" / "server"
TYPED = {cls.type for cls in (Welcome, Error, Request, MatchStart, MatchEnd, Bye)}


def literal_messages(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if (isinstance(key, ast.Constant) and key.value == "type"
                        and isinstance(value, ast.Constant) and value.value in TYPED):
                    found.append(f"{path.name}:{node.lineno}: a literal {value.value!r} message")
    return found


def test_no_server_module_writes_a_typed_message_as_a_literal_dict() -> None:
    assert [line for path in sorted(SERVER.glob("*.py")) for line in literal_messages(path)] == []
