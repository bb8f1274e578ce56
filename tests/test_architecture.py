"""The layout docs/architecture.md describes, checked: the recommender knows nothing of Zotero, no
two modules import each other (directly or round a loop), no module grows past ~400 lines, and
every package says in its docstring what it is for."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("recommender", "zotero_bridge")
MAX_LINES = 400
FORBIDDEN_IN_RECOMMENDER = ("zotero_bridge", "click", "pyzotero")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every module `name` imports, at any depth of the file (lazy imports inside functions too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in MODULES else base)
    return targets


GRAPH = {name: {t for t in _imports(name, path) if t in MODULES and t != name} for name, path in MODULES.items()}


def test_the_recommender_never_imports_zotero_click_or_pyzotero():
    offenders = {
        name: sorted(t for t in _imports(name, path) if t.split(".")[0] in FORBIDDEN_IN_RECOMMENDER)
        for name, path in MODULES.items() if name.startswith("recommender")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_no_import_cycles():
    """Depth-first search over every import edge; a back edge is a cycle, reported as its path."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(GRAPH[name]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target] if target in path else [name, target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert cycles == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_small(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{MODULES[name]} has {lines} lines; split it by job (docs/architecture.md)"


def test_every_package_says_what_it_is_for():
    for name, path in MODULES.items():
        if path.name == "__init__.py":
            docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
            assert docstring and len(docstring) > 40, f"{path}: the package docstring says what the room is for"


def test_the_architecture_page_names_only_files_that_exist():
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = {word.strip("`") for word in page.split() if word.strip("`,.;:()").endswith(".py")}
    named = {word.strip("`,.;:()") for word in named}
    missing = sorted(word for word in named if "/" in word and not (REPO / word).exists())
    assert missing == []
    assert len(named) > 20
