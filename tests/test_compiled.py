"""The per-decision modules: compiled by the install, or run as source.

``setup.py`` compiles the modules it names with mypyc; a failed build
leaves the sources in charge, and ``ARENA_PURE_PYTHON=1`` makes a compiled
install import the sources (``arena.pure``). Both paths must play the
same matches, in one pytest run (as aiohttp tests its C and Python
parsers behind one switch): the whole suite runs on the install as built,
and :func:`test_the_sources_pass` runs the Muushig rules, server and
golden tests on the sources too, one subprocess per directory (a process
imports either path, never both: compiled classes call each other
directly). On a pure-Python install the whole run is on the sources
already, and says so by a skip. ``ARENA_REQUIRE_COMPILED=1`` (as in CI)
makes a missing build a failure here instead of a skip.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import arena.pure

ROOT = Path(__file__).resolve().parent.parent


def hot_modules() -> list[str]:
    """The module names ``setup.py`` compiles (read from its source)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "HOT_MODULES":
            paths = ast.literal_eval(node.value)
            return sorted(p.removesuffix(".py").replace("/", ".") for p in paths)
    raise AssertionError("setup.py names no HOT_MODULES")


def _loaded_compiled(env: dict[str, str]) -> list[str]:
    code = ("import json, importlib, arena.pure\n"
            f"for name in {hot_modules()!r}: importlib.import_module(name)\n"
            "import arena.server.server\n"
            "print(json.dumps(arena.pure.compiled_modules()))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=60).stdout
    return json.loads(out)


def _built() -> bool:
    return bool(arena.pure.builds())


def _as_built() -> dict[str, str]:
    """This environment without ``ARENA_PURE_PYTHON``: the install as built runs."""
    return {k: v for k, v in os.environ.items() if k != arena.pure.ENV}


def test_every_hot_module_runs_compiled_on_a_compiled_install():
    if not _built():
        if os.environ.get("ARENA_REQUIRE_COMPILED") == "1":
            pytest.fail("no compiled build of the hot modules (pip install -e . compiles them)")
        pytest.skip("this install is pure Python (ARENA_PURE_PYTHON=1 or no compiler)")
    env = _as_built()
    assert _loaded_compiled(env) == hot_modules()


def test_no_python_class_derives_from_a_compiled_one():
    """Making an instance of a Python class that derives from a compiled
    one fails ("interpreted classes cannot inherit from compiled"; compiled
    exceptions excepted): every arena module is imported in a fresh
    interpreter, and each class of the modules that run as source with a
    compiled base must make an instance."""
    code = ("import importlib, inspect, json, pkgutil, arena, arena.pure\n"
            "names = [m.name for m in pkgutil.walk_packages(arena.__path__, 'arena.')\n"
            "         if not m.name.endswith('__main__')]\n"
            "modules = [importlib.import_module(name) for name in names]\n"
            "compiled = set(arena.pure.compiled_modules())\n"
            "def refused(c):\n"
            "    try:\n"
            "        c.__new__(c)\n"
            "    except TypeError as exc:\n"
            "        return 'cannot inherit from compiled' in str(exc)\n"
            "    return False\n"
            "bad = [f'{c.__module__}.{c.__qualname__}' for m in modules if m.__name__ not in compiled\n"
            "       for _, c in inspect.getmembers(m, inspect.isclass) if c.__module__ == m.__name__\n"
            "       and any(b.__module__ in compiled for b in c.__mro__[1:]) and refused(c)]\n"
            "print(json.dumps([len(names), sorted(compiled), bad]))")
    env = _as_built()
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    count, compiled, bad = json.loads(out)
    assert count > 100
    if _built():
        assert compiled == hot_modules()
    assert bad == []


def test_pure_python_imports_every_module_from_its_source():
    env = {**os.environ, arena.pure.ENV: "1"}
    assert _loaded_compiled(env) == []


def test_the_finder_sends_a_compiled_module_to_its_source():
    finder = arena.pure.SourceFirstFinder()
    package = importlib.import_module("arena.server")
    spec = finder.find_spec("arena.server.session", package.__path__)
    if not _built():
        assert spec is None  # nothing to redirect: the path finder finds the source
    else:
        assert spec is not None and spec.origin == str(ROOT / "arena" / "server" / "session.py")
    # Not this project's, or a package's top: left to the other finders.
    assert finder.find_spec("json.decoder", None) is None
    assert finder.find_spec("msgpack", None) is None


def test_a_match_plays_the_same_on_both_paths():
    """One keyed match with house bots, stored events compared record by record."""
    code = ("import json, random\n"
            "from arena.games import get_game\n"
            "g = get_game('muushig')\n"
            "e = g.new_match({'max_hands': 4}, random.Random(7), None)\n"
            "out = [ev.for_record() for ev in e.start()]\n"
            "while not e.finished:\n"
            "    s = e.current_seat\n"
            "    out += [ev.for_record() for ev in e.play_for(s, e.legal_actions()[-1])]\n"
            "print(json.dumps(out))")
    runs = []
    for pure in ("0", "1"):
        env = {**os.environ, arena.pure.ENV: pure}
        runs.append(subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True,
                                   capture_output=True, text=True, timeout=60).stdout)
    assert runs[0] == runs[1] and len(json.loads(runs[0])) > 20


