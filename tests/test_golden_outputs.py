"""Speed work must not change a single output: rankings, scores and reasons (exact floats) and whole
`zotrec reading-list` outputs on a fixed library and corpus, against a golden file made by the code
before the speed-ups (tests/golden_outputs.py regenerates it)."""

from __future__ import annotations

import json

import pytest

from tests import golden_outputs as golden

pytestmark = pytest.mark.skipif(not golden.SHARED.is_dir(), reason="../shared is not present")


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


def _first_difference(got: list[str], want: list[str]) -> str:
    for line, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"line {line}: got {a!r}, want {b!r}"
    return f"lengths {len(got)} vs {len(want)}"


def test_rankings_scores_and_reasons_are_unchanged(inputs, expected, cache):
    pytest.importorskip("onnxruntime")
    _, library, corpus = inputs
    got = golden.api_outputs(library, corpus)
    got.update(golden.api_outputs(golden.write_big_library(inputs[0]), corpus, golden.BIG_VARIANTS, "big/"))
    assert got.keys() == expected["api"].keys()
    for name, lines in got.items():
        assert lines == expected["api"][name], f"{name}: {_first_difference(lines, expected['api'][name])}"


def test_reading_list_commands_print_the_same_bytes(inputs, expected, cache):
    pytest.importorskip("onnxruntime")
    _, library, corpus = inputs
    for _ in range(2):  # the second run reads whatever the first one cached
        got = golden.cli_outputs(library, corpus)
        assert got.keys() == expected["cli"].keys()
        for name, text in got.items():
            assert text == expected["cli"][name], name
