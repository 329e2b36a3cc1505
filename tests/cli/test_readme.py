"""The README's first lines leave the user with an ``arena`` to type."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_first_commands_install_and_then_put_arena_on_the_path():
    text = (ROOT / "README.md").read_text()
    first_block = text.split("\n    ", 1)[1].split("\n\n", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert commands[:3] == ["scripts/demo", "source .venv/bin/activate", "arena --help"]
    assert (ROOT / ".venv/bin/activate").exists() or (ROOT / "scripts/demo").read_text().count("-m venv .venv")


def test_the_demo_says_how_to_get_arena_on_the_path():
    assert "source .venv/bin/activate" in (ROOT / "scripts/demo").read_text()
