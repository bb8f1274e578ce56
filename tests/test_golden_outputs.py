"""Speed work must not change what a user sees: rankings, scores and reasons, and whole `zotrec
reading-list` outputs on a fixed library and corpus, against a golden file made by the code before
the speed-ups (tests/golden_outputs.py regenerates it). Ids, order and text are compared exactly,
numbers up to float noise (tests/rankings.py), printed numbers up to one unit in their last place."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal

import pytest

from tests import golden_outputs as golden
from tests.rankings import Ranked, assert_same_ranking, same_reasons
from zotero_bridge.render.reading_list import SCORE_DECIMALS

needs_shared = pytest.mark.skipif(not golden.SHARED.is_dir(), reason="../shared is not present (CiteULike titles)")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("golden")
    library, corpus = golden.write_inputs(folder)
    return folder, library, corpus


@pytest.fixture(scope="module")
def expected():
    return json.loads(golden.GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture
def cache(inputs, monkeypatch):
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(inputs[0] / "cache"))


def parse_api_line(line: str) -> Ranked:
    """'rank id score key:similarity …' (floats in hex) → Ranked."""
    _, paper, score, *reasons = line.split(" ")
    return Ranked(paper, float.fromhex(score),
                  tuple((key, float.fromhex(sim)) for key, sim in (reason.rsplit(":", 1) for reason in reasons)))


def printed_rows(text: str, fmt: str) -> list[tuple[str, str | None, list[tuple[str, str]]]]:
    """A printed reading list → (the rest of the row, the printed score, [(reason, printed similarity)])."""
    if fmt == "jsonl":  # numbers rounded to SCORE_DECIMALS places, trailing zeros dropped
        rows = [json.loads(line) for line in text.splitlines()]
        return [(_rest(row), f"{row['score']:.{SCORE_DECIMALS}f}",
                 [(f"{r['key']} {r['title']}", f"{r['similarity']:.{SCORE_DECIMALS}f}") for r in row["reasons"]])
                for row in rows]
    if fmt == "csv":
        lines = text.splitlines(keepends=True)
        rows = list(csv.DictReader(lines))
        header = lines[0].replace(",match,", ",", 1)  # the 0–100 match came after the golden file (test_match.py)
        return [(header, None, [])] + [(_rest(row), row["score"], printed_reasons(row["reasons"])) for row in rows]
    assert fmt == "markdown"
    text = re.sub(r" — \d+% match · score ", " — score ", text)
    blocks = []
    for block in text.split("\n\n"):
        score = re.search(r" — score (-?\d+\.\d+)$", block, re.MULTILINE)
        because = re.search(r"^   Because you saved: (.*)$", block, re.MULTILINE)
        rest = block.replace(score.group(0), "") if score else block
        rest = rest.replace(because.group(0), "") if because else rest
        blocks.append((rest, score and score.group(1), printed_reasons(because.group(1)) if because else []))
    return blocks


def _rest(row: dict) -> str:
    return json.dumps({key: value for key, value in row.items() if key not in ("score", "match", "reasons")})


def printed_reasons(text: str) -> list[tuple[str, str]]:
    """'title (0.65); title (0.50)' → [(title, '0.65'), (title, '0.50')]."""
    reasons = re.findall(r"(.*?) \((-?\d+\.\d+)\)(?:; |$)", text)
    assert "; ".join(f"{title} ({value})" for title, value in reasons) == text, text
    return reasons


def same_printed(mine: str | None, theirs: str | None) -> bool:
    """Equal up to one unit in the last printed place (a value at a rounding edge rounds either way)."""
    if mine is None or theirs is None:
        return mine == theirs
    places = max(len(mine.split(".")[1]), len(theirs.split(".")[1]))
    return abs(Decimal(mine) - Decimal(theirs)) <= Decimal(1).scaleb(-places)


def assert_same_printout(got: str, want: str, fmt: str, where: str) -> None:
    """Same rows in the same order with the same text; scores and similarities as printed, up to one
    unit in the last place; reasons as in tests/rankings.py (ties may be named in any order)."""
    got_rows, want_rows = printed_rows(got, fmt), printed_rows(want, fmt)
    assert len(got_rows) == len(want_rows), f"{where}: {len(got_rows)} rows, not {len(want_rows)}"
    for number, (mine, theirs) in enumerate(zip(got_rows, want_rows)):
        assert mine[0] == theirs[0], f"{where}, row {number}"
        assert same_printed(mine[1], theirs[1]), f"{where}, row {number}: score {mine[1]} != {theirs[1]}"
        assert same_reasons(mine[2], theirs[2], same_printed), f"{where}, row {number}: {mine[2]} != {theirs[2]}"


@needs_shared
def test_rankings_scores_and_reasons_are_unchanged(inputs, expected, cache):
    pytest.importorskip("onnxruntime")
    _, library, corpus = inputs
    big = golden.write_big_library(inputs[0])
    got = golden.api_outputs(library, corpus)
    got.update(golden.api_outputs(big, corpus, golden.BIG_VARIANTS, "big/"))
    assert got.keys() == expected["api"].keys()
    for name, lines in got.items():
        assert_same_ranking([parse_api_line(line) for line in lines],
                            [parse_api_line(line) for line in expected["api"][name]], name)


@needs_shared
def test_reading_list_commands_print_the_same_text(inputs, expected, cache):
    pytest.importorskip("onnxruntime")
    _, library, corpus = inputs
    for run in range(2):  # the second run reads whatever the first one cached
        got = golden.cli_outputs(library, corpus)
        assert got.keys() == expected["cli"].keys()
        for name, text in got.items():
            assert_same_printout(text, expected["cli"][name], name.rsplit(" ", 1)[1], f"run {run}, {name}")


def test_a_printout_differing_beyond_rounding_is_caught():
    """The comparison itself: one unit in the last printed place passes; two units, another id or
    reason, or another order do not."""
    row = '{"id": "a", "score": 0.6079, "reasons": [%s]}'
    reason = '{"key": "%s", "title": "T", "similarity": %s}'
    want = "\n".join([row % ", ".join([reason % ("K1", 0.7), reason % ("K2", 0.6), reason % ("K3", 0.5)]),
                      (row % "").replace('"a"', '"b"')])
    assert_same_printout(want.replace("0.6079", "0.608"), want, "jsonl", "rounding edge")
    assert_same_printout(want.replace("K1", "KX").replace("K2", "K1").replace("KX", "K2").replace("0.7", "0.6"),
                         want.replace("0.7", "0.6"), "jsonl", "a tie named in another order")
    for wrong in (want.replace("0.6079", "0.6077"), want.replace('"a"', '"c"'), want.replace("K2", "K9"),
                  "\n".join(want.splitlines()[::-1]), want.replace("0.6}", "0.62}"), want.replace("0.5}", "0.4}")):
        with pytest.raises(AssertionError):
            assert_same_printout(wrong, want, "jsonl", "changed")
