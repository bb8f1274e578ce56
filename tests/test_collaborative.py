"""The tf-idf collaborative peer on tiny known-answer data: ALS, the text → factor map, fold-in, save/load, blend."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from recommender.collaborative.model import ALSSettings
from recommender.evaluation.peers import choose_blend_weight, hybrid_scores
from recommender.evaluation.tfidf_peer import CollaborativeModel, train_collaborative
from recommender.errors import InputError
from recommender.scoring.fusion import standardise

SMALL = ALSSettings(factors=8, iterations=10, alpha=10.0, weighting="binary", regularization=0.1,
                    map_regularization=0.1, n_features=1 << 16, random_state=3)
GRAPH_WORDS = ["graph", "network", "community", "clustering", "spectral", "random walk"]
PROTEIN_WORDS = ["protein", "folding", "enzyme", "peptide", "binding", "molecular dynamics"]


def _two_camps(seed: int = 0):
    """Users 0–14 save graph papers (items 0–11), users 15–29 protein papers (12–23)."""
    rng = np.random.default_rng(seed)
    rows, columns = [], []
    for user in range(30):
        block = np.arange(12) if user < 15 else np.arange(12, 24)
        for item in rng.choice(block, size=5, replace=False):
            rows.append(user)
            columns.append(item)
    matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, columns)), shape=(30, 24))
    texts = [f"{GRAPH_WORDS[i % 6]} {GRAPH_WORDS[(i + 1) % 6]} study {i}" for i in range(12)]
    texts += [f"{PROTEIN_WORDS[i % 6]} {PROTEIN_WORDS[(i + 2) % 6]} study {i}" for i in range(12)]
    return matrix, texts


@pytest.fixture(scope="module")
def model():
    matrix, texts = _two_camps()
    return train_collaborative(matrix, texts, SMALL)


def test_als_puts_each_camp_on_its_own_items(model):
    scores = model.training_user_factors @ model.training_item_factors.T
    assert scores[:15, :12].mean() > scores[:15, 12:].mean() + 0.3
    assert scores[15:, 12:].mean() > scores[15:, :12].mean() + 0.3


def test_cold_item_factor_comes_from_its_text(model):
    cold = model.item_factors(["spectral clustering of a community graph", "enzyme binding and protein folding"])
    users = model.training_user_factors
    graph_people, protein_people = users[:15] @ cold.T, users[15:] @ cold.T
    assert graph_people[:, 0].mean() > graph_people[:, 1].mean()
    assert protein_people[:, 1].mean() > protein_people[:, 0].mean()


def test_user_folded_in_from_library_text(model):
    library = ["random walk on a network", "community detection in graphs"]
    scores = model.scores(library, ["spectral graph clustering", "peptide binding dynamics"])
    assert scores[0] > scores[1]


def test_unsaved_items_do_not_train_the_map():
    matrix, texts = _two_camps()
    texts = [*texts, "protein folding enzyme"]  # an item nobody saved: its zero factor must not teach the map
    matrix = sparse.hstack([matrix, sparse.csr_matrix((30, 1))]).tocsr()
    trained = train_collaborative(matrix, texts, SMALL)
    assert np.abs(trained.item_factors(["protein folding enzyme"])).sum() > 0


def test_same_random_state_same_model():
    matrix, texts = _two_camps()
    first = train_collaborative(matrix, texts, SMALL)
    second = train_collaborative(matrix, texts, SMALL)
    np.testing.assert_allclose(first.map_weights, second.map_weights, rtol=1e-5, atol=1e-6)


def test_save_load_round_trip_without_pickle(model, tmp_path):
    path = tmp_path / "model.npz"
    model.blend_weight = 0.3
    model.save(path)
    loaded = CollaborativeModel.load(path)
    library, corpus = ["graph community"], ["spectral clustering", "protein binding", "unknown words only"]
    np.testing.assert_allclose(loaded.scores(library, corpus), model.scores(library, corpus), rtol=1e-5)
    assert loaded.blend_weight == 0.3
    assert loaded.settings == model.settings
    with np.load(path, allow_pickle=False) as data:  # every array is plain data
        assert all(data[name].dtype != object for name in data.files)
    assert loaded.provenance["saves"] == 150


def test_load_rejects_other_files(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.ones(3))
    with pytest.raises(InputError, match="not a zotrec model"):
        CollaborativeModel.load(other)
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="broken.npz: cannot read the model"):
        CollaborativeModel.load(broken)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(InputError, match="truncated.npz: cannot read the model"):
        CollaborativeModel.load(truncated)


def test_load_names_a_provenance_nested_too_deep_in_one_line(model, tmp_path):
    path = tmp_path / "model.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["provenance"] = np.array("[" * 100_000)
    deep = tmp_path / "deep.npz"
    np.savez(deep, **arrays)
    with pytest.raises(InputError, match="deep.npz: cannot read the model .field 'provenance' is JSON nested more"):
        CollaborativeModel.load(deep)


def test_standardise_and_blend():
    assert np.allclose(standardise(np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]]))[1], 0.0)
    content, collaborative = np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 30.0])
    assert np.argmax(hybrid_scores(content, collaborative, 0.0)) == 0
    assert np.argmax(hybrid_scores(content, collaborative, 1.0)) == 2
    with pytest.raises(ValueError, match="between 0 and 1"):
        hybrid_scores(content, collaborative, 1.5)


def test_choose_blend_weight_takes_best_then_smaller():
    assert choose_blend_weight(lambda w: -(w - 0.3) ** 2) == 0.3
    assert choose_blend_weight(lambda w: 1.0) == 0.0
