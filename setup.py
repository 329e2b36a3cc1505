"""The per-decision modules compiled to C by mypyc, when they can be.

Everything else about the package is in ``pyproject.toml``. The compiled
modules are built from the same ``.py`` files, which stay in the package:
Python imports the extension when it is there and the source when it is
not. So the build is optional: ``ARENA_PURE_PYTHON=1`` at install time
skips it, and a machine without mypyc or a C compiler gets a pure-Python
install with a warning. ``ARENA_PURE_PYTHON=1`` at run time makes an
installed build import the sources instead (see ``arena/pure.py``).
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

# What the loop runs for every decision: the table, its seats, its match
# session and output, and the Muushig engine. Not the server's counters:
# the workers' parent subclasses them, and Python classes cannot derive
# from compiled ones. Not the ``protocol`` package: it is the
# bot SDK, which a hosted bot's sandbox mounts on its own. The Muushig
# learning environment's per-step writes (its face, the rows it fills, the
# array layout) are here too; not the environment class itself (``aec.py``:
# it derives from PettingZoo's, so it would compile as a plain Python class,
# and did not gain beyond the noise) nor the codec (its ``decode`` takes
# NumPy integers, which a compiled ``int`` argument refuses).
# ``tests/test_compiled.py`` reads this list.
HOT_MODULES = [
    "arena/games/base.py",
    "arena/games/muushig/cards.py",
    "arena/games/muushig/state.py",
    "arena/games/muushig/legality.py",
    "arena/games/muushig/wire.py",
    "arena/games/muushig/views.py",
    "arena/games/muushig/events.py",
    "arena/games/muushig/engine.py",
    "arena/server/envelope.py",
    "arena/server/inbound.py",
    "arena/server/seats.py",
    "arena/server/session_output.py",
    "arena/server/pause.py",
    "arena/server/session.py",
    "arena/server/table.py",
    "arena/envs/codec.py",
    "arena/envs/muushig_layout.py",
    "arena/envs/muushig_face.py",
    "arena/envs/muushig_vector.py",
]


class OptionalBuildExt(build_ext):
    """A failed compile leaves the pure-Python modules in charge: all of
    them, since the compiled modules share one library (a module built
    without it would not import)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure
            for output in self.get_outputs():
                if os.path.exists(output):
                    os.remove(output)
            _skip(f"the C build failed ({exc})")


def _skip(why: str) -> None:
    print(f"muushig-arena: {why}; the pure-Python modules are used", file=sys.stderr)


def _extensions() -> list:
    if os.environ.get("ARENA_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _skip("mypyc is not installed")
        return []
    try:
        # The other modules are read for their types only; the build
        # environment need not hold the dependencies (they are then Any).
        return mypycify(["--ignore-missing-imports", "--follow-imports=silent", *HOT_MODULES],
                        opt_level="3", group_name="arena_hot")
    except (Exception, SystemExit) as exc:  # mypyc exits on a type error
        _skip(f"mypyc refused the modules ({exc})")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
