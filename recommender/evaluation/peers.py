"""Other recommenders' ranking rules, re-implemented on one fold's features so they can be compared fairly.

Every rule returns a (users × held-out items) score matrix for the users of a FoldContext
(evaluation.py). Content rules see only the users' training items' text; nothing here ever
reads a held-out item's saves.
"""

from __future__ import annotations

import logging

import numpy as np

from recommender.scoring.aggregation import parse_aggregation
from recommender.scoring.blend import blend

log = logging.getLogger(__name__)

SVM_C = 0.01  # arxiv-sanity-lite serve.py: LinearSVC(class_weight="balanced", C=0.01)
LOGREG_NEGATIVES_PER_POSITIVE = 10
LOGREG_MIN_NEGATIVES = 100


def random_scores(context, seed: int = 0) -> np.ndarray:
    """The floor: uniform random scores."""
    rng = np.random.default_rng(seed)
    return rng.random((len(context.users), len(context.test_items)), dtype=np.float32)


def popularity_scores(context) -> np.ndarray:
    """Saves per held-out item in the training matrix: all zero unless test saves leaked into training."""
    counts = np.asarray(context.train_matrix[:, context.test_items].sum(axis=0)).ravel().astype(np.float32)
    return np.broadcast_to(counts, (len(context.users), len(counts)))


def aggregate_similarities(similarities: np.ndarray, aggregation: str) -> np.ndarray:
    """profile.aggregate's rule on a precomputed (library items × candidates) similarity block."""
    kind, k = parse_aggregation(aggregation)
    n_items = similarities.shape[0]
    if kind == "mean" or k >= n_items:
        return similarities.mean(axis=0)
    return np.partition(similarities, n_items - k, axis=0)[n_items - k :].mean(axis=0)


def content_scores(context, aggregation: str) -> np.ndarray:
    """Similarity of each held-out item to the user's training items, aggregated (max, mean, topK)."""
    scores = np.empty((len(context.users), len(context.test_items)), dtype=np.float32)
    for row, positions in enumerate(context.user_train_positions):
        scores[row] = aggregate_similarities(context.similarity[positions], aggregation)
    return scores


def svm_scores(context, users: np.ndarray) -> np.ndarray:
    """arxiv-sanity-lite: a linear SVM per user, their items positive, every other training item negative."""
    from sklearn.svm import LinearSVC

    scores = np.empty((len(users), len(context.test_items)), dtype=np.float32)
    rows = context.train_rows_compact
    for out, row in enumerate(users):
        labels = np.zeros(rows.shape[0])
        labels[context.user_train_positions[row]] = 1.0
        svm = LinearSVC(C=SVM_C, class_weight="balanced", tol=1e-4, max_iter=10_000)
        svm.fit(rows, labels)
        scores[out] = svm.decision_function(context.test_rows_compact)
    return scores


def logistic_scores(context, seed: int = 0) -> np.ndarray:
    """Scholar Inbox style: logistic regression per user on their items and randomly sampled negatives."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    rows, test_rows = context.train_rows_compact, context.test_rows_compact
    scores = np.empty((len(context.users), len(context.test_items)), dtype=np.float32)
    for row, positives in enumerate(context.user_train_positions):
        wanted = max(LOGREG_MIN_NEGATIVES, LOGREG_NEGATIVES_PER_POSITIVE * len(positives))
        candidates = np.setdiff1d(np.arange(rows.shape[0]), positives, assume_unique=True)
        negatives = rng.choice(candidates, size=min(wanted, len(candidates)), replace=False)
        sample = rows[np.concatenate([positives, negatives])]
        columns = np.unique(sample.indices)
        labels = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
        model = LogisticRegression(C=1.0, solver="liblinear").fit(sample[:, columns], labels)
        scores[row] = test_rows[:, columns] @ model.coef_.ravel()
    return scores


def ctr_like_scores(context) -> np.ndarray:
    """Content → ALS only: the user's trained ALS vector against held-out items' predicted factors."""
    return context.user_factors @ context.test_factors.T


def folded_user_scores(context) -> np.ndarray:
    """Content → ALS with the user folded in from their items' text (what zotrec does for a Zotero user)."""
    scores = np.empty((len(context.users), len(context.test_items)), dtype=np.float32)
    for row, positions in enumerate(context.user_train_positions):
        user = context.model.user_vector(context.train_factors_from_text[positions])
        scores[row] = context.test_factors @ user
    return scores


def hybrid_scores(content: np.ndarray, collaborative: np.ndarray, weight: float) -> np.ndarray:
    """The hybrid rule on whole score matrices (one row per user)."""
    return blend(content, collaborative, weight).astype(np.float32)
