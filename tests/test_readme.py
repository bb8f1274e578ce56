"""Every example of the README and of the manual pages it moved into (MANUAL) that needs no network, no Zotero
and no ../shared runs as written and exits 0."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

REPO = Path(__file__).resolve().parents[1]
INPUT_SUFFIXES = (".bib", ".ris", ".json", ".jsonl", ".csv", ".npz", ".sqlite", ".txt")
OUTPUT_OPTIONS = ("-o", "--output", "--out")
NEEDS_MORE = (  # an example with one of these needs a key, the network, a Zotero, or ../shared: not run here
    "zotero:web", "zotero:local", "zotero:sqlite", ".sqlite", "~/", "../shared", "corpus fetch", "--api-key",
    "arxiv:",  # an arXiv corpus is fetched first (the network)
)


def readme_commands(text: str) -> list[str]:
    """The `zotrec …` lines of the README's indented and fenced code blocks, comments and `\\` joins resolved.
    A command after a `zotrec corpus fetch NAME` of its block that names NAME keeps the fetch in front of it
    ('zotrec corpus fetch icml2025 && zotrec corpus info icml2025'): it needs what the fetch stored."""
    commands, fenced, pending, fetched = [], False, "", []
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced, fetched = not fenced, []
            continue
        if not (fenced or line.startswith("    ")):
            pending = ""
            if line.strip():
                fetched = []
            continue
        code = pending + line.strip()
        if code.endswith("\\"):
            pending = code[:-1].rstrip() + " "
            continue
        pending = ""
        if code.startswith("zotrec "):
            code = re.sub(r"\s+#.*$", "", code)
            needs = [fetch for fetch in fetched if fetch.split()[-1] in code.split()]
            commands.append(" && ".join(needs + [code]))
            if code.startswith("zotrec corpus fetch "):
                fetched.append(code)
    return commands


def runnable(command: str) -> str | None:
    """None when the command can run here, else why not (what it needs)."""
    if any(marker in command for marker in NEEDS_MORE):
        return "needs the network, a Zotero or ../shared"
    words = shlex.split(command)
    if words[1] == "sync":
        return "sync needs a Zotero"
    for before, word in zip(words, words[1:]):
        is_input = word.endswith(INPUT_SUFFIXES) or word.endswith("/")
        if is_input and before not in OUTPUT_OPTIONS and not (REPO / word).exists():
            return f"{word} stands for the reader's own file"
    return None


# The README and the docs pages its manual moved into (issue 41): their examples are run as the README's were.
MANUAL = ("README.md", "docs/getting-started.md", "docs/sources.md", "docs/outputs.md", "docs/ranking.md",
          "docs/safety.md")
COMMANDS = list(dict.fromkeys(command for page in MANUAL  # each example once, where it first appears
                              for command in readme_commands((REPO / page).read_text(encoding="utf-8"))))
RUNNABLE = [command for command in COMMANDS if runnable(command) is None]


def test_the_readme_has_examples_to_run():
    assert len(COMMANDS) >= 20 and len(RUNNABLE) >= 3, RUNNABLE
    assert any("--format html" in command for command in RUNNABLE)


def test_the_parser_reads_blocks_comments_and_skips():
    text = "Intro\n\n    zotrec library --library examples/library.bib   # what was read\n\n" \
           "```sh\nzotrec corpus fetch icml2025\nzotrec corpus info icml2025\nzotrec reading-list \\\n" \
           "  --library mine.bib\n```\n"
    found = readme_commands(text)
    assert found == ["zotrec library --library examples/library.bib", "zotrec corpus fetch icml2025",
                     "zotrec corpus fetch icml2025 && zotrec corpus info icml2025",
                     "zotrec reading-list --library mine.bib"]
    assert [runnable(command) is None for command in found] == [True, False, False, False]


@pytest.mark.parametrize("command", RUNNABLE)
def test_a_readme_example_runs(command, tmp_path, monkeypatch):
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(REPO / ".pytest_cache" / "readme-cache"))  # embeddings kept
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(cli, shlex.split(command)[1:])
    assert result.exit_code == 0, f"{command}\n{result.output}"


# ---- README and manual claims that can be checked, each run as the README states it ----------------------------------------

def test_on_a_terminal_the_first_thing_said_is_what_is_read_and_notices_come_last_one_short_line_each(monkeypatch,
                                                                                                      tmp_path):
    """'on a terminal says what it is doing from its first second'; 'Notices … come at the end, one short line each';
    'a long line wraps between words'."""
    from tests.test_console import screen_lines
    from zotero_bridge.cli import console

    monkeypatch.setattr(console, "_is_terminal", lambda stream: True)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["reading-list", "--library", "examples/library.bib", "--features", "tfidf",
                                      "-n", "3", "-o", str(tmp_path / "list.md"), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    lines = [line for line in screen_lines(result.stderr) if line.strip()]
    assert "Reading examples/library.bib" in lines[0]
    said = result.stderr.rsplit("\x1b[?25h", 1)[-1]  # after the live display: what stays on the screen
    notices = [line for line in screen_lines(said) if line.strip()]
    assert notices[-1].startswith("wrote ") and len(notices) >= 3
    assert all(len(line) <= 80 for line in notices)
    words = " ".join(notices).split()
    assert "corpus: the bundled ICML 2025 list (`zotrec corpus fetch icml2025` adds every abstract)" in " ".join(words)


def test_the_python_api_example_ranks_every_icml_2025_paper(tmp_path):
    """'The same through the Python API, ranking all ICML 2025 papers: examples/batch_score.py'."""
    import csv
    import os
    import subprocess
    import sys

    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "ada.bib").write_bytes((REPO / "examples" / "library.bib").read_bytes())
    environment = {**os.environ, "PYTHONPATH": str(REPO), "ZOTREC_CACHE_DIR": str(tmp_path / "cache"),
                   "ZOTREC_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, str(REPO / "examples" / "batch_score.py"), str(lab)], cwd=tmp_path,
                          capture_output=True, text=True, env=environment, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "ranking 3,330 papers" in done.stderr
    rows = list(csv.DictReader((tmp_path / "lab-scores.csv").open(encoding="utf-8")))
    bundled = {line.split('"id": "', 1)[1].split('"', 1)[0] for line in
               (REPO / "recommender" / "data" / "icml2025.jsonl").read_text(encoding="utf-8").splitlines()}
    assert len(rows) == 20 and {row["id"] for row in rows} <= bundled
