"""The default scoring (dense features, the fused score, the shipped collaborative part) on Dask and from
the CLI: workers load their own ONNX session and cache connection, and write what one process writes."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from click.testing import CliRunner

from recommender.collaborative.dense_model import SHIPPED_MODEL
from recommender.features.dense import dense_available
from zotero_bridge.cli.main import cli

from .conftest import REPO

pytestmark = pytest.mark.skipif(not dense_available(), reason="the dense packages are not installed")

FLOWS = '{"key": "f1", "title": "Heavy tails in normalizing flows"}\n' \
        '{"key": "f2", "title": "Time series forecasting foundation models"}\n'
GRAPHS = '{"key": "g1", "title": "Graph neural networks for molecules"}\n' \
         '{"key": "g2", "title": "Message passing and oversmoothing in deep graph networks"}\n'


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "lab"
    folder.mkdir()
    shutil.copy(REPO / "examples" / "library.bib", folder / "alice.bib")
    (folder / "bob.jsonl").write_text(FLOWS, encoding="utf-8")
    (folder / "dave.jsonl").write_text(GRAPHS, encoding="utf-8")
    return folder


def test_dask_scores_dense_features_as_one_process_does(lab, tmp_path):
    pytest.importorskip("distributed")
    single = tmp_path / "single.csv"
    first = run("score", "--libraries", lab, "-n", 5, "--out", single)
    assert first.exit_code == 0, first.output
    parts = tmp_path / "parts"
    result = run("score", "--libraries", lab, "-n", 5, "--out", parts, "--scheduler", "local", "--jobs", 2)
    assert result.exit_code == 0, result.output
    rows = [row for part in sorted(parts.glob("part-*.csv")) for row in csv.DictReader(part.open())]
    expected = list(csv.DictReader(single.open()))
    assert len(rows) == len(expected) == 15
    key = lambda r: (r["user"], int(r["rank"]))  # noqa: E731
    for got, want in zip(sorted(rows, key=key), expected):
        assert (got["user"], got["rank"], got["id"]) == (want["user"], want["rank"], want["id"])
        assert float(got["score"]) == pytest.approx(float(want["score"]), abs=1e-6)


@pytest.mark.skipif(not SHIPPED_MODEL.exists(), reason="no shipped model in this checkout")
def test_reading_list_uses_the_shipped_model_by_default_and_none_turns_it_off(lab):
    library = lab / "alice.bib"
    default = run("-v", "reading-list", "--library", library, "-n", 10, "--format", "json")
    assert default.exit_code == 0, default.output
    assert "collaborative part shipped with zotrec" in default.output
    off = run("reading-list", "--library", library, "-n", 10, "--format", "json", "--model", "none")
    assert off.exit_code == 0 and "shipped" not in off.output
    top_default = [row["id"] for row in json.loads(default.stdout)]
    top_off = [row["id"] for row in json.loads(off.stdout)]
    assert len(top_default) == len(top_off) == 10
    assert all(row["reasons"] for row in json.loads(default.stdout))  # "because you saved …" stays
    plain = run("reading-list", "--library", library, "-n", 10, "--format", "json", "--model", "none",
                "--aggregation", "top5")
    assert plain.exit_code == 0 and [row["id"] for row in json.loads(plain.stdout)] != top_default


def test_a_dense_model_with_tfidf_features_is_a_one_line_error(lab):
    if not SHIPPED_MODEL.exists():
        pytest.skip("no shipped model in this checkout")
    result = run("reading-list", "--library", lab / "bob.jsonl", "--features", "tfidf", "--model", SHIPPED_MODEL)
    assert result.exit_code == 1 and "needs --features dense" in result.output and "Traceback" not in result.output


def test_unknown_encoder_is_a_one_line_error(lab):
    result = run("reading-list", "--library", lab / "bob.jsonl", "--encoder", "nope")
    assert result.exit_code == 1 and "unknown encoder 'nope'" in result.output
