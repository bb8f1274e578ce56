"""Hostile text never reaches an output raw, and an odd file name never sinks a batch (issue 24)."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from .conftest import REPO, SEEDS
from .robust_cli import error_lines, zotrec

LIBRARY = REPO / "examples" / "library.bib"
CORPUS = [part for seed in SEEDS[:8] for part in ("--corpus", seed)]
# ESC, BEL, NUL, a C1 CSI, DEL; right-to-left override, isolates; what must never be written raw
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
HOSTILE = "Normalizing flows \x1b[31mred\x07 bell\x00 nul \x9b csi \x7f del \u202egnp.exe\u2066 iso\u2069 end"


@pytest.fixture
def hostile(tmp_path):
    """A corpus paper and a library item whose texts carry terminal escapes and bidi overrides."""
    corpus = tmp_path / "hostile.jsonl"
    row = {"id": "evil", "title": HOSTILE, "abstract": "Density estimation with normalizing flows. " + HOSTILE,
           "authors": ["Eve \x1b]8;;http://x.test\x07Hacker"], "url": "https://example.org/evil"}
    corpus.write_text(json.dumps(row) + "\n", encoding="utf-8")
    library = tmp_path / "mine.bib"
    library.write_text(LIBRARY.read_text(encoding="utf-8") + "\n@article{bad, title={Heavy tails \x1b[2J in "
                       "normalizing flows \u202eevil}, abstract={Flows with heavy tails \x07 for density.}}\n",
                       encoding="utf-8")
    return corpus, library


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json", "jsonl", "csv", "bibtex", "ris", "csljson"])
def test_reading_list_outputs_hold_no_control_or_bidi_character(hostile, tmp_path, fmt):
    corpus, library = hostile
    out = tmp_path / f"list.{fmt}"
    args = ("reading-list", "--features", "tfidf", "--corpus", corpus, *CORPUS, "--library", library, "-n", "0",
            "--format", fmt)
    result = zotrec(*args, *(() if fmt == "table" else ("-o", out)), timeout=300)
    assert result.returncode == 0, error_lines(result)
    text = result.stdout.decode("utf-8") if fmt == "table" else out.read_text(encoding="utf-8")
    assert "red" in text and "gnp.exe" in text  # the hostile paper is there, made safe
    assert RAW.findall(text) == [], fmt
    assert RAW.findall(result.stderr.decode("utf-8")) == []


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_score_outputs_hold_no_control_or_bidi_character(hostile, tmp_path, fmt):
    corpus, library = hostile
    out = tmp_path / f"scores.{fmt}"
    result = zotrec("score", "--features", "tfidf", "--corpus", corpus, *CORPUS, "-n", "0", "--format", fmt,
                    "--out", out, "--libraries", library, "--group-summary", timeout=300)
    assert result.returncode == 0, error_lines(result)
    for path in (out, out.with_name(f"scores.group.{fmt}")):
        text = path.read_text(encoding="utf-8")
        assert "gnp.exe" in text and RAW.findall(text) == [], path.name
    assert RAW.findall(result.stderr.decode("utf-8")) == []


def test_json_keeps_the_text_as_escapes():
    from recommender.formats.output import safe_json, safe_text

    document = safe_json(json.dumps({"t": "a\u202eb\x9bc"}, ensure_ascii=False))
    assert RAW.findall(document) == [] and json.loads(document) == {"t": "a\u202eb\x9bc"}
    assert safe_text("a\x1b[31mb\u202ec\udce9") == "a [31mbc\ufffd"


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS file systems refuse names that are not UTF-8")
def test_a_library_file_name_that_is_not_utf8_is_scored_and_the_batch_goes_on(tmp_path):
    folder = tmp_path / "lab"
    folder.mkdir()
    shutil.copy(LIBRARY, folder / "alice.bib")
    odd = os.path.join(os.fsencode(folder), b"caf\xe9.bib")  # Latin-1 'café': not UTF-8
    shutil.copy(LIBRARY, os.fsdecode(odd))
    out = tmp_path / "scores.csv"
    result = zotrec("score", "--features", "tfidf", *CORPUS, "-n", "3", "--out", out, "--libraries", folder,
                    timeout=300)
    assert result.returncode == 0, error_lines(result)
    users = [line.split(",")[0] for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert set(users) == {"alice", "caf\ufffd"} and len(users) == 6
    assert "caf\ufffd" in result.stderr.decode("utf-8")  # said, with the replacement character
