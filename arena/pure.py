"""Run the sources where a compiled build of them is installed but not wanted.

The per-decision modules may be installed compiled (``setup.py``): each
extension sits beside the ``.py`` it was built from, and Python imports the
extension first. The finder below sends those imports to the ``.py`` files
instead, all of them together (compiled modules call each other's classes
directly, so a mix would not work):

* with ``ARENA_PURE_PYTHON=1`` in the environment -- to debug with the
  interpreter's tools, or to test the pure path on a compiled install;
* in a source checkout, when a source is newer than its build (edited or
  pulled since the last ``pip install -e .``): the edit runs, with a
  warning, instead of the old compiled code.

``arena/__init__.py`` installs it before any other arena module is
imported. (The ``protocol`` package, the bot SDK, is never compiled: a
bot's sandbox mounts it alone.)
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import warnings
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from pathlib import Path
from typing import Sequence

ENV = "ARENA_PURE_PYTHON"
PACKAGE = "arena"
ROOT = Path(__file__).resolve().parent


class SourceFirstFinder(MetaPathFinder):
    """Finds this package's compiled modules as source."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: object = None) -> ModuleSpec | None:
        if fullname.partition(".")[0] != PACKAGE or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, ExtensionFileLoader):
            return None
        source = source_of(Path(spec.origin or ""))
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def source_of(extension: Path) -> Path | None:
    """The ``.py`` an extension module was built from, if it is there."""
    suffix = next((s for s in EXTENSION_SUFFIXES if extension.name.endswith(s)), None)
    if suffix is None:
        return None
    source = extension.with_name(extension.name[:-len(suffix)] + ".py")
    return source if source.is_file() else None


def builds() -> list[tuple[Path, Path]]:
    """Each compiled module of the package with its source: (extension, .py)."""
    pairs = []
    for extension in ROOT.rglob("*.so"):
        source = source_of(extension)
        if source is not None:
            pairs.append((extension, source))
    return pairs


def in_checkout() -> bool:
    """Whether the package runs from a source checkout (an editable
    install), where sources get edited; an installed wheel's files carry
    whatever times the wheel gave them."""
    return not {"site-packages", "dist-packages"} & set(ROOT.parts)


def stale_sources() -> list[Path]:
    """Sources of a checkout changed after their build: the build would run
    old code."""
    if not in_checkout():
        return []
    return [source for extension, source in builds()
            if source.stat().st_mtime > extension.stat().st_mtime]


def wanted() -> bool:
    return os.environ.get(ENV) == "1"


def install() -> None:
    if not any(isinstance(finder, SourceFirstFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourceFirstFinder())


def compiled_modules() -> list[str]:
    """The names of this package's loaded modules that run compiled."""
    return sorted(name for name, module in list(sys.modules.items())
                  if name.partition(".")[0] == PACKAGE
                  and isinstance(getattr(module, "__loader__", None), ExtensionFileLoader))


def _decide() -> None:
    if wanted():
        install()
        return
    stale = stale_sources()
    if stale:
        names = ", ".join(sorted(str(p.relative_to(ROOT.parent)) for p in stale))
        warnings.warn(f"{names} changed since the compiled build; the sources run instead "
                      f"(pip install -e . compiles them again)", RuntimeWarning, stacklevel=2)
        install()


_decide()
