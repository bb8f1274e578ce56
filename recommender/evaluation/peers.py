"""The ranking rules compared on a split (evaluation/splits.py Fold), peers' and zotrec's, on either kind of
features.

Every rule returns a (users × held-out items) score matrix for the fold's users. Content rules see
only the users' training items' features; nothing here ever reads a held-out item's saves.
"""

from __future__ import annotations

from recommender.errors import SettingError
import logging

import numpy as np
from scipy import sparse

from recommender.scoring.aggregation import parse_aggregation
from recommender.scoring.fusion import standardise
from recommender.scoring.learned import fit_logistic, linear_user_scores

log = logging.getLogger(__name__)

SVM_C = 0.01  # arxiv-sanity-lite serve.py: LinearSVC(class_weight="balanced", C=0.01)
LOGREG_NEGATIVES_PER_POSITIVE = 10
LOGREG_MIN_NEGATIVES = 100


def random_scores(fold, seed: int = 0) -> np.ndarray:
    """The floor: uniform random scores."""
    rng = np.random.default_rng(seed)
    return rng.random((len(fold.users), len(fold.test_items)), dtype=np.float32)


def popularity_scores(fold) -> np.ndarray:
    """Saves per held-out item in the training matrix: all zero unless test saves leaked into training."""
    counts = np.asarray(fold.train_matrix[:, fold.test_items].sum(axis=0)).ravel().astype(np.float32)
    return np.broadcast_to(counts, (len(fold.users), len(counts)))


def aggregate_similarities(similarities: np.ndarray, aggregation: str) -> np.ndarray:
    """profile.aggregate's rule on a precomputed (library items × candidates) similarity block."""
    kind, k = parse_aggregation(aggregation)
    n_items = similarities.shape[0]
    if kind == "mean" or k >= n_items:
        return similarities.mean(axis=0)
    return np.partition(similarities, n_items - k, axis=0)[n_items - k :].mean(axis=0)


def content_scores(fold, aggregation: str, similarity: np.ndarray | None = None) -> np.ndarray:
    """Similarity of each held-out item to the user's training items (`similarity`: another matrix than the
    fold's own, e.g. its tf-idf cosine on dense features), aggregated (max, mean, topK)."""
    similarity = fold.similarity if similarity is None else similarity
    scores = np.empty((len(fold.users), len(fold.test_items)), dtype=np.float32)
    for row, positions in enumerate(fold.positions):
        scores[row] = aggregate_similarities(similarity[positions], aggregation)
    return scores


def svm_scores(fold, users: np.ndarray) -> np.ndarray:
    """arxiv-sanity-lite: a linear SVM per user, their items positive, every other training item negative."""
    from sklearn.svm import LinearSVC

    scores = np.empty((len(users), len(fold.test_items)), dtype=np.float32)
    for out, row in enumerate(users):
        labels = np.zeros(fold.train_vectors.shape[0])
        labels[fold.positions[row]] = 1.0
        svm = LinearSVC(C=SVM_C, class_weight="balanced", tol=1e-4, max_iter=10_000)
        svm.fit(fold.train_vectors, labels)
        scores[out] = svm.decision_function(fold.test_vectors)
    return scores


def logistic_scores(fold, seed: int = 0) -> np.ndarray:
    """Scholar Inbox's rule: a logistic regression per user, their items against negatives sampled from the
    training items (not theirs); zotrec's own fit (scoring/learned.py). On tf-idf the fit sees only the
    columns the user's sample uses (the others would weigh 0), so its design matrix stays small."""
    if not sparse.issparse(fold.train_vectors):
        return np.vstack([linear_user_scores(fold.train_vectors[p], fold.train_vectors, fold.test_vectors,
                                             seed=seed + row, exclude=p)
                          for row, p in enumerate(fold.positions)]).astype(np.float32)
    rng = np.random.default_rng(seed)
    rows, test_rows = fold.train_vectors, fold.test_vectors
    scores = np.empty((len(fold.users), len(fold.test_items)), dtype=np.float32)
    for row, positives in enumerate(fold.positions):
        wanted = max(LOGREG_MIN_NEGATIVES, LOGREG_NEGATIVES_PER_POSITIVE * len(positives))
        candidates = np.setdiff1d(np.arange(rows.shape[0]), positives, assume_unique=True)
        negatives = rng.choice(candidates, size=min(wanted, len(candidates)), replace=False)
        sample = rows[np.concatenate([positives, negatives])]
        columns = np.unique(sample.indices)
        labels = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
        coef = fit_logistic(sample[:, columns].toarray(), labels)
        scores[row] = test_rows[:, columns] @ coef
    return scores


def learned_scores(fold, seed: int = 0) -> np.ndarray:
    """zotrec's per-user linear model (scoring/learned.py): negatives sampled from the candidates, as at run time."""
    return np.vstack([linear_user_scores(fold.train_vectors[p], fold.test_vectors, fold.test_vectors, seed=seed + row)
                      for row, p in enumerate(fold.positions)]).astype(np.float32)


def ctr_like_scores(fold) -> np.ndarray:
    """Content → ALS only: the user's trained ALS vector against held-out items' predicted factors."""
    return fold.user_factors @ fold.test_factors.T


def folded_user_scores(fold) -> np.ndarray:
    """Content → ALS with the user folded in from their items' predicted factors (what zotrec does for a
    Zotero user)."""
    scores = np.empty((len(fold.users), len(fold.test_items)), dtype=np.float32)
    for row, positions in enumerate(fold.positions):
        scores[row] = fold.test_factors @ fold.model.user_vector(fold.train_factors_from_text[positions])
    return scores


BLEND_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def hybrid_scores(content: np.ndarray, collaborative: np.ndarray, weight: float) -> np.ndarray:
    """The tf-idf model's hybrid rule, (1 − weight)·z(content) + weight·z(collaborative), row by row."""
    if not 0.0 <= weight <= 1.0:
        raise SettingError(f"blend weight must be between 0 and 1, got {weight}")
    return ((1.0 - weight) * standardise(content) + weight * standardise(collaborative)).astype(np.float32)


def choose_blend_weight(quality, grid=BLEND_GRID) -> float:
    """The grid weight with the best validation quality (ties: the smaller weight, i.e. more content)."""
    results = {weight: quality(weight) for weight in grid}
    return max(results, key=lambda weight: (results[weight], -weight))


def fused_signals(fold, aggregation: str, seed: int = 0) -> dict[str, np.ndarray]:
    """The inputs of zotrec's fused score (scoring/fusion.py) for every user of a dense split."""
    return {"content": content_scores(fold, aggregation),
            "lexical": content_scores(fold, aggregation, fold.lexical_similarity),
            "learned": learned_scores(fold, seed),
            "collaborative": folded_user_scores(fold)}