def test_a_source_newer_than_its_build_is_found_stale(tmp_path, monkeypatch):
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / "server").mkdir()
    fresh_so, fresh_py = tmp_path / f"engine{suffix}", tmp_path / "engine.py"
    stale_so, stale_py = tmp_path / "server" / f"table{suffix}", tmp_path / "server" / "table.py"
    for path in (fresh_so, fresh_py, stale_so, stale_py, tmp_path / "lonely.py"):
        path.write_text("")
    os.utime(fresh_py, (1_000, 1_000))
    os.utime(fresh_so, (2_000, 2_000))
    os.utime(stale_so, (1_000, 1_000))
    os.utime(stale_py, (2_000, 2_000))  # edited after the build
    monkeypatch.setattr(arena.pure, "ROOT", tmp_path)
    assert sorted(arena.pure.builds()) == sorted([(fresh_so, fresh_py), (stale_so, stale_py)])
    assert arena.pure.stale_sources() == [stale_py]


def test_an_installed_wheel_is_never_stale(tmp_path, monkeypatch):
    """A wheel's files carry the times the wheel gave them: only a checkout
    is checked."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    package = tmp_path / "lib" / "site-packages" / "arena"
    package.mkdir(parents=True)
    (package / f"table{suffix}").write_text("")
    (package / "table.py").write_text("")
    os.utime(package / f"table{suffix}", (1_000, 1_000))
    monkeypatch.setattr(arena.pure, "ROOT", package)
    assert not arena.pure.in_checkout()
    assert arena.pure.builds() and arena.pure.stale_sources() == []


def test_a_stale_build_runs_the_sources_with_a_warning(tmp_path):
    """Imported from a copy of the package whose session source is newer."""
    if not _built():
        pytest.skip("this install is pure Python")
    copy = tmp_path / "arena"
    shutil.copytree(ROOT / "arena", copy, ignore=shutil.ignore_patterns("__pycache__"))
    for so in ROOT.glob("arena_hot__mypyc*.so"):
        shutil.copy2(so, tmp_path)
    session = copy / "server" / "session.py"
    os.utime(session, (time.time() + 60, time.time() + 60))
    code = ("import json, warnings, importlib\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    import arena.pure, arena.server.table\n"
            "print(json.dumps([arena.pure.compiled_modules(), [str(w.message) for w in caught]]))")
    env = _as_built()
    env["PYTHONPATH"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True,
                         capture_output=True, text=True, timeout=60).stdout
    compiled, messages = json.loads(out)
    assert compiled == []
    assert any("arena/server/session.py changed since the compiled build" in m for m in messages)


# The tests run again on the sources when the build is compiled: the rules
# and everything the compiled table runs, and the ``source_only`` tests,
# which the compiled run skips. (The crash-restart test's subject is the
# store, not the path.)
_TABLE_TESTS = sorted(str(p.relative_to(ROOT)) for pattern in (
    "test_session_*.py", "test_table_*.py", "test_full_match.py", "test_faults.py",
    "test_seat_memory.py", "test_envelope.py", "test_inbound.py")
    for p in (ROOT / "tests" / "server").glob(pattern))
# The server's tests in two halves (the table's and the rest), so the two
# test processes share them instead of one waiting for all.
SOURCE_SUITES = {
    "muushig-rules": ["tests/games/muushig"],
    "server-tables": _TABLE_TESTS,
    "server-rest": ["tests/server", "--ignore=tests/server/test_crash_restart.py",
                    *(f"--ignore={path}" for path in _TABLE_TESTS)],
    "golden": ["tests/golden"],
}


def _runs_compiled() -> bool:
    import arena.server.session  # noqa: F401 - one hot module loaded decides for all
    return bool(arena.pure.compiled_modules())


@pytest.mark.timeout(900)
@pytest.mark.parametrize("suite", sorted(SOURCE_SUITES))
def test_the_sources_pass(suite: str) -> None:
    if not _runs_compiled():
        pytest.skip("this run imports the sources: every test here runs on them already")
    env = {**os.environ, arena.pure.ENV: "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *SOURCE_SUITES[suite]],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=880)
    assert done.returncode == 0, f"on the sources, {suite}:\n{done.stdout[-6000:]}"
