"""The bundled vectors (recommender/features/bundled.py) of the ICML 2025 list and the example library: they
are the encoder's, a tampered file is refused in one line, a first reading list embeds only the library (and
nothing for the example, whose list is the one a fresh embedding gives). Also its closing notices."""

from __future__ import annotations

import json
import logging
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from recommender.features import bundled
from recommender.features.cache import EmbeddingCache, text_hash
from recommender.features.dense import MODEL_ID, ONNX_SHA256, DenseRepresentation, MiniLMEncoder
from tests.conftest import REPO
from zotero_bridge.cli import cli

LIBRARY = REPO / "examples" / "library.bib"


def corpus_texts() -> list[str]:
    from recommender.corpus.readers import load_corpus

    data = REPO / "recommender" / "data"
    files = [data / "icml2025.jsonl", *sorted((data / "icml2025_seeds").glob("*.txt"))]
    return [paper.text for paper in load_corpus(files).papers]


class CountingEncoder:
    """The MiniLM encoder, counting the texts it is asked to embed."""

    model_id = MODEL_ID
    dimension = 384

    def __init__(self) -> None:
        self.inner = MiniLMEncoder()
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts.extend(texts)
        return self.inner.encode(texts)


def test_bundled_vectors_are_the_encoders():
    texts = corpus_texts()
    sample = texts[:: len(texts) // 12] + [text for text in texts if len(text) > 400][:4]  # titles and abstracts
    bundle = bundled.load_bundle(bundled.MANIFEST, ONNX_SHA256)
    assert bundle is not None and len(bundle) >= len(set(texts))
    rows = np.zeros((len(sample), 384), dtype=np.float32)
    found = bundle.fill(MODEL_ID, [text_hash(text) for text in sample], rows)
    assert found.all()
    assert np.allclose(rows, MiniLMEncoder().encode(sample), atol=1e-5)
    assert not bundle.fill("another-model", [text_hash(sample[0])], rows[:1]).any()


def test_the_bundle_covers_every_text_of_the_bundled_list():
    texts = corpus_texts()
    bundle = bundled.load_bundle(bundled.MANIFEST, ONNX_SHA256)
    found = bundle.fill(MODEL_ID, [text_hash(text) for text in texts], np.zeros((len(texts), 384), np.float32))
    missing = [text for text, hit in zip(texts, found) if not hit]
    assert not missing, f"{len(missing)} texts lack a bundled vector: run benchmarks/tools/bundle_embeddings.py"


def test_a_tampered_bundle_is_refused_in_one_line_and_texts_are_embedded(tmp_path, monkeypatch, caplog):
    for name in (bundled.MANIFEST, bundled.MANIFEST.with_suffix(".npz")):
        shutil.copy(name, tmp_path / name.name)
    array = tmp_path / bundled.MANIFEST.with_suffix(".npz").name
    data = bytearray(array.read_bytes())
    data[-5] ^= 1  # one bit of the last vector
    array.write_bytes(data)
    monkeypatch.setattr(bundled, "MANIFEST", tmp_path / bundled.MANIFEST.name)
    bundled.shipped_bundle.cache_clear()
    try:
        encoder = CountingEncoder()
        texts = corpus_texts()[:3]
        with caplog.at_level(logging.WARNING):
            rows = DenseRepresentation(encoder, EmbeddingCache(tmp_path / "cache.sqlite3")).transform(texts)
    finally:
        bundled.shipped_bundle.cache_clear()
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0] and "sha256" in warnings[0]
    assert encoder.texts == texts
    assert np.allclose(rows, MiniLMEncoder().encode(texts), atol=1e-5)


def test_a_bundle_for_another_model_file_is_not_used(tmp_path):
    manifest = json.loads(bundled.MANIFEST.read_text(encoding="utf-8"))
    assert manifest["onnx_sha256"] == ONNX_SHA256 and manifest["model_id"] == MODEL_ID
    assert bundled.load_bundle(bundled.MANIFEST, "0" * 64) is None


@pytest.fixture
def counted(monkeypatch):
    """Every text the MiniLM encoder embeds in this test."""
    texts: list[str] = []
    original = MiniLMEncoder.encode

    def encode(self, batch, **options):
        texts.extend(batch)
        return original(self, batch, **options)

    monkeypatch.setattr(MiniLMEncoder, "encode", encode)
    return texts


def reading_list(tmp_path, monkeypatch, *global_options, library=LIBRARY, options=("-n", "3")):
    """`zotrec [OPTIONS] reading-list --library examples/library.bib -n 3` on a fresh cache."""
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(cli, [*global_options, "reading-list", "--library", str(library), *options])
    assert result.exit_code == 0, result.output
    return result


def test_the_first_reading_list_embeds_only_the_library(counted, tmp_path, monkeypatch):
    from zotero_bridge.sources.files import read_library_file

    library = tmp_path / "mine.bib"  # the example with other titles: texts no bundle holds
    text = LIBRARY.read_text(encoding="utf-8")
    library.write_text(text.replace("\ttitle = {", "\ttitle = {My "), encoding="utf-8")
    reading_list(tmp_path, monkeypatch, "-q", library=library)
    library_texts = {item.text for item in read_library_file(library)[0] if item.text}
    assert counted and set(counted) <= library_texts
    assert len(counted) == len(library_texts) < 100


def test_the_example_library_is_bundled_and_ranks_as_a_fresh_embedding_does(counted, tmp_path, monkeypatch):
    """The README's first command embeds nothing; with the example's bundled rows hidden it embeds the example
    and gives the same list and reasons, scores up to float noise (the bundled rows are what such a run computed;
    under OPENBLAS_CORETYPE=Haswell a score's 4th decimal moved)."""
    from zotero_bridge.sources.files import read_library_file

    options = ("-n", "50", "--format", "json")
    bundled_run = reading_list(tmp_path / "with", monkeypatch, "-q", options=options)
    assert counted == [], "the example's texts lack bundled rows: run benchmarks/tools/bundle_embeddings.py"
    example = {text_hash(item.text) for item in read_library_file(LIBRARY)[0] if item.text}
    fill = bundled.BundledVectors.fill

    def without_the_example(self, model_id, hashes, out):
        found = fill(self, model_id, hashes, out)
        return found & np.array([key not in example for key in hashes], dtype=bool)

    monkeypatch.setattr(bundled.BundledVectors, "fill", without_the_example)
    fresh_run = reading_list(tmp_path / "without", monkeypatch, "-q", options=options)
    assert {text_hash(text) for text in counted} == example
    assert_same_up_to_float_noise(json.loads(bundled_run.stdout), json.loads(fresh_run.stdout))


def assert_same_up_to_float_noise(expected, found, where="list") -> None:
    """The same papers, order, reasons and text; numbers within float noise (another CPU's BLAS kernels round a
    fresh run's products differently, and a 4-decimal figure may then differ in its last digit)."""
    assert type(found) is type(expected), where
    if isinstance(expected, dict):
        assert list(found) == list(expected), where
        for key in expected:
            assert_same_up_to_float_noise(expected[key], found[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(found) == len(expected), where
        for index, (left, right) in enumerate(zip(expected, found)):
            assert_same_up_to_float_noise(left, right, f"{where}[{index}]")
    elif isinstance(expected, float):
        assert np.isclose(found, expected, rtol=0, atol=2e-4), f"{where}: {found} != {expected}"
    else:
        assert found == expected, where
