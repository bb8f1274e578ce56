"""Every README example that needs no network, no Zotero and no ../shared runs as written and exits 0."""

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


COMMANDS = readme_commands((REPO / "README.md").read_text(encoding="utf-8"))
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
