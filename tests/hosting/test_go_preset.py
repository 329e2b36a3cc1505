"""The ``go`` preset's recipe: what it builds, with which variables, and what
it refuses before a build runs (pure: no sandbox, no Go needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.hosting.errors import BuildError
from arena.hosting.presets import LANGS, recipe_for


def upload(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


MAIN = "package main\n\nfunc main() {}\n"


def test_a_go_module_is_recognised_and_built_into_bot(tmp_path: Path) -> None:
    app = upload(tmp_path, {"go.mod": "module example.org/b\n\ngo 1.19\n", "main.go": MAIN,
                            "helper.py": "print('a script beside the bot')\n"})
    recipe = recipe_for(app)
    assert recipe.lang == "go"
    assert recipe.build == [["go", "build", "-trimpath", "-o", "bot", "."]]
    assert recipe.run == ["./bot"]


def test_without_go_mod_the_top_level_go_files_are_built_but_not_tests(tmp_path: Path) -> None:
    app = upload(tmp_path, {"main.go": MAIN, "play.go": "package main\n",
                            "play_test.go": "package main\n"})
    recipe = recipe_for(app)
    assert recipe.lang == "go"
    assert recipe.build == [["go", "build", "-trimpath", "-o", "bot", "main.go", "play.go"]]


def test_go_builds_offline_with_the_machines_toolchain_and_no_c(tmp_path: Path) -> None:
    env = recipe_for(upload(tmp_path, {"main.go": MAIN})).build_env
    assert env["GOPROXY"] == "off" and env["GOTOOLCHAIN"] == "local"
    assert env["CGO_ENABLED"] == "0"
    assert env["GOCACHE"].startswith("/tmp/") and env["GOPATH"].startswith("/tmp/")
    assert "GOFLAGS" not in env


def test_a_vendor_folder_is_used(tmp_path: Path) -> None:
    app = upload(tmp_path, {"go.mod": "module m\n\ngo 1.19\n\nrequire example.org/lib v1.0.0\n",
                            "main.go": MAIN, "vendor/modules.txt": "# example.org/lib v1.0.0\n"})
    assert recipe_for(app).build_env["GOFLAGS"] == "-mod=vendor"


@pytest.mark.parametrize("go_mod", [
    "module m\n\ngo 1.19\n\nrequire example.org/lib v1.0.0\n",
    "module m\n\ngo 1.19\n\nrequire (\n\texample.org/lib v1.0.0 // indirect\n)\n",
])
def test_required_modules_without_a_vendor_folder_are_refused_before_building(
        tmp_path: Path, go_mod: str) -> None:
    app = upload(tmp_path, {"go.mod": go_mod, "main.go": MAIN})
    with pytest.raises(BuildError, match="go mod vendor"):
        recipe_for(app)


def test_an_empty_require_block_needs_no_vendor_folder(tmp_path: Path) -> None:
    app = upload(tmp_path, {"go.mod": "module m\n\ngo 1.19\n\nrequire (\n\t// none yet\n)\n",
                            "main.go": MAIN})
    assert recipe_for(app).lang == "go"


def test_a_manifest_build_still_gets_the_offline_variables(tmp_path: Path) -> None:
    app = upload(tmp_path, {"main.go": MAIN, "arena-bot.toml":
                            'lang = "go"\nbuild = "go build -o mybot ."\nrun = "./mybot"\n'})
    recipe = recipe_for(app)
    assert recipe.build == [["sh", "-c", "go build -o mybot ."]] and recipe.run == ["./mybot"]
    assert recipe.build_env["GOPROXY"] == "off"


def test_go_is_a_preset_the_cli_and_the_api_offer() -> None:
    from arena.cli import _parser

    assert "go" in LANGS
    args = _parser().parse_args(["bots", "submit", "b", "b.tar.gz", "--lang", "go"])
    assert args.lang == "go"
