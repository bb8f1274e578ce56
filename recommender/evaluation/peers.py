"""The ranking rules compared on a split (evaluation/splits.py Fold), peers' and zotrec's, on either kind of
features.

Every rule returns a (users × held-out items) score matrix for the fold's users. Content rules see
only the users' training items' features; nothing here ever reads a held-out item's saves.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

import numpy as np
from scipy import sparse

from recommender.errors import SettingError
from recommender.scoring.adapter import adapted
from recommender.scoring.aggregation import block_values, parse_aggregation
from recommender.scoring.fusion import FINE_TOP, SIGNALS, cascade, fuse, standardise
from recommender.scoring.learned import fit_logistic, linear_user_scores
from recommender.scoring.signals import NEAREST_SIGNALS, Negatives, UserInputs, learned_signal, user_signals

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
    """zotrec's per-user linear model (scoring/signals.py learned_signal) on the fold's own vectors, negatives
    sampled from the candidates as at run time (seeded seed + row)."""
    owned = np.zeros(len(fold.test_items), dtype=bool)
    return np.vstack([learned_signal(fold.train_vectors[p], fold.test_vectors, owned, eval_negatives(seed, row))
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


SHIPPED_SIGNALS = (*SIGNALS, *(name for name, _ in NEAREST_SIGNALS))  # and the fine order's nearest ones


def eval_negatives(seed: int, row: int) -> Negatives:
    """The evaluation's negative sampling: seeded per user (seed + row), so users draw apart. Nothing is
    excluded: the candidates are held-out items, none of them the user's own."""
    return Negatives(seed=seed + row, exclude_owned=False)


def shipped_signals(fold, aggregation: str, seed: int = 0, *, beta: float = 0.0,
                    wanted: Collection[str] = SHIPPED_SIGNALS) -> dict[str, np.ndarray]:
    """zotrec's signals (the content topK and each `wanted` one) for every user of a dense split, each
    user's from scoring/signals.py user_signals, the function Recommender.signals calls, on the split's
    inputs: the held-out items as candidates; the split's own similarities (its tf-idf fitted on the
    dataset's training items); the user's items' factors cross-fitted (splits.py); eval_negatives. The
    linear model in the adapter's space when `beta` > 0."""
    shape, owned = (len(fold.users), len(fold.test_items)), np.zeros(len(fold.test_items), dtype=bool)
    space = adapted(fold.test_vectors, fold.test_factors, beta) if beta > 0 and "learned" in wanted else None
    out: dict[str, np.ndarray] = {}
    for row, positions in enumerate(fold.positions):
        values = block_values(fold.similarity[positions], aggregation)
        lexical = (block_values(fold.lexical_similarity[positions], aggregation)
                   if "lexical" in wanted and fold.lexical_similarity is not None else None)
        inputs = UserInputs(content=values.scores(aggregation), rows=fold.train_vectors[positions],
                            candidates=fold.test_vectors, owned=owned, values=values, lexical=lexical,
                            factors=fold.train_factors_from_text[positions], candidate_factors=fold.test_factors,
                            user_vector=fold.model.user_vector, adapted_candidates=space)
        for name, scores in user_signals(inputs, aggregation, wanted, eval_negatives(seed, row), beta).items():
            out.setdefault(name, np.empty(shape, dtype=np.float32))[row] = scores
    return out


def fused_signals(fold, aggregation: str, seed: int = 0) -> dict[str, np.ndarray]:
    """The inputs of zotrec's fused score (scoring/fusion.py) for every user of a dense split: shipped_signals'
    content topK, tf-idf topK, linear model (on the fold's own vectors) and collaborative score."""
    return shipped_signals(fold, aggregation, seed, wanted=SIGNALS)


def shipped_order(signals: dict[str, np.ndarray], weights: dict[str, float], fine_order: dict[str, float]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(the fused order, the shipped form) of these signals: fused with `weights`, its FINE_TOP best ordered by
    `fine_order` (fusion.cascade), as Recommender.recommend does before the library's authors and steering."""
    fused = fuse(signals, weights)
    return fused, cascade(fused, signals, fine_order, FINE_TOP)
