"""The layout docs/architecture.md describes, checked: the recommender knows nothing of Zotero, no
two modules import each other (directly or round a loop), the rooms (packages) import one way, in the
order ROOMS writes down, no module grows past ~400 lines, and every package says what it is for."""

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


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Depth-first search over every edge; a back edge is a cycle, reported as its path."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target] if target in path else [name, target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


# The rooms, bottom to top, and the rooms each may import (docs/architecture.md, "The rooms"); a room may
# only name rooms listed before it. A module belongs to the longest key that is its name or a package above it.
ROOMS: dict[str, tuple[str, ...]] = {
    "recommender": (),  # the vocabulary: items, errors, text, retry, the bounded HTTP read
    "recommender.store": ("recommender",),  # every cache and data file: only the vocabulary (errors)
    "recommender.formats": ("recommender", "recommender.store"),
    "recommender.features": ("recommender", "recommender.store"),
    "recommender.corpus": ("recommender", "recommender.store", "recommender.formats",
                           "recommender.features"),  # enrich: the one tf-idf
    "recommender.scoring": ("recommender", "recommender.store", "recommender.features"),
    "recommender.collaborative": ("recommender", "recommender.store", "recommender.features"),
    "recommender.pipeline": ("recommender", "recommender.store", "recommender.corpus", "recommender.features",
                             "recommender.scoring", "recommender.collaborative"),  # where a ranking is made
    "recommender.batch": ("recommender", "recommender.formats", "recommender.scoring", "recommender.pipeline"),
    "recommender.evaluation": ("recommender", "recommender.store", "recommender.features", "recommender.scoring",
                               "recommender.collaborative", "recommender.pipeline"),
    "zotero_bridge": ("recommender",),  # errors
    "zotero_bridge.zotero_api": ("recommender", "recommender.store", "zotero_bridge"),
    "zotero_bridge.sources": ("recommender", "recommender.formats", "recommender.corpus", "zotero_bridge",
                              "zotero_bridge.zotero_api"),
    "zotero_bridge.local_api": ("recommender", "recommender.store", "zotero_bridge", "zotero_bridge.zotero_api",
                                "zotero_bridge.sources"),  # the desktop's local API: the same calls as zotero_api
    "zotero_bridge.feedback": ("recommender", "recommender.store", "recommender.scoring", "recommender.pipeline",
                               "recommender.formats",  # history_view: safe_text / safe_json
                               "zotero_bridge",
                               "zotero_bridge.zotero_api", "zotero_bridge.sources"),
    "zotero_bridge.sync": ("recommender", "recommender.scoring", "recommender.pipeline", "zotero_bridge", "zotero_bridge.zotero_api",
                           "zotero_bridge.sources", "zotero_bridge.local_api", "zotero_bridge.feedback"),
    "zotero_bridge.render": ("recommender", "recommender.formats"),
    "zotero_bridge.deliver": ("recommender", "recommender.store", "recommender.formats",  # formats: safe_text
                              "zotero_bridge", "zotero_bridge.zotero_api",
                              "zotero_bridge.render"),  # the e-mail digest (SMTP); its settings beside Zotero's
    "zotero_bridge.mcp": ("recommender", "recommender.formats", "recommender.corpus", "zotero_bridge",
                          "zotero_bridge.render", "zotero_bridge.sync"),  # `zotrec mcp`: the tools' answers and the server
    "zotero_bridge.serve": ("recommender", "recommender.pipeline", "zotero_bridge", "zotero_bridge.feedback",
                            "zotero_bridge.render", "zotero_bridge.sync"),  # `zotrec serve`: the triage page
    "zotero_bridge.cli": ("*",),  # every room listed before it
    "zotero_bridge.__main__": ("zotero_bridge.cli",),  # `python -m zotero_bridge`
}
PACKAGES_ARE_ROOMS = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")


def _room(module: str) -> str:
    """The room a module is in: the longest ROOMS key, or else package, that is its name or a prefix of it."""
    found = [room for room in {*ROOMS, *PACKAGES_ARE_ROOMS} if module == room or module.startswith(room + ".")]
    return max(found, key=len)


def _allowed(room: str) -> set[str]:
    """What a room may import; a package missing from ROOMS may import nothing of ours."""
    names = list(ROOMS)
    if room not in ROOMS:
        return set()
    return set(names[:names.index(room)]) if ROOMS[room] == ("*",) else set(ROOMS[room])


ROOM_EDGES = {(_room(name), _room(target), name, target) for name, targets in GRAPH.items() for target in targets
              if _room(name) != _room(target)}


def test_every_package_is_a_room_in_the_order():
    assert [name for name in PACKAGES_ARE_ROOMS if name not in ROOMS] == []
    assert [room for room in ROOMS if room not in MODULES] == []


def test_the_room_order_is_one_way():
    names = list(ROOMS)
    late = {room: sorted(other for other in _allowed(room) if names.index(other) >= names.index(room))
            for room in ROOMS}
    assert {room: found for room, found in late.items() if found} == {}


def test_no_import_cycles_between_rooms():
    rooms: dict[str, set[str]] = {}
    for source, target, _, _ in ROOM_EDGES:
        rooms.setdefault(source, set()).add(target)
    assert _cycles(rooms) == []


def test_rooms_import_only_the_rooms_below_them():
    offenders = sorted(f"{source} -> {target} ({name} imports {module})" for source, target, name, module
                       in ROOM_EDGES if target not in _allowed(source))
    assert offenders == []


OTHER_HTTP_PACKAGES = ("httpx", "requests", "urllib3", "aiohttp")
OTHER_HTTP_MODULES = ("urllib.request", "http.client")


def test_one_http_client_and_one_retry_rule():
    """httpx2, the client pyzotero 1.16 uses, for every request; recommender/retry.py for every retry."""
    others = {name: sorted(t for t in _imports(name, path)
                           if t.split(".")[0] in OTHER_HTTP_PACKAGES or t in OTHER_HTTP_MODULES)
              for name, path in MODULES.items()}
    assert {name: found for name, found in others.items() if found} == {}
    dependencies = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("[project.optional-dependencies]")[0]
    assert '"httpx2' in dependencies and '"httpx>' not in dependencies and '"httpx=' not in dependencies
    for user in ("recommender.corpus.http", "zotero_bridge.zotero_api.client", "zotero_bridge.local_api.session"):
        assert "recommender.retry" in _imports(user, MODULES[user]), f"{user} retries by recommender/retry.py"


def test_every_answer_is_read_through_the_bounded_client():
    """One bounded read (recommender/bounded_http.py) for every server: no module but it builds an httpx2
    client, and pyzotero is built only by zotero_api/paging.py, on that client, and pages only through it."""
    builders = {name for name, path in MODULES.items() if "httpx2.Client(" in path.read_text(encoding="utf-8")}
    assert builders == {"recommender.bounded_http"}
    pyzotero = {name for name, path in MODULES.items() if "zotero.Zotero(" in path.read_text(encoding="utf-8")}
    assert pyzotero == {"zotero_bridge.zotero_api.paging"}
    unbounded = {name for name, path in MODULES.items() if ".everything(" in path.read_text(encoding="utf-8")
                 or 'links.get("next")' in path.read_text(encoding="utf-8")}
    assert unbounded == set(), "pyzotero's everything() pages without end: use zotero_api/paging.every_page"


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
