"""`python -m benchmarks`: every suite names scripts that exist, the list shows each one, a wrong name or a
missing input is a one-line error, and the package stays out of what pyproject installs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from benchmarks.__main__ import SUITES, commands

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


def test_every_suite_runs_scripts_that_exist():
    for suite in SUITES:
        for step in suite.steps:
            assert (REPO / "benchmarks" / step.script).is_file(), (suite.name, step.script)
        assert (REPO / suite.page).is_file(), (suite.name, suite.page)


def test_the_list_shows_every_suite_on_one_line():
    listed = _run().stdout.splitlines()
    for suite in SUITES:
        assert sum(line.startswith(f"{suite.name} ") for line in listed) == 1, suite.name
    assert _run("list").stdout == _run().stdout


def test_a_wrong_name_or_a_missing_input_is_one_line():
    wrong = _run("no-such-suite")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "speed" in wrong.stderr
    needs = _run("weights")
    assert needs.returncode == 1 and needs.stderr.count("\n") == 1 and "DUMPS" in needs.stderr


def test_quick_and_given_arguments_reach_the_script():
    sync = next(suite for suite in SUITES if suite.name == "sync")
    assert commands(sync, True, [])[0][2:] == ["--items", "200", "--top", "10"]
    assert commands(sync, False, ["--items", "7"])[0][2:] == ["--items", "7"]


def test_benchmarks_are_not_installed_with_zotrec():
    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    assert include and not any("benchmarks".startswith(pattern.rstrip("*")) for pattern in include)


def _evaluation_imports(path: Path) -> set[str]:
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("recommender.evaluation"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("recommender.evaluation"))
    return {name for name in found if (REPO / (name.replace(".", "/") + ".py")).is_file()}


def test_the_evaluation_package_holds_only_what_the_cli_needs():
    """Each module of recommender/evaluation/ is reached from `zotrec evaluate` / `zotrec train`: code only a
    benchmark uses belongs in benchmarks/lib/."""
    reached, todo = set(), _evaluation_imports(REPO / "zotero_bridge" / "cli" / "model.py")
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo |= _evaluation_imports(REPO / (name.replace(".", "/") + ".py"))
    present = {f"recommender.evaluation.{p.stem}" for p in (REPO / "recommender" / "evaluation").glob("*.py")
               if p.stem != "__init__"}
    assert present - reached == set()
