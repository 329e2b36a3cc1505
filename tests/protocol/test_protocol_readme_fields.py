"""The protocol page lists every field a bot meets, and the hosting guide
says how a hosted bot's command is run -- as the code does it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from protocol.messages import Hello

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "protocol" / "README.md").read_text()
HOSTING = (ROOT / "docs" / "hosting.md").read_text()


def test_the_hello_field_list_names_every_field_of_the_hello():
    section = README.split("## 3. Messages", 1)[1].split("## 4.", 1)[0]
    paragraph = section.split("**hello** —", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`([a-z_]+)`", paragraph))
    fields = {f.name for f in dataclasses.fields(Hello)}
    assert fields - listed == set()


def test_the_thirteen_request_lists_every_field_of_its_state():
    from arena.games.thirteen import ThirteenEngine

    thirteen = README.split("## 8. The thirteen-card game", 1)[1].split("\n## ", 1)[0]
    engine = ThirteenEngine({}, None, [[f"{r}{s}" for s in "HSDC" for r in "23456789TJQKA"]])
    engine.start()
    state = set(engine.observation(0))
    described = thirteen.split("`state` holds", 1)[1].split("\n\n", 1)[0]
    assert state - set(re.findall(r"`([a-z_]+)`", described)) == set()
    request = next(line for line in thirteen.splitlines() if line.startswith('{"type":"request"'))
    example_keys = set(re.findall(r'"([a-z_]+)":', request.split('"state":', 1)[1]))
    assert example_keys == state


def test_the_page_is_the_contract_and_does_not_defer_to_itself():
    opening = README.split("\n## ", 1)[0]
    assert "protocol page" not in opening
    assert "contract" in opening


def test_the_hosting_guide_says_run_is_split_like_a_shell_line_but_not_run_by_one(tmp_path):
    from arena.hosting.presets import recipe_for

    (tmp_path / "arena-bot.toml").write_text('lang = "command"\nrun = "./bot \'two words\' > out && x"\n'
                                             'build = "make"\n')
    recipe = recipe_for(tmp_path)
    assert recipe.run == ["./bot", "two words", ">", "out", "&&", "x"]  # no shell: taken literally
    assert recipe.build == [["sh", "-c", "make"]]  # the build is a shell command
    presets = " ".join(HOSTING.split("## Language presets", 1)[1].split("\n## ", 1)[0].split())
    assert "not run through a shell" in presets and "sh -c" in presets


def test_the_hosting_guide_names_the_script_that_installs_the_sandbox():
    assert "scripts/install-sandbox" in HOSTING
    assert (ROOT / "scripts" / "install-sandbox").exists()
