"""What a command shows on stderr: a status line and bars on a terminal with log lines above them, one line
per step of long runs elsewhere, notices at the end, Dask silent without -v, and errors sorted by type."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from recommender import LibraryItem, Paper, Recommender, progress
from recommender.batch.runner import score_libraries
from recommender.errors import SettingError
from zotero_bridge.cli.console import install
from zotero_bridge.cli.main import cli

from .conftest import REPO, SEEDS

TOKENS = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07]*\x07|(\r)|(\n)|([^\x1b\r\n]+)")


class Terminal(io.StringIO):
    """A stream that says it is a terminal (as stderr is in a shell)."""

    def isatty(self) -> bool:
        return True


def screen_lines(text: str) -> list[str]:
    """What a terminal shows after `text`, and every line it ever showed (a small emulator: text, CR, LF,
    erase line, cursor up; colours ignored)."""
    screen, row, column, shown = [""], 0, 0, []
    for argument, command, cr, lf, chars in TOKENS.findall(text):
        if chars:
            line = screen[row]
            screen[row] = line[:column].ljust(column) + chars + line[column + len(chars):]
            column += len(chars)
            continue
        if command not in ("K", "A") and not (cr or lf):
            continue  # colours, cursor shown or hidden
        shown.append(screen[row].rstrip())  # the line as it was before a move or an erase
        if cr:
            column = 0
        elif lf:
            row, column = row + 1, 0
            if row == len(screen):
                screen.append("")
        elif command == "K":
            screen[row] = ""
        elif command == "A":
            row = max(0, row - int(argument or 1))
    return shown + [line.rstrip() for line in screen if line.strip()]


def test_a_warning_during_a_bar_prints_above_it_on_a_line_of_its_own():
    stream = Terminal()
    install(stream, quiet=False, verbose=False)
    progress.step("Scoring 3 libraries")
    with progress.bar("Scoring users", 3) as advance:
        advance(1)
        logging.getLogger("zotrec").warning("user2: skipped (an empty library)")
        advance(2)
    progress.finish()
    lines = screen_lines(stream.getvalue())
    assert "Warning: user2: skipped (an empty library)" in lines  # whole, not run into the bar's line
    assert any("Scoring users" in line and "━" in line for line in lines)  # the bar was drawn
    assert not any("Warning" in line and "━" in line for line in lines)


def test_off_a_terminal_bars_print_nothing_and_long_runs_log_one_line_a_step():
    stream = io.StringIO()
    install(stream, quiet=False, verbose=False)
    progress.step("Reading library.bib")  # a status line: only on a terminal
    with progress.bar("Embedding new texts", 500) as advance:
        advance(500)
    assert stream.getvalue() == ""
    with progress.bar("Evaluating folds", 3, log_steps=True) as advance:
        for _ in range(3):
            progress.step("Fold n of 3: fitting and scoring every rule", log=True)
            advance(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 6
    assert [line.split(" (")[0] for line in lines[1::2]] == [f"Evaluating folds: {n} of 3 done" for n in (1, 2, 3)]


def test_many_units_log_one_line_a_tenth_and_quiet_logs_none():
    stream = io.StringIO()
    install(stream, quiet=False, verbose=False)
    with progress.bar("Simulating users", 2000, log_steps=True) as advance:
        for _ in range(2000):
            advance(1)
    assert len(stream.getvalue().splitlines()) == 10
    quiet = Terminal()
    install(quiet, quiet=True, verbose=False)
    with progress.bar("Simulating users", 20, log_steps=True) as advance:
        advance(20)
    progress.step("Reading", log=True)
    assert quiet.getvalue() == ""


def test_notices_are_kept_for_the_end_in_their_short_form_and_said_at_once_with_v():
    from zotero_bridge.cli.common import _say_notices, note

    for verbose, expected in ((False, ["hello world", "wrote a.txt"]),
                              (True, ["Hello world, in full", "Wrote /tmp/a.txt"])):
        stream = io.StringIO()
        install(stream, quiet=False, verbose=verbose)
        note("hello world", "Hello world, in full")
        note("wrote a.txt", "Wrote /tmp/a.txt")
        note("hello world", "Hello world, in full")  # once
        logging.getLogger("zotrec").warning("careful")
        _say_notices()
        said = stream.getvalue().splitlines()
        assert said[-2:] == expected if not verbose else said[:2] == expected
        assert "Warning: careful" in said


def test_the_bar_of_score_moves_after_each_user_not_after_a_chunk():
    papers = [Paper(id=f"p{n}", title=title, abstract=None) for n, title in enumerate(
        ["Graph networks", "Normalizing flows", "Bandits", "Time series", "Diffusion models"])]
    events: list[str] = []

    def load(name):
        events.append(f"load {name}")
        return [LibraryItem(key=name, title=f"{name} graph flows")]

    users = {f"u{n}": f"u{n}" for n in range(5)}
    score_libraries(Recommender(papers, representation="tfidf", aggregation="top5"), users, load=load,
                    output=io.StringIO(), top_n=2, progress=lambda done, total: events.append(f"done {done}"))
    assert events == ["done 0", *[e for n in range(5) for e in (f"load u{n}", f"done {n + 1}")]]


def test_a_users_error_is_reported_and_a_bug_stops_the_batch():
    papers = [Paper(id="p0", title="Graph networks", abstract=None), Paper(id="p1", title="Flows", abstract=None)]
    recommender = Recommender(papers, representation="tfidf", aggregation="top5")

    def load(name):
        if name == "bug":
            raise KeyError("a bug")
        if name == "bad":
            raise SettingError("bad.bib: not a library")
        return [LibraryItem(key=name, title="graph networks")]

    summary = score_libraries(recommender, {"ok": "ok", "bad": "bad"}, load=load, output=io.StringIO())
    assert summary.failures == [("bad", "bad.bib: not a library")]
    with pytest.raises(KeyError):
        score_libraries(recommender, {"ok": "ok", "bug": "bug"}, load=load, output=io.StringIO())


SEED_CORPUS = [part for seed in SEEDS[:5] for part in ("--corpus", seed)]


def test_an_unexpected_exception_shows_as_a_bug_and_a_users_error_as_one_line(monkeypatch, tmp_path):
    import recommender.features.dense as dense

    library = REPO / "examples" / "library.bib"
    args = ["reading-list", "--library", str(library), "--features", "tfidf", "--model", "none", *SEED_CORPUS]
    monkeypatch.setattr(dense, "choose_features", lambda features: (_ for _ in ()).throw(ValueError("oops")))
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 70
    assert "zotrec hit a bug (ValueError: oops)" in result.output and "report it" in result.output
    assert not result.output.startswith("Error:")
    monkeypatch.setattr(dense, "choose_features", lambda features: (_ for _ in ()).throw(SettingError("--x: no")))
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == "Error: --x: no"
    monkeypatch.undo()
    result = CliRunner().invoke(cli, [*args[:3], "--aggregation", "median", *args[3:]])
    assert result.exit_code == 1 and "Error: unknown aggregation 'median'" in result.output


def test_a_missing_file_is_one_line_naming_it(tmp_path):
    result = CliRunner().invoke(cli, ["library", "--library", str(tmp_path / "gone.bib")])
    assert result.exit_code == 1
    assert "gone.bib" in result.output and "Traceback" not in result.output


def _score_on_dask(tmp_path, *flags) -> str:
    folder = tmp_path / "lab"
    folder.mkdir(exist_ok=True)
    (folder / "ada.jsonl").write_text('{"key": "a", "title": "Graph neural networks for molecules"}\n')
    (folder / "bob.jsonl").write_text('{"key": "b", "title": "Normalizing flows with heavy tails"}\n')
    out = tmp_path / f"parts{len(flags)}"
    environment = {**os.environ, "PYTHONPATH": str(REPO), "ZOTREC_CACHE_DIR": str(tmp_path / "cache")}
    environment.pop("DASK_LOGGING__DISTRIBUTED", None)
    done = subprocess.run([sys.executable, "-m", "zotero_bridge", *flags, "score", "--libraries", str(folder),
                           *SEED_CORPUS, "--features", "tfidf", "--model", "none", "--scheduler", "local",
                           "--jobs", "1", "--out", str(out)],
                          capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_score_on_a_local_dask_cluster_prints_nothing_from_dask_without_v(tmp_path):
    pytest.importorskip("distributed")
    quiet = _score_on_dask(tmp_path)
    assert [line for line in quiet.splitlines()
            if not line.startswith(("Scored 2 users", "31 of 31", "5 of 5"))] == [], quiet
    loud = _score_on_dask(tmp_path, "-v")
    assert re.search(r"distributed\.|[Ss]cheduler|[Ww]orker", loud)  # -v shows them: the check above can fail
