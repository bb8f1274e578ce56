"""The shipped collaborative model's factors of the bundled ICML 2025 texts and the example library's
(recommender/data/embeddings/icml2025-factors.*): that model's kNN factors of the bundled vectors, no other
model gets them, and a first reading list maps only the library through the kNN (the example's, nothing)."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from recommender.collaborative import dense_model
from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel
from recommender.features import bundled
from recommender.features.cache import text_hash
from recommender.features.dense import ONNX_SHA256, DenseRepresentation
from tests.conftest import REPO
from tests.test_bundled_embeddings import corpus_texts
from zotero_bridge.cli import cli


def test_bundled_factors_are_the_shipped_models_knn_of_the_bundled_vectors():
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    bundle = bundled.load_bundle(bundled.FACTORS_MANIFEST, ONNX_SHA256)
    assert bundle is not None and bundle.model_id == model.cache_id
    texts = corpus_texts()
    assert len(bundle) == len(set(texts) | set(example_texts()))  # each text of the list and the example, once
    sample = texts[:: len(texts) // 40]
    rows = np.zeros((len(sample), len(model.item_gram)), dtype=np.float32)
    assert bundle.fill(model.cache_id, [text_hash(text) for text in sample], rows).all()
    expected = model.factors_for_vectors(DenseRepresentation(use_cache=False).transform(sample))
    assert np.allclose(rows, expected, atol=1e-6)
    assert not bundle.fill(model.cache_id.replace("knn", "ridge"), [text_hash(sample[0])], rows[:1]).any()


def test_the_first_reading_list_maps_only_the_library(tmp_path, monkeypatch):
    mapped: list[int] = []
    knn = dense_model.knn_factors

    def counting(vectors, *args, **kwargs):
        mapped.append(len(vectors))
        return knn(vectors, *args, **kwargs)

    monkeypatch.setattr(dense_model, "knn_factors", counting)
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    library = tmp_path / "mine.bib"  # the example with other titles: texts no bundle holds
    example = (REPO / "examples" / "library.bib").read_text(encoding="utf-8")
    library.write_text(example.replace("\ttitle = {", "\ttitle = {My "), encoding="utf-8")
    result = CliRunner().invoke(cli, ["-q", "reading-list", "--library", str(library), "-n", "3"])
    assert result.exit_code == 0, result.output
    assert 0 < sum(mapped) <= 36  # the library's items; the 3,330 papers' factors are bundled
    mapped.clear()
    example = str(REPO / "examples" / "library.bib")
    result = CliRunner().invoke(cli, ["-q", "reading-list", "--library", example, "-n", "3"])
    assert result.exit_code == 0, result.output
    assert sum(mapped) == 0  # the example's factors are bundled too


def example_texts() -> list[str]:
    from zotero_bridge.sources.files import read_library_file

    items = read_library_file(REPO / "examples" / "library.bib")[0]
    return [item.text for item in items if item.text.strip()]
