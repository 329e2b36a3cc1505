"""Language presets: how a submitted bot is built and how it is started.

Paths inside the sandbox: the bot's files are at ``/bot`` (writable during
the build, read-only when it plays), its scratch directory is ``/tmp`` (a
small private tmpfs, also ``$HOME``), and for Python the arena's SDK is
importable (``from protocol.sdk import run_bot``).

A file ``arena-bot.toml`` at the root of the upload may override what a
preset guesses::

    lang = "command"          # python | node | c | go | command
    build = "make"            # a shell command run in /bot at build time
    run = "./mybot --fast"    # the command that plays (run in /bot)
    game = "thirteen"         # the game it plays on the ladder (default: muushig)
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.hosting.errors import BuildError

MANIFEST = "arena-bot.toml"
LANGS = ("python", "node", "c", "go", "command")


@dataclass(frozen=True)
class BotRecipe:
    """What the builder runs (``build``, may be empty) and what plays (``run``)."""

    lang: str
    build: list[list[str]]
    run: list[str]
    game: str = "muushig"
    # Set for the build steps only (the run needs none: a Go binary is the
    # program), on top of the sandbox's own few variables.
    build_env: dict[str, str] = field(default_factory=dict)


def interpreter_command(command: list[str]) -> list[str]:
    """``python``/``python3`` mean the arena's interpreter (it has the SDK's
    dependencies), as the sandbox names it; the same rule as for local bots."""
    if command and command[0] in ("python", "python3"):
        from arena.hosting.sandbox import sandbox_python

        return [sandbox_python(), *command[1:]]
    return list(command)


def _manifest(app: Path) -> dict[str, object]:
    path = app / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BuildError(f"{MANIFEST} is not valid TOML: {exc}") from None
    unknown = set(data) - {"lang", "build", "run", "entry", "game"}
    if unknown:
        raise BuildError(f"{MANIFEST}: unknown keys {sorted(unknown)}; "
                         "known: build, entry, game, lang, run")
    for key in ("lang", "build", "run", "entry", "game"):
        if key in data and not isinstance(data[key], str):
            raise BuildError(f"{MANIFEST}: {key} must be a string")
    return data


def detect_lang(app: Path) -> str:
    """Guess the language from the files (the manifest's ``lang`` wins)."""
    names = {p.name for p in app.iterdir()}
    if "go.mod" in names:
        return "go"
    if "package.json" in names or any(n.endswith((".js", ".mjs")) for n in names):
        return "node"
    if any(n.endswith(".py") for n in names):
        return "python"
    if any(n.endswith(".go") for n in names):
        return "go"
    if any(p.suffix == ".c" for p in app.rglob("*.c")):
        return "c"
    raise BuildError("cannot tell the bot's language: give --lang or an arena-bot.toml "
                     "with lang and run (see the hosting guide)")


def _pick_entry(app: Path, candidates: tuple[str, ...], suffixes: tuple[str, ...], what: str) -> str:
    for name in candidates:
        if (app / name).is_file():
            return name
    files = sorted(p.name for p in app.iterdir() if p.is_file() and p.suffix in suffixes)
    if len(files) == 1:
        return files[0]
    raise BuildError(f"cannot find the {what} entry point: name it {candidates[0]} "
                     f"or set entry in {MANIFEST} (found: {', '.join(files) or 'none'})")


def _node_dependencies(app: Path) -> bool:
    import json

    path = app / "package.json"
    if not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BuildError(f"package.json is not valid JSON: {exc}") from None
    return isinstance(data, dict) and bool(data.get("dependencies"))


def recipe_for(app: Path, lang: str | None = None) -> BotRecipe:
    """The build and run commands for the unpacked bot in ``app``."""
    manifest = _manifest(app)
    recipe = _recipe(app, manifest, lang)
    game = str(manifest.get("game") or "muushig")
    from arena.games import game_names

    if game not in game_names():
        raise BuildError(f"{MANIFEST}: unknown game {game!r}; games: {', '.join(game_names())}")
    return replace(recipe, game=game)


def _recipe(app: Path, manifest: dict[str, object], lang: str | None) -> BotRecipe:
    lang = lang or str(manifest.get("lang") or "") or detect_lang(app)
    if lang not in LANGS:
        raise BuildError(f"unknown language {lang!r}; presets: {', '.join(LANGS)}")
    build = [["sh", "-c", str(manifest["build"])]] if "build" in manifest else None
    run = shlex.split(str(manifest["run"])) if "run" in manifest else None
    entry = str(manifest["entry"]) if "entry" in manifest else None
    if lang == "python":
        entry = entry or _pick_entry(app, ("bot.py", "main.py"), (".py",), "Python")
        return BotRecipe(lang, build or [["python3", "-m", "compileall", "-q", "."]],
                         run or ["python3", "-u", entry])
    if lang == "node":
        # Builds have no network, so nothing is installed from a registry and
        # no package's lifecycle script runs: dependencies come vendored.
        if _node_dependencies(app) and not (app / "node_modules").is_dir():
            raise BuildError("package.json lists dependencies but the upload has no "
                             "node_modules: builds have no network, so vendor them (run "
                             "'npm ci --omit=dev --ignore-scripts' and upload node_modules)")
        entry = entry or _pick_entry(app, ("bot.js", "main.js", "index.js"), (".js", ".mjs"), "Node.js")
        return BotRecipe(lang, build or [], run or ["node", entry])
    if lang == "c":
        sources = sorted(str(p.relative_to(app)) for p in app.rglob("*.c"))
        if not sources and build is None:
            raise BuildError("no .c files to compile")
        return BotRecipe(lang, build or [["cc", "-O2", "-std=c11", "-o", "bot", *sources, "-lm"]],
                         run or ["./bot"])
    if lang == "go":
        return BotRecipe(lang, build or [go_build_command(app)], run or ["./bot"],
                         build_env=go_build_env(app))
    if run is None:
        raise BuildError(f"lang = \"command\" needs run = \"...\" in {MANIFEST}")
    return BotRecipe(lang, build or [], run)


def go_build_env(app: Path) -> dict[str, str]:
    """Go builds offline, with the machine's toolchain: only the standard
    library or what the upload vendored (``go mod vendor``); the caches in
    the build's own ``/tmp``; no C compiler (a static binary that needs
    nothing of the machine to run)."""
    env = {"GOPROXY": "off", "GOTOOLCHAIN": "local",
           "GOCACHE": "/tmp/go-build", "GOPATH": "/tmp/go", "GOTMPDIR": "/tmp",
           "CGO_ENABLED": "0", "GOSUMDB": "off", "GOTELEMETRY": "off"}
    if (app / "go.mod").is_file() and (app / "vendor").is_dir():
        env["GOFLAGS"] = "-mod=vendor"
    return env


_REQUIRE = re.compile(r"^\s*require\s*(\(\s*$)?", re.MULTILINE)


def _go_requires(go_mod: str) -> bool:
    """Whether ``go.mod`` requires any module (a ``require`` line, or a
    ``require ( ... )`` block with an entry in it)."""
    for match in _REQUIRE.finditer(go_mod):
        if not match.group(1):
            return True
        block = go_mod[match.end():].split(")", 1)[0]
        if any(line.split("//", 1)[0].strip() for line in block.splitlines()):
            return True
    return False


def go_build_command(app: Path) -> list[str]:
    """``go build`` of the module at the root, or of the root's ``.go``
    files when there is no ``go.mod``; the binary is ``./bot``."""
    go_mod = app / "go.mod"
    if go_mod.is_file():
        try:
            text = go_mod.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise BuildError("go.mod is not UTF-8 text") from None
        if _go_requires(text) and not (app / "vendor" / "modules.txt").is_file():
            raise BuildError("go.mod requires other modules but the upload has no vendor "
                             "folder: builds have no network, so run 'go mod vendor' and "
                             "upload the vendor folder with the code")
        return ["go", "build", "-trimpath", "-o", "bot", "."]
    files = sorted(p.name for p in app.iterdir()
                   if p.is_file() and p.suffix == ".go" and not p.name.endswith("_test.go"))
    if not files:
        raise BuildError("no go.mod and no .go files at the top of the upload")
    return ["go", "build", "-trimpath", "-o", "bot", *files]
