"""The shape of the code: layers that point one way, no import circles, small
modules.

The layers, lowest first. A module may import from its own layer and the
ones below, never from one above:

0. **base** -- ``protocol`` (the wire, the SDK), ``arena.games`` (the rules),
   ``arena.auth`` (token hashes), ``arena.logs`` (log set-up),
   ``arena.metrics`` (counters), ``arena.options`` (option value types), ``arena.collector`` (the garbage
   collector of a serving process), ``arena.records`` (events as stored
   text), ``arena.pure`` (compiled modules or their sources),
   ``arena.envs`` (the games as learning environments, and a policy of
   them as an SDK bot: the games and the SDK, nothing of the server).
1. **storage** -- ``arena.storage`` (stores, the writer, the deal keys on
   disk) and ``arena.live`` (the live hub: publish/subscribe in memory for
   spectators; no HTTP in it, the server publishes and the web subscribes),
   and ``arena.live_bridge`` where there is one (the hub fed from other
   nodes' notifications: storage and the hub, nothing above).
2. **server** -- ``arena.server``: bots over TCP, the lobby, the tables.
3. **services on the server** -- ``arena.tournament`` (plays schedules
   through ``arena.tournament.host.MatchHost``) and ``arena.hosting`` (hosted
   bots and their ladder, which play matches the same way) and
   ``arena.people`` (people's tables, opened for the play page).
4. **the application** -- ``arena.web`` (HTTP), ``arena.app`` (composes
   server, web, director and hosted bots), ``arena.cli*`` (the commands),
   ``arena.checkbot`` (a command that plays a bot against scripted hands),
   ``arena.dataset`` (public matches as records, read through the web's rules).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena", "protocol")
MAX_LINES = 500

LAYERS: dict[str, int] = {
    "protocol": 0, "arena.games": 0, "arena.auth": 0, "arena.logs": 0,
    "arena.metrics": 0, "arena.collector": 0, "arena.records": 0, "arena.pure": 0,
    "arena.options": 0, "arena.notation": 0, "arena.envs": 0,
    "arena.storage": 1, "arena.live": 1, "arena.live_bridge": 1, "arena.match_files": 1,
    "arena.server": 2,
    "arena.tournament": 3, "arena.hosting": 3, "arena.people": 3,
    "arena.web": 4, "arena.app": 4, "arena.cli": 4, "arena.cli_errors": 4,
    "arena.cli_output": 4, "arena.cli_options": 4, "arena.cli_match": 4, "arena.cli_bots": 4,
    "arena.checkbot": 4, "arena.dataset": 4, "arena.cli_data": 4,
    "arena": 4,  # the package itself (its __init__)
}


def module_files() -> dict[str, Path]:
    files: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path
    return files


MODULES = module_files()


def layer_of(module: str) -> int | None:
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS[max(prefixes, key=len)] if prefixes else None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Ids of the nodes under ``if TYPE_CHECKING:`` (imports for annotations only)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def imports_of(module: str, *, runtime_only: bool = False) -> set[str]:
    """The project modules ``module`` imports anywhere in its body (also inside
    functions); ``from package import name`` counts as the submodule when
    ``name`` is one."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_nodes(tree) if runtime_only else set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                    if node.level else node.module or "")
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {name for name in found if name in MODULES and name != module}


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_no_module_imports_from_a_higher_layer() -> None:
    upward = [f"{module} (layer {layer_of(module)}) imports {other} (layer {layer_of(other)})"
              for module in MODULES for other in sorted(imports_of(module))
              if layer_of(other) > layer_of(module)]  # type: ignore[operator]
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    graph = {module: imports_of(module, runtime_only=True) for module in MODULES}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_over_500_lines() -> None:
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}
