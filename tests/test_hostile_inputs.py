"""Hostile input files end to end (issue 42, "Tracebacks" and "Invalid XML written"): each a real file on disk
given to the `zotrec` command, each answered by one line, never exit 70 ("zotrec hit a bug")."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

REPO = Path(__file__).resolve().parents[1]
LIBRARY = str(REPO / "examples" / "library.bib")


def _run(*args: str):
    result = CliRunner().invoke(cli, [*args])
    assert "zotrec hit a bug" not in result.output and "Traceback" not in result.output, result.output
    return result


def _corpus(path: Path, title_tail: str, raw: bool = False, hostile: int = 3) -> Path:
    """Five papers; paper `hostile`'s title ends in `title_tail`, written as a JSON escape (or raw when `raw`)."""
    lines = []
    for n, title in enumerate(["Normalizing flows for density estimation", "Graph neural networks",
                               "Diffusion models for images", "Reward models from preferences",
                               "Transformers for forecasting"], 1):
        row = {"id": f"p{n}", "authors": ["Jane Doe"],
               "abstract": f"{title}: we study the method on benchmarks.", "url": f"https://example.org/{n}"}
        row["title"] = title + (title_tail if n == hostile else "")
        lines.append(json.dumps(row, ensure_ascii=not raw))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


def test_a_lone_surrogate_escape_in_a_json_corpus_is_one_warning_naming_the_line(tmp_path):
    corpus = _corpus(tmp_path / "papers.jsonl", " \ud800 and \udfff")
    assert "\\ud800" in corpus.read_text()
    result = _run("reading-list", "--library", LIBRARY, "--corpus", str(corpus), "--features", "tfidf",
                  "--format", "atom", "-n", "5")
    assert result.exit_code == 0, result.output
    assert f"{corpus}:3: 2 characters are not text (a lone surrogate escape such as \\ud800); read as U+FFFD" \
        in result.stderr
    titles = [e.findtext("{http://www.w3.org/2005/Atom}title")
              for e in ET.fromstring(result.stdout.encode()).iter("{http://www.w3.org/2005/Atom}entry")]
    assert "Diffusion models for images \ufffd and \ufffd" in titles


def test_a_lone_surrogate_in_a_csl_json_library_is_one_warning(tmp_path):
    library = tmp_path / "library.json"
    items = [{"id": f"i{n}", "type": "article-journal", "title": f"Normalizing flows and density {n}",
              "abstract": "We study flows."} for n in range(3)]
    items[1]["title"] += " \udc9b"  # a surrogate escape of an undecodable byte
    library.write_text(json.dumps(items, indent=1), encoding="utf-8")
    result = _run("library", "--library", str(library), "--format", "json")
    assert result.exit_code == 0, result.output
    assert f"{library}:" in result.stderr and "1 character is not text" in result.stderr
    assert json.loads(result.stdout)["summary"]["items"] == 3


def test_a_line_separator_inside_a_json_lines_string_is_text_not_a_line_break(tmp_path):
    corpus = _corpus(tmp_path / "papers.jsonl", " one\u2028two\u0085three", raw=True)
    result = _run("reading-list", "--library", LIBRARY, "--corpus", str(corpus), "--features", "tfidf",
                  "--format", "jsonl", "-n", "5")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.split("\n") if line]
    assert len(rows) == 5 and "skipped" not in result.stderr.lower()
    [third] = [row for row in rows if row["id"] == "p3"]
    assert third["title"].startswith("Diffusion models for images one") and third["title"].endswith("three")


def test_corpus_text_with_non_characters_makes_a_feed_strict_parsers_read(tmp_path):
    corpus = _corpus(tmp_path / "papers.jsonl", " \ufffe\uffff \x9b31m \x9d0;x\x07")
    result = _run("reading-list", "--library", LIBRARY, "--corpus", str(corpus), "--features", "tfidf",
                  "--format", "atom", "-n", "5")
    assert result.exit_code == 0, result.output
    ET.fromstring(result.stdout.encode())  # expat: U+FFFE was "not well-formed (invalid token)"
    assert not {"\ufffe", "\uffff", "\x9b", "\x9d", "\x07"} & set(result.stdout)


@pytest.mark.parametrize("field", ["provenance", "settings"])
def test_a_model_whose_json_nests_100000_deep_is_one_line(tmp_path, field):
    from recommender.collaborative.dense_model import SHIPPED_MODEL

    if not SHIPPED_MODEL.exists():
        pytest.skip("the shipped model is not in this checkout")
    with np.load(SHIPPED_MODEL, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays[field] = np.array("[" * 100_000 + "]" * 100_000)
    np.savez(tmp_path / "deep.npz", **arrays)
    result = _run("reading-list", "--library", LIBRARY, "--model", str(tmp_path / "deep.npz"), "-n", "2")
    assert result.exit_code == 1
    assert f"field '{field}' is JSON nested more than 100 deep" in result.output, result.output
    assert str(tmp_path / "deep.npz") in result.output


def test_many_kinds_of_skipped_entry_make_one_short_counted_notice(tmp_path):
    """Entries over the BibTeX bound are skipped each with its own reason (it names the key): 40 of them made
    one notice of 40 kinds on one line (200 made 30 KB)."""
    library = tmp_path / "library.bib"
    macros = ['@string{m0 = "' + "x" * 1024 + '"}'] + [f"@string{{m{n} = m{n - 1} # m{n - 1}}}" for n in range(1, 11)]
    good = [f"@article{{good{n}, title={{Normalizing flows for density estimation {n}}}}}" for n in range(3)]
    large = [f"@article{{too-large-{n:03d}, title = m10 # m10}}" for n in range(40)]
    library.write_text("\n".join(macros + good + large) + "\n", encoding="utf-8")
    for command in (["reading-list", "--library", str(library), "--features", "tfidf", "-n", "2", "--format", "json"],
                    ["library", "--library", str(library)]):
        result = _run(*command)
        assert result.exit_code == 0, result.output
        lines = [line for line in result.output.splitlines() if "too-large-000" in line]
        assert lines and all(len(line) < 320 and "and 37 entries of 37 other kinds" in line for line in lines), lines


def test_c1_controls_from_a_corpus_never_reach_a_real_terminal(tmp_path):
    """The table on a pseudo-terminal (links on, as on a real one): the only escapes are rich's own OSC 8
    links and styles; 0x9b (CSI), 0x9c (ST), 0x9d (OSC) and ESC from the corpus are gone, links included (a
    URL with 0x9b went raw into the OSC 8 link)."""
    import re

    from tests.test_tables import _cli_table

    corpus = _corpus(tmp_path / "papers.jsonl", " \x9b2J\x9c \x9d8;;https://evil.example/\x07 \x1b[5m", raw=True,
                     hostile=1)
    text = corpus.read_text(encoding="utf-8")
    corpus.write_text(text.replace("https://example.org/1", "https://example.org/1\x9b6n"), encoding="utf-8")
    screen = _cli_table(str(corpus), terminal=True)
    assert "Normalizing flows for density estimation" in screen and "\x1b]8;" in screen  # the table, with links
    assert not {"\x9b", "\x9c", "\x9d", "\x07"} & set(screen), repr(screen)
    rest = re.sub(r"\x1b\]8;[^\x1b\x07]*\x1b\\|\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    assert "\x1b" not in rest, repr(rest[rest.index("\x1b") - 40:rest.index("\x1b") + 40])
    targets = set(re.findall(r"\x1b\]8;[^;\x1b]*;([^\x1b\x07]*)", screen)) - {""}
    assert targets and all(re.fullmatch(r"https://example\.org/[2-5]", target) for target in targets), targets
