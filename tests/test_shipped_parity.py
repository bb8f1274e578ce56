"""The evaluation's shipped row is the shipped function's own scores: on a small synthetic split, each user's
"zotrec fused (shipped form)" scores (evaluation/protocol.py shipped_parts, peers.shipped_order) equal what
`Recommender.recommend` gives for that user when it is handed the split's inputs — the same rows, the
dataset-fitted tf-idf, the cross-fitted factors (the inputs that differ by design, docs/architecture.md) —
scores allclose and the ranking exactly. A change to either side's arithmetic alone breaks it.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from recommender.collaborative.card import ModelCard
from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.model import ALSSettings
from recommender.evaluation import peers
from recommender.evaluation.folds import item_cold_folds
from recommender.evaluation.protocol import shipped_parts
from recommender.evaluation.dumps import SplitSignals
from recommender.evaluation.splits import DenseItems, prepare_fold, users_only
from benchmarks.lib.weight_grid import ScoredSplit, Weighting
from recommender.items import LibraryItem, Paper
from recommender.scoring import ranking
from recommender.scoring.fusion import FusionWeights
from recommender.scoring.ranking import Recommender
from recommender.features.tfidf import TfidfRepresentation

BETA = 0.5
WEIGHTS = {"content": 0.3, "lexical": 0.1, "learned": 0.4, "collaborative": 0.2}
FINE = {"nearest": 0.3, "max": 0.1, "content": 0.1, "learned": 0.3, "collaborative": 0.2}
SETTINGS = ALSSettings(factors=8, iterations=4, n_features=1 << 12, random_state=1)
TOPICS = (("graph", "kernel", "spectral", "node", "edge", "walk"), ("protein", "folding", "residue", "binding",
          "structure", "chain"), ("bayesian", "posterior", "prior", "sampling", "variational", "evidence"),
          ("policy", "reward", "agent", "bandit", "regret", "exploration"))


def _data(rng: np.random.Generator) -> tuple[InteractionData, np.ndarray]:
    """1,250 items on 4 topics, each with a unique title and a stand-in unit embedding near its topic (a fold's
    250 candidates: more than the linear model draws as negatives, so the seed matters); 60 users who save
    mostly within their topic."""
    n_items, n_users, dim = 1250, 60, 24
    topic = rng.integers(0, len(TOPICS), n_items)
    texts = [f"paper {i} " + " ".join(rng.choice(TOPICS[t], size=4)) for i, t in enumerate(topic)]
    centres = rng.normal(size=(len(TOPICS), dim))
    vectors = (centres[topic] + 0.8 * rng.normal(size=(n_items, dim))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows, columns = [], []
    for user in range(n_users):
        own = np.flatnonzero(topic == user % len(TOPICS))
        saved = np.union1d(rng.choice(own, size=14, replace=False), rng.choice(n_items, size=2, replace=False))
        rows += [user] * len(saved)
        columns += saved.tolist()
    matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, columns)), shape=(n_users, n_items))
    return InteractionData("synthetic", matrix, texts, True, "test"), vectors


class _Table:
    """A representation that looks each text's row up: the split's own rows, handed to the Recommender."""

    name = "table"

    def __init__(self, rows_by_text: dict[str, np.ndarray]) -> None:
        self.rows_by_text = rows_by_text

    def fit(self, texts):
        return self

    def transform(self, texts):
        rows = [self.rows_by_text[text] for text in texts]
        return sparse.vstack(rows).tocsr() if sparse.issparse(rows[0]) else np.vstack(rows)


class _Model:
    """The split's collaborative model with each text's predicted factors looked up (the user's items'
    cross-fitted, the candidates' from the map), as the evaluation hands them in."""

    def __init__(self, fold, factors_by_text: dict[str, np.ndarray]) -> None:
        self.fold_model, self.factors_by_text = fold.model, factors_by_text
        self.card = ModelCard("table", "parity", {name: WEIGHTS[name] for name in ("lexical", "learned",
                                                                                  "collaborative")}, FINE, BETA)
        self.cache_id = "parity-test"

    def item_factors(self, texts):
        return np.vstack([self.factors_by_text[text] for text in texts])

    def user_vector(self, factors):
        return self.fold_model.user_vector(factors)


@pytest.fixture(scope="module")
def split():
    data, vectors = _data(np.random.default_rng(3))
    fold = prepare_fold(data, item_cold_folds(data.n_items)[0], SETTINGS, DenseItems(vectors, "table"))
    # the split's tf-idf rows (splits.py: fitted on the training items' texts), for the run's lexical signal
    lexical = TfidfRepresentation(SETTINGS.n_features, SETTINGS.ngram_range).fit(
        [data.texts[i] for i in fold.train_items]).transform(data.texts)
    return data, vectors, fold, lexical


def _run_side(data, vectors, fold, lexical, row: int, monkeypatch, weights: FusionWeights | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """Recommender.recommend's ranking (candidate positions, best first) and scores for the fold's user `row`, on the split's inputs."""
    train_texts = [data.texts[i] for i in fold.train_items]
    test_texts = [data.texts[i] for i in fold.test_items]
    factors = {**dict(zip(train_texts, fold.train_factors_from_text)), **dict(zip(test_texts, fold.test_factors))}
    lexical_rows = {text: lexical[i] for i, text in enumerate(data.texts)}

    class _LexicalIndex:
        def transform(self, texts):
            return sparse.vstack([lexical_rows[text] for text in texts]).tocsr()

    monkeypatch.setattr(ranking, "lexical_corpus", lambda papers, memo=None: (
        _LexicalIndex(), lexical[fold.test_items].tocsr()))
    papers = [Paper(id=str(i), title=text) for i, text in zip(fold.test_items, test_texts)]
    recommender = Recommender(papers, representation=_Table(dict(zip(data.texts, vectors))),
                              corpus_rows=fold.test_vectors, model=_Model(fold, factors),
                              weights=weights or FusionWeights(**{name: WEIGHTS[name] for name in (
                                  "lexical", "learned", "collaborative")}),
                              interests=False)
    library = [LibraryItem(key=f"K{i}", title=train_texts[i]) for i in fold.positions[row]]
    ranked = recommender.recommend(library, top_n=0)
    place = {paper.id: index for index, paper in enumerate(papers)}
    return np.array([place[r.paper.id] for r in ranked]), np.array([r.score for r in ranked])


def test_the_shipped_row_is_the_recommenders_own_scores(split, monkeypatch):
    data, vectors, fold, lexical = split
    users = [row for row, positions in enumerate(fold.positions) if len(positions) >= 3][:4]
    assert len(users) == 4
    for row in users:
        # one user alone: their negatives are drawn with seed 0 (seed + row), the run's seed
        signals, _ = shipped_parts(users_only(fold, np.array([row])), "top5", 0, BETA)
        _, evaluated = peers.shipped_order(signals, WEIGHTS, FINE)
        order, scores = _run_side(data, vectors, fold, lexical, row, monkeypatch)
        assert len(order) == len(fold.test_items)  # every candidate ranked, none owned
        assert np.array_equal(np.lexsort((np.arange(len(order)), -evaluated[0])), order)
        np.testing.assert_allclose(evaluated[0][order], scores, rtol=1e-5, atol=1e-6)


def test_the_weight_choice_scores_a_library_size_dependent_default_as_the_recommender_does(split, monkeypatch):
    """benchmarks/lib/weight_grid.py's shipped form (the linear model at n / (n + n0) of its weight, in the fused
    score and the fine order) is Recommender.recommend's for users of different library sizes."""
    data, vectors, fold, lexical = split
    weights = FusionWeights(lexical=0.1, learned=0.4, collaborative=0.2, learned_evidence=12.0)
    by_size = {}
    for row, positions in enumerate(fold.positions):
        by_size.setdefault(len(positions), row)
    users = [by_size[size] for size in sorted(by_size) if size >= 3][:3]
    assert len({len(fold.positions[row]) for row in users}) >= 2
    for row in users:
        alone = users_only(fold, np.array([row]))
        signals, _ = shipped_parts(alone, "top5", 0, BETA)
        split_signals = SplitSignals(signals, alone.relevant, np.array([len(fold.positions[row])]), np.zeros(0, int),
                                     np.zeros((0, 1), int), np.zeros((0, 1), bool), {})
        evaluated = ScoredSplit(split_signals, dtype=np.float64).shipped_form(Weighting(weights, FINE))
        order, scores = _run_side(data, vectors, fold, lexical, row, monkeypatch, weights)
        assert np.array_equal(np.lexsort((np.arange(len(order)), -evaluated[0])), order)
        np.testing.assert_allclose(evaluated[0][order], scores, rtol=1e-5, atol=1e-6)
        full, _ = _run_side(data, vectors, fold, lexical, row, monkeypatch,
                            FusionWeights(lexical=0.1, learned=0.4, collaborative=0.2))
        assert not np.array_equal(full, order)  # the evidence share changed this user's list
