"""Score-level fusion, the per-user linear model, and the dense collaborative model (no encoder needed:
the vectors here are built by hand so the tests are fast and exact)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from recommender.collaborative.dense_model import (
    DenseCollaborativeModel,
    knn_factors,
    train_dense_collaborative,
)
from recommender.collaborative.model import ALSSettings
from recommender.errors import InputError
from recommender.items import LibraryItem, Paper
from recommender.scoring.fusion import (
    CONTENT_WEIGHTS,
    LEARNED,
    LEARNED_BASE,
    FusionWeights,
    default_weights,
    fuse,
    scoring_weights,
    stepwise_weights,
)
from recommender.scoring.learned import linear_user_scores
from recommender.scoring.ranking import Recommender


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_fuse_standardises_each_signal_so_scale_does_not_matter():
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[300.0, 100.0, 200.0]])
    fused = fuse({"a": a, "b": b}, {"a": 0.5, "b": 0.5})
    assert fused == pytest.approx(fuse({"a": a * 1000, "b": b / 7}, {"a": 0.5, "b": 0.5}))
    assert np.argmax(fuse({"a": a, "b": b}, {"a": 0.1, "b": 0.9})) == 0  # b's best wins when b dominates
    assert np.argmax(fuse({"a": a, "b": b}, {"a": 0.9, "b": 0.1})) == 2
    with pytest.raises(ValueError, match="no signal"):
        fuse({"a": a}, {"a": 0.0})


def test_stepwise_weights_finds_the_share_that_maximises_quality():
    # quality peaks when "extra" has a share of 0.3 of the total
    weights = stepwise_weights(lambda w: -abs(w.get("extra", 0.0) - 0.3), ["extra"], "base")
    assert weights == pytest.approx({"base": 0.7, "extra": 0.3})
    # a useless signal gets weight 0 (ties go to the smaller share)
    assert stepwise_weights(lambda w: 1.0, ["extra"], "base")["extra"] == 0.0


def test_linear_user_scores_prefer_the_users_direction():
    rng = np.random.default_rng(0)
    topic = _unit(rng.normal(size=(1, 16)))
    library = _unit(topic + 0.3 * rng.normal(size=(8, 16)))
    background = _unit(rng.normal(size=(300, 16)))
    near, far = _unit(topic + 0.3 * rng.normal(size=(1, 16))), _unit(-topic + 0.3 * rng.normal(size=(1, 16)))
    scores = linear_user_scores(library, background, np.vstack([near, far]))
    assert scores[0] > scores[1]
    # excluded rows are never drawn as negatives: excluding all but 5 leaves at most 5 negatives
    assert linear_user_scores(library, background, near, exclude=np.arange(5, 300)).shape == (1,)


def _toy_interactions(n_users=60, n_items=80, seed=0):
    """Two communities: users 0..29 save items 0..39, users 30..59 save items 40..79; item vectors are
    the community direction plus noise."""
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for user in range(n_users):
        block = 0 if user < n_users // 2 else 1
        items = rng.choice(np.arange(block * n_items // 2, (block + 1) * n_items // 2), size=8, replace=False)
        rows += [user] * len(items)
        cols += list(items)
    matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n_users, n_items))
    directions = _unit(rng.normal(size=(2, 24)))
    vectors = _unit(np.repeat(directions, n_items // 2, axis=0) + 0.4 * rng.normal(size=(n_items, 24)))
    return matrix, vectors, directions


@pytest.mark.parametrize("kind", ["knn", "ridge"])
def test_dense_model_scores_the_users_community_first_and_round_trips(kind, tmp_path):
    matrix, vectors, directions = _toy_interactions()
    settings = ALSSettings(factors=8, iterations=8, map_regularization=0.1)
    model = train_dense_collaborative(matrix, vectors, "toy-encoder", settings, map_kind=kind)
    user = model.user_vector(model.factors_for_vectors(vectors[:5]))  # a library from community 0
    new_papers = _unit(np.vstack([directions[0], directions[1]]))
    scores = model.factors_for_vectors(new_papers) @ user
    assert scores[0] > scores[1]
    path = tmp_path / "model.npz"
    model.provenance["fusion_weights"] = {"lexical": 0.1, "learned": 0.5, "collaborative": 0.2}
    model.save(path)
    loaded = DenseCollaborativeModel.load(path)
    assert loaded.encoder_id == "toy-encoder" and loaded.map_kind == kind
    reloaded = loaded.factors_for_vectors(new_papers) @ loaded.user_vector(loaded.factors_for_vectors(vectors[:5]))
    assert np.argmax(reloaded) == np.argmax(scores)
    assert np.allclose(reloaded, scores, rtol=0.05, atol=0.05 * np.abs(scores).max())
    assert default_weights(loaded) == FusionWeights(lexical=0.1, learned=0.5, collaborative=0.2)
    with np.load(path, allow_pickle=False) as data:  # loads without pickle
        assert "provenance" in data


def test_a_dense_model_file_with_the_old_blend_weight_still_loads(tmp_path):
    """The dense model's blend weight is no longer kept (the fusion weights are in its provenance);
    files written before, the shipped one among them, still load and score the same."""
    from recommender.collaborative.dense_model import SHIPPED_MODEL

    matrix, vectors, _ = _toy_interactions()
    model = train_dense_collaborative(matrix, vectors, "toy-encoder", ALSSettings(factors=4, iterations=2),
                                      map_kind="ridge")
    model.save(tmp_path / "new.npz")
    with np.load(tmp_path / "new.npz", allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    assert "blend_weight" not in arrays
    np.savez(tmp_path / "old.npz", **arrays, blend_weight=np.array(0.3))
    old, new = DenseCollaborativeModel.load(tmp_path / "old.npz"), DenseCollaborativeModel.load(tmp_path / "new.npz")
    assert np.array_equal(old.factors_for_vectors(vectors), new.factors_for_vectors(vectors))
    if SHIPPED_MODEL.exists():
        assert DenseCollaborativeModel.load(SHIPPED_MODEL).encoder_id


def test_knn_factors_can_leave_each_item_out_of_its_own_neighbours():
    vectors = _unit(np.eye(4) + 0.01)
    factors = np.arange(8, dtype=np.float32).reshape(4, 2)
    own = knn_factors(vectors, vectors, factors, k=1, temperature=0.05)
    assert np.allclose(own, factors)  # nearest neighbour of each item is itself
    left_out = knn_factors(vectors, vectors, factors, k=1, temperature=0.05, self_rows=np.arange(4))
    assert not np.allclose(left_out, factors)


def test_a_file_that_is_not_a_dense_model_is_a_one_line_error(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, format=np.array("something else"))
    with pytest.raises(InputError, match="not a dense zotrec model"):
        DenseCollaborativeModel.load(path)
    (tmp_path / "broken.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="cannot read the model"):
        DenseCollaborativeModel.load(tmp_path / "broken.npz")
    for settings, provenance in (("[1]", "{}"), ('{"bogus": 1}', "{}"), ("{}", "[1]")):  # found by the slow fuzzer
        np.savez(path, format=np.array("zotrec-collaborative-dense-1"), map_kind=np.array("ridge"),
                 settings=np.array(settings), provenance=np.array(provenance), encoder_id=np.array("e"),
                 item_gram=np.zeros((2, 2)), fold_in_confidence=np.array(1.0), map_weights=np.zeros((2, 2)),
                 map_intercept=np.zeros(2))
        with pytest.raises(InputError, match="cannot read the model"):
            DenseCollaborativeModel.load(path)


def test_scoring_weights_fuse_learned_and_add_a_dense_model_to_any_aggregation():
    assert scoring_weights("top3", None) == ("top3", None)
    assert scoring_weights(LEARNED, None) == (LEARNED_BASE, CONTENT_WEIGHTS)
    assert scoring_weights(LEARNED, None, dense=False) == (LEARNED_BASE, None)  # tf-idf rows: plain top5
    matrix, vectors, _ = _toy_interactions()
    model = train_dense_collaborative(matrix, vectors, "toy-encoder", ALSSettings(factors=4, iterations=2))
    model.provenance["fusion_weights"] = {"lexical": 0.1, "learned": 0.4, "collaborative": 0.2}
    aggregation, weights = scoring_weights("top3", model)
    assert aggregation == "top3" and weights.learned == 0 and weights.collaborative == pytest.approx(0.2 / 0.5)
    assert scoring_weights(LEARNED, model)[1] == FusionWeights(lexical=0.1, learned=0.4, collaborative=0.2)
    assert FusionWeights(lexical=0.1, learned=0.4).shares(["content", "learned"]) == pytest.approx(
        {"learned": 0.4, "content": 0.6})  # an absent signal's weight goes to the content topK


class _Words:
    """A bag-of-words 'encoder' (deterministic, no model files): one dimension per known word."""

    model_id = "test-words"
    dimension = 8
    WORDS = ("graph", "neural", "network", "protein", "folding", "bayesian", "optimisation", "kernel")

    def encode(self, texts):
        rows = np.array([[text.lower().count(word) for word in self.WORDS] for text in texts], dtype=np.float32)
        rows += 1e-3
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_recommender_with_fusion_keeps_content_reasons(tmp_path):
    from recommender.features.cache import EmbeddingCache
    from recommender.features.dense import DenseRepresentation

    papers = [Paper(id="g", title="Graph neural network pooling"), Paper(id="p", title="Protein folding kernels"),
              Paper(id="b", title="Bayesian optimisation"), Paper(id="n", title="Neural network pruning")]
    library = [LibraryItem(key="A", title="Graph neural network message passing"),
               LibraryItem(key="B", title="Neural network training")]
    representation = DenseRepresentation(_Words(), EmbeddingCache(tmp_path / "cache.sqlite3"))
    recommender = Recommender(papers, representation=representation)
    assert recommender.weights == CONTENT_WEIGHTS and recommender.base == LEARNED_BASE
    recs = recommender.recommend(library, top_n=4)
    assert recs[0].paper.id in ("g", "n") and {r.paper.id for r in recs[:2]} == {"g", "n"}
    assert recs[0].reasons and recs[0].reasons[0].item_key in ("A", "B")


def _words_model(tmp_path, beta: float) -> DenseCollaborativeModel:
    """A kNN model trained on random saves of word-combination titles, embedded by _Words."""
    from recommender.features.cache import EmbeddingCache
    from recommender.features.dense import DenseRepresentation

    rng = np.random.default_rng(5)
    titles = [" ".join(rng.choice(_Words.WORDS, size=3, replace=False)) + f" {i}" for i in range(60)]
    words = DenseRepresentation(_Words(), EmbeddingCache(tmp_path / "cache.sqlite3"))
    matrix = sparse.csr_matrix((rng.random((30, 60)) < 0.15).astype(np.float32))
    model = train_dense_collaborative(matrix, words.transform(titles), _Words.model_id,
                                      ALSSettings(factors=4, iterations=3))
    model.provenance.update({"adapter_beta": beta,
                             "fusion_weights": {"lexical": 0.0, "learned": 0.6, "collaborative": 0.2}})
    model._representation = words
    return model


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_the_linear_model_runs_in_the_adapter_space_the_model_records(tmp_path, beta):
    from recommender.scoring.adapter import adapted

    model = _words_model(tmp_path, beta)
    papers = [Paper(id=str(i), title=title) for i, title in enumerate(
        ["graph neural pooling", "protein folding", "bayesian kernel", "neural network pruning",
         "kernel optimisation", "graph kernel"] * 40)]
    library = ["graph neural network", "protein kernel folding", "bayesian optimisation"]
    recommender = Recommender(papers, representation=model._representation, model=model)
    rows = model._representation.transform(library)
    owned = np.zeros(len(papers), dtype=bool)
    parts = recommender.signals(library, rows, np.zeros(len(papers)), owned)
    corpus = recommender.corpus_rows
    if beta:
        factors = model.item_factors([paper.text for paper in papers])
        rows, corpus = adapted(rows, model.item_factors(library), beta), adapted(corpus, factors, beta)
        plain = linear_user_scores(model._representation.transform(library), recommender.corpus_rows,
                                   recommender.corpus_rows, exclude=np.flatnonzero(owned))
        assert not np.allclose(parts["learned"], plain)  # the adapter changes the linear model's scores
    assert parts["learned"] == pytest.approx(linear_user_scores(rows, corpus, corpus, exclude=np.flatnonzero(owned)))
    # the fused score's signals, and tf-idf when the fine order (fusion.FINE_WEIGHTS: this model records none) uses it
    assert set(parts) == {"content", "learned", "collaborative"} | ({"lexical"} & set(recommender.fine))


def test_a_model_the_fused_score_cannot_use_is_an_error_not_silently_skipped(tmp_path):
    papers = [Paper(id=str(i), title=f"graph kernel {i}") for i in range(5)]
    model = _words_model(tmp_path, 0.5)
    with pytest.raises(ValueError, match="dense features"):  # tf-idf rows have no collaborative signal
        Recommender(papers, representation="tfidf", model=model)
    del model.provenance["fusion_weights"]  # as in a model trained before the fused score
    with pytest.raises(ValueError, match="no fusion weights"):
        Recommender(papers, representation=model._representation, model=model)


def test_rows_arriving_in_blocks_make_the_same_design_as_one_array():
    from recommender.scoring.adapter import adapted, adapted_blocks
    from recommender.scoring.learned import RowBlocks, design

    rng = np.random.default_rng(8)
    vectors, factors = rng.normal(size=(23, 6)).astype(np.float32), rng.normal(size=(23, 3)).astype(np.float32)
    negatives = _unit(rng.normal(size=(7, 9)))
    chosen = np.array([3, 17, 4, 0, 22, 9])
    blocks = RowBlocks(len(chosen), adapted_blocks(vectors, factors, 0.5, chosen, block=4))  # a short last block
    x, y = design(blocks, negatives)
    expected_x, expected_y = design(adapted(vectors, factors, 0.5)[chosen], negatives)
    assert np.allclose(x, expected_x, rtol=1e-6) and np.array_equal(y, expected_y)
    with pytest.raises(ValueError, match="5 positive rows arrived, 6 expected"):
        design(RowBlocks(6, [x[:5]]), negatives)


def test_the_fused_scores_top_papers_are_ordered_by_the_fine_order(tmp_path):
    """The shipped path (Recommender) keeps the fused score's top FINE_TOP papers and orders them by the fine
    fusion; with a model whose fine order is the content top3 alone, that order is the top3's (worked out here
    from the similarities), and it differs from the fused order."""
    from recommender.scoring.aggregation import top_values
    from recommender.scoring.fusion import FINE_TOP

    model = _words_model(tmp_path, 0.5)
    model.provenance["fine_weights"] = {"nearest": 1.0}
    rng = np.random.default_rng(11)
    titles = [" ".join(rng.choice(_Words.WORDS, size=rng.integers(2, 7))) for _ in range(150)]
    papers = [Paper(id=str(i), title=title) for i, title in enumerate(titles)]
    library = [LibraryItem(key=f"L{i}", title=title) for i, title in enumerate(
        ["graph neural network", "graph network pooling", "protein kernel folding", "neural network kernel"])]
    fused = Recommender(papers, representation=model._representation, model=model, fine_order=False)
    shipped = Recommender(papers, representation=model._representation, model=model)
    assert shipped.fine == {"nearest": 1.0} and fused.fine == {}
    before = [rec.paper.id for rec in fused.recommend(library, top_n=0)]
    after = shipped.recommend(library, top_n=0)
    order = [rec.paper.id for rec in after]
    assert set(order[:FINE_TOP]) == set(before[:FINE_TOP]) and order[FINE_TOP:] == before[FINE_TOP:]
    rows = model._representation.transform([item.text for item in library])
    top3 = top_values(rows, shipped.corpus_rows, "top5").scores("top3")
    place = {paper_id: rank for rank, paper_id in enumerate(before)}
    picked = [int(paper_id) for paper_id in before[:FINE_TOP]]
    standardised = dict(zip(picked, fuse({"nearest": top3[picked]}, {"nearest": 1.0})))  # as the cascade sees it
    expected = sorted(before[:FINE_TOP], key=lambda paper_id: (-standardised[int(paper_id)], place[paper_id]))
    assert order[:FINE_TOP] == expected
    assert order[:FINE_TOP] != before[:FINE_TOP]
    scores = [rec.score for rec in after]
    assert scores == sorted(scores, reverse=True)  # the values still fall with the rank


def test_fine_weights_come_from_the_model_else_the_measured_default():
    from recommender.scoring.fusion import FINE_WEIGHTS, fine_weights

    assert fine_weights(None) == {k: v for k, v in FINE_WEIGHTS.items() if k != "collaborative" and v > 0}

    from recommender.collaborative.card import ModelCard

    class Stored:
        card = ModelCard.read({"fine_weights": {"nearest": 0.6, "learned": 0.4, "unknown": 1.0}}, "enc", "stub")

    assert fine_weights(Stored()) == {"nearest": 0.6, "learned": 0.4}
