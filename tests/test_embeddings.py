"""Dense and hybrid features: caching, the fallback without the extra, hash checks, the real model."""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from recommender.features import dense as embeddings
from recommender.features import cosine, make_representation
from recommender.features.cache import EmbeddingCache
from recommender.features.dense import (
    DenseRepresentation,
    EmbeddingsUnavailable,
    ModelIntegrityError,
    choose_features,
    verify_sha256,
)
from recommender.features.hybrid import HybridRepresentation
from recommender.items import LibraryItem, Paper
from recommender.scoring.aggregation import aggregate
from recommender.scoring.ranking import Recommender


class WordEncoder:
    """A stand-in model: hashed bag of words, unit length; counts what it was asked to embed."""

    model_id = "test-words"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen.extend(texts)
        rows = np.zeros((len(texts), embeddings.DIMENSION), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                rows[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % embeddings.DIMENSION] += 1
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


@pytest.fixture
def cache(tmp_path):
    return EmbeddingCache(tmp_path / "embeddings.sqlite3")


def test_dense_rows_come_from_the_cache_the_second_time(cache):
    first = DenseRepresentation(WordEncoder(), cache)
    rows = first.transform(["graph neural networks", "protein folding", "graph neural networks"])
    assert first.encoder.seen == ["graph neural networks", "protein folding"]  # duplicates once
    again = DenseRepresentation(WordEncoder(), cache)
    np.testing.assert_array_equal(again.transform(["protein folding", "graph neural networks"]), rows[[1, 0]])
    assert again.encoder.seen == [] and again.encoded == 0


def test_only_new_or_changed_library_items_are_embedded(cache):
    DenseRepresentation(WordEncoder(), cache).transform(["a paper on graphs", "a paper on proteins"])
    later = DenseRepresentation(WordEncoder(), cache)
    later.transform(["a paper on graphs", "a paper on proteins, revised", "a new paper"])
    assert later.encoder.seen == ["a paper on proteins, revised", "a new paper"]


def test_without_a_cache_every_call_embeds(cache):
    representation = DenseRepresentation(WordEncoder(), use_cache=False)
    representation.transform(["x y"])
    representation.transform(["x y"])
    assert representation.encoded == 2 and representation.cache is None


def test_empty_input_gives_an_empty_matrix(cache):
    assert DenseRepresentation(WordEncoder(), cache).transform([]).shape == (0, embeddings.DIMENSION)


def test_hybrid_similarity_is_the_weighted_sum_of_both(cache):
    texts = ["deep graph networks", "graph kernels for molecules", "bayesian optimisation"]
    dense = DenseRepresentation(WordEncoder(), cache)
    hybrid = HybridRepresentation(0.7, dense=dense).fit(texts)
    rows = hybrid.transform(texts)
    expected = 0.7 * cosine(dense.transform(texts), dense.transform(texts)) + 0.3 * cosine(
        hybrid.tfidf.transform(texts), hybrid.tfidf.transform(texts))
    np.testing.assert_allclose(cosine(rows, rows), expected, atol=1e-6)
    np.testing.assert_allclose(np.diag(cosine(rows, rows)), 1.0, atol=1e-5)
    assert rows[1:].shape[0] == 2
    scored = aggregate(rows[:2], rows, "top3")  # the profile code runs on hybrid rows unchanged
    assert scored.scores.shape == (3,)


def test_recommender_ranks_with_dense_features(cache):
    papers = [Paper(id="p1", title="Graph neural networks for molecules"),
              Paper(id="p2", title="Bayesian optimisation of hyperparameters"),
              Paper(id="p3", title="Protein structure prediction")]
    library = [LibraryItem(key="A", title="Message passing graph neural networks")]
    recommender = Recommender(papers, representation=DenseRepresentation(WordEncoder(), cache))
    assert recommender.recommend(library, top_n=1)[0].paper.id == "p1"


def test_choose_features_falls_back_to_tfidf_and_says_how_to_upgrade(monkeypatch, caplog):
    monkeypatch.setattr(embeddings, "_REQUIRED_MODULES", ("zotrec_no_such_module",))
    monkeypatch.setattr(embeddings, "DEFAULT_FEATURES", "dense")
    with caplog.at_level(logging.INFO, logger="recommender.features.dense"):
        assert choose_features(None) == "tfidf"
    assert len(caplog.records) == 1 and "zotrec[embeddings]" in caplog.text
    assert choose_features("tfidf") == "tfidf"
    for name in ("dense", "hybrid"):
        with pytest.raises(EmbeddingsUnavailable, match=r"zotrec\[embeddings\].*--features tfidf"):
            choose_features(name)
    with pytest.raises(EmbeddingsUnavailable):
        make_representation("dense")


def test_choose_features_reports_the_default_when_installed(monkeypatch, caplog):
    monkeypatch.setattr(embeddings, "dense_available", lambda: True)
    with caplog.at_level(logging.INFO, logger="recommender.features.dense"):
        assert choose_features(None) == embeddings.DEFAULT_FEATURES
    assert f"Features: {embeddings.DEFAULT_FEATURES}" in caplog.text


def test_a_file_with_another_digest_is_refused(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"not the weights")
    with pytest.raises(ModelIntegrityError, match="model.onnx: sha256 .* is not the pinned"):
        verify_sha256(model, embeddings.ONNX_SHA256)
    with pytest.raises(ModelIntegrityError, match="cannot read"):
        verify_sha256(tmp_path / "missing.onnx", embeddings.ONNX_SHA256)


def test_the_shipped_tokenizer_matches_its_pinned_digest():
    verify_sha256(embeddings.TOKENIZER_PATH, embeddings.TOKENIZER_SHA256)


# ---- the real model (needs the `embeddings` extra) ---------------------------------------------------------

@pytest.fixture(scope="module")
def real_encoder():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    return embeddings.MiniLMEncoder()


def test_real_model_puts_related_titles_together(real_encoder, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    rows = real_encoder.encode(["Graph neural networks for molecule property prediction",
                                "Message passing networks on molecular graphs",
                                "The economics of minimum wage laws"])
    assert rows.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    similarity = rows @ rows.T
    assert similarity[0, 1] > 0.5 > similarity[0, 2]


def test_real_model_rows_do_not_depend_on_batch_or_order(real_encoder):
    """The int8 model scales its activations per call: a text's row must not depend on the texts beside it."""
    short, long = "Attention", "A long title about attention " * 60  # the long one is truncated at 256
    alone = real_encoder.encode([short])
    mixed = real_encoder.encode([long, short, "Transformers"])
    np.testing.assert_allclose(mixed[1], alone[0], atol=1e-6)
    np.testing.assert_allclose(real_encoder.encode([long])[0], mixed[0], atol=1e-6)


def test_real_model_is_close_to_the_float_model_it_was_derived_from(real_encoder):
    """The int8 arithmetic moves a row by little: rows recorded from the float32 model (the package's weights
    folded by onnxruntime, as zotrec ran before) stay within cosine 0.98 (about 0.997 on average for these 40 texts and for 200 abstracts,
    docs/performance.md)."""
    recorded = np.load(Path(__file__).parent / "data" / "minilm_float_rows.npz", allow_pickle=False)
    rows = real_encoder.encode([str(text) for text in recorded["texts"]])
    cosines = np.sum(rows * recorded["rows"], axis=1)
    assert cosines.min() > 0.98 and cosines.mean() > 0.99


def test_real_model_checks_the_weights_before_loading(tmp_path):
    pytest.importorskip("onnxruntime")
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(embeddings.MODEL_PATH, tampered)
    with open(tampered, "r+b") as handle:
        handle.seek(-1, 2)
        last = handle.read(1)
        handle.seek(-1, 2)
        handle.write(bytes([last[0] ^ 1]))
    with pytest.raises(ModelIntegrityError):
        embeddings.MiniLMEncoder(model_path=tampered).encode(["x"])


def test_cli_dense_features_embed_once_then_read_the_cache(real_encoder, tmp_path, monkeypatch):
    from zotero_bridge.cli.main import cli

    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    library = tmp_path / "library.jsonl"
    library.write_text('{"key": "A", "title": "Normalizing flows with heavy tails"}\n'
                       '{"key": "B", "title": "Time series foundation models"}\n')
    from .conftest import SEEDS

    seeds = [part for seed in SEEDS for part in ("--corpus", str(seed))]  # 31 papers: fast on two cores
    args = ["reading-list", "--library", str(library), "--features", "dense", "-n", "3", "--format", "json", *seeds]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    stored = EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite3").count(embeddings.MODEL_ID)
    assert stored >= 2  # the library (the seeds' texts that the bundled ICML vectors lack too)
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0 and second.stdout == first.stdout
    assert EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite3").count(embeddings.MODEL_ID) == stored
