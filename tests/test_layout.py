"""The architecture, held by a test: no import cycles, and each room imports only what it may.

Every `import` statement of every module is read (lazy imports inside functions included;
imports under `if TYPE_CHECKING:` are types only and left out), so a cycle or a forbidden
import fails here even when no other test happens to execute that line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "mlcompare"


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path) -> set[str]:
    """Every module named by an import statement in this file (absolute names)."""
    found: set[str] = set()
    this = _module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


GRAPH = {name: {m for m in _imports(path) if m in MODULES and m != name} for name, path in MODULES.items()}
EXTERNAL = {name: {m for m in _imports(path) if not m.startswith("mlcompare")} for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), as sorted lists."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def strongconnect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                strongconnect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)
    return components


def _reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in GRAPH[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_the_reader_sees_the_imports_it_must():
    assert "mlcompare.measure.device" in GRAPH["mlcompare.measure.case"]
    assert "mlflow" in EXTERNAL["mlcompare.tracking.writer"]


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_a_cycle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_case_process_never_reaches_the_suite_side():
    forbidden = ("mlcompare.suite", "mlcompare.tracking", "mlcompare.report", "mlcompare.cli")
    for name in MODULES:
        if name.startswith("mlcompare.measure"):
            bad = sorted(m for m in _reachable(name) if m.startswith(forbidden))
            assert not bad, f"{name} imports {bad}"


def test_only_tracking_imports_mlflow():
    for name, external in EXTERNAL.items():
        if any(m == "mlflow" or m.startswith("mlflow.") for m in external):
            assert name.startswith("mlcompare.tracking"), name


def test_only_the_device_module_imports_cupy_cudf_and_cuml():
    gpu = ("cupy", "cudf", "cuml", "rmm", "pynvml")
    for name, external in EXTERNAL.items():
        if any(m.split(".")[0] in gpu for m in external):
            assert name == "mlcompare.measure.device" or name.startswith("mlcompare.measure.device."), name


def test_the_stage_rooms_exist():
    rooms = {name.split(".")[1] for name in MODULES if name.count(".") >= 2}
    assert {"cli", "config", "data", "measure", "suite", "tracking", "report", "pairings"} <= rooms


# -- the package graph: which room may import which, as docs/architecture.md says ------------

ARCHITECTURE = REPO / "docs" / "architecture.md"


def _room(module: str) -> str:
    """The room a module is in: its subpackage (`config`), or the top-level module itself
    (`records`, `errors`, `forked_call`; the package's own `__init__` is `mlcompare`)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "mlcompare"


def _package_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            if _room(target) != _room(name):
                edges.setdefault(_room(name), set()).add(_room(target))
    return edges


def _declared_edges() -> dict[str, set[str] | None]:
    """The "may import" column of docs/architecture.md's table, by room: a set of rooms, or
    None for "everything"."""
    declared: dict[str, set[str] | None] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`mlcompare"):
            continue
        path = cells[0].strip("`").rstrip("/")
        room = "mlcompare" if path == "mlcompare/__init__.py" else path.split("/")[1].removesuffix(".py")
        may = cells[2]
        declared[room] = None if may.startswith("everything") else set(re.findall(r"`([a-z_]+)`", may))
    return declared


def test_every_room_is_in_the_architecture_table():
    rooms = {_room(name) for name in MODULES} - {"__main__"}
    assert rooms == set(_declared_edges()), "docs/architecture.md's table lists other rooms than the package has"


def test_rooms_import_only_what_the_architecture_table_allows():
    declared = _declared_edges()
    for room, targets in _package_edges(GRAPH).items():
        allowed = declared.get(room, set())
        if room == "__main__" or allowed is None:
            continue
        extra = sorted(targets - allowed)
        assert not extra, f"{room} imports {extra}, which docs/architecture.md does not allow"


def test_no_two_rooms_may_import_each_other():
    declared = _declared_edges()
    edges = {room: (set(declared) - {room} if may is None else may) for room, may in declared.items()}
    assert _cycles({room: targets & set(edges) for room, targets in edges.items()}) == [], \
        "the allowed imports of docs/architecture.md have a cycle"
    assert _cycles(_package_edges(GRAPH) | {r: set() for r in declared if r not in _package_edges(GRAPH)}) == []


def test_a_forbidden_room_import_would_be_found():
    graph = {"mlcompare.config.a": {"mlcompare.measure.b"}, "mlcompare.measure.b": {"mlcompare.config.c"}}
    assert _package_edges(graph) == {"config": {"measure"}, "measure": {"config"}}
    assert _cycles(_package_edges(graph)) == [["config", "measure"]]
