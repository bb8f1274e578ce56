"""Validation sweeps behind docs/evaluation.md's "What else was tried" (issue 16): on the cold validation
split of fold 0's training items (20 %, seed 7; test items left out), for a sample of users, recall@50
of the fused score when one part changes. Nothing here reads a test fold.

    python benchmarks/dense_variants.py citeulike-a:../shared/data/citeulike-a SWEEP [users]
    # SWEEP: adapter | maps | mlp | als | itemcf | lexlearn | weights;  users: sample size (default 1500, seed 1)

Each line: the variant, its signal alone, the CTR-like rule with the same predicted factors where the
variant changes them, and the fused score with weights chosen step by step on the same split.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.collaborative.dense_model import fit_dense_map, knn_factors, train_dense_collaborative  # noqa: E402
from recommender.collaborative.model import ALSSettings  # noqa: E402
from recommender.scoring.adapter import adapted  # noqa: E402
from recommender.evaluation.folds import (  # noqa: E402
    CROSS_FIT_PARTS,
    VALIDATION_SEED,
    item_cold_folds,
    recall50,
    settings_for,
)
from recommender.evaluation.peers import aggregate_similarities  # noqa: E402
from recommender.evaluation.peers import fused_signals as signals  # noqa: E402
from recommender.evaluation.protocol import FUSED_SIGNALS, dense_report_rows, validation_fold  # noqa: E402
from recommender.evaluation.splits import DenseItems  # noqa: E402
from recommender.features.dense import MODEL_ID, DenseRepresentation  # noqa: E402
from recommender.scoring.fusion import fuse, stepwise_weights  # noqa: E402
from recommender.scoring.learned import linear_user_scores  # noqa: E402

STARTED = time.time()


def _aggregate(similarity: np.ndarray, positions: list[np.ndarray], aggregation: str) -> np.ndarray:
    return np.vstack([aggregate_similarities(similarity[p], aggregation) for p in positions]).astype(np.float32)


def say(line: str) -> None:
    print(f"{line}  ({time.time() - STARTED:.0f} s)", flush=True)


def fused(parts: dict, relevant: np.ndarray, names=FUSED_SIGNALS) -> tuple[float, dict]:
    weights = stepwise_weights(lambda w: recall50(fuse(parts, w), relevant), names, "content")
    return recall50(fuse(parts, weights), relevant), {k: round(v, 3) for k, v in weights.items()}


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def ridge_pair(fold, targets: np.ndarray, regularization: float) -> tuple[np.ndarray, np.ndarray]:
    """(training items' factors cross-fitted in 3 parts, candidates' factors) of a ridge map."""
    saved = np.abs(targets).sum(axis=1) > 0
    part = np.random.default_rng(VALIDATION_SEED).integers(0, CROSS_FIT_PARTS, len(targets))
    train = np.zeros_like(targets)
    for p in range(CROSS_FIT_PARTS):
        weights, intercept = fit_dense_map(fold.train_vectors[saved & (part != p)], targets[saved & (part != p)],
                                           regularization)
        train[part == p] = fold.train_vectors[part == p] @ weights + intercept
    weights, intercept = fit_dense_map(fold.train_vectors[saved], targets[saved], regularization)
    return train, fold.test_vectors @ weights + intercept


def knn_pair(fold, targets: np.ndarray, k: int = 20, temperature: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """(training items' factors, each item left out of its own neighbours; candidates' factors)."""
    saved = np.abs(targets).sum(axis=1) > 0
    neighbours, factors = fold.train_vectors[saved], targets[saved]
    train = np.zeros_like(targets)
    train[saved] = knn_factors(neighbours, neighbours, factors, k, temperature, self_rows=np.arange(saved.sum()))
    if (~saved).any():
        train[~saved] = knn_factors(fold.train_vectors[~saved], neighbours, factors, k, temperature)
    return train, knn_factors(fold.test_vectors, neighbours, factors, k, temperature)


def collaborative_line(label, fold, parts, model, train, test, user_factors=None) -> None:
    text_user = np.vstack([test @ model.user_vector(train[p]) for p in fold.positions]).astype(np.float32)
    ctr = (fold.user_factors if user_factors is None else user_factors) @ test.T
    score, weights = fused(dict(parts, collaborative=text_user), fold.relevant)
    say(f"{label}: text user {recall50(text_user, fold.relevant):.4f}  CTR-like {recall50(ctr, fold.relevant):.4f}"
        f"  fused {score:.4f} {weights}")


def sweep_adapter(fold, parts, **_) -> None:
    targets = fold.model.training_item_factors[fold.train_items].astype(np.float32)
    saved = (np.abs(targets).sum(axis=1, keepdims=True) > 0)
    mapped = {"knn": (fold.train_factors_from_text, fold.test_factors)}
    for reg in (1.0, 10.0):
        mapped[f"ridge {reg:g}"] = ridge_pair(fold, targets, reg)
        mapped[f"ridge on unit factors {reg:g}"] = ridge_pair(fold, unit(targets) * saved, reg)
    for name, (train, test) in mapped.items():
        for beta in (0.5, 1.0, 2.0, 3.0):
            a_train, a_test = adapted(fold.train_vectors, train, beta), adapted(fold.test_vectors, test, beta)
            top = _aggregate(a_train @ a_test.T, fold.positions, "top5")
            learned = np.vstack([linear_user_scores(a_train[p], a_test, a_test, seed=row)
                                 for row, p in enumerate(fold.positions)]).astype(np.float32)
            with_top, _ = fused(dict(parts, content=top), fold.relevant)
            both, weights = fused(dict(parts, content=top, learned=learned), fold.relevant)
            say(f"adapter {name} β={beta}: top5 {recall50(top, fold.relevant):.4f} linear model"
                f" {recall50(learned, fold.relevant):.4f} | fused, adapted top5 {with_top:.4f}"
                f" | fused, adapted top5 + linear model {both:.4f} {weights}")


def sweep_maps(fold, parts, **_) -> None:
    targets = fold.model.training_item_factors[fold.train_items].astype(np.float32)
    for k, temperature in ((20, 0.05), (10, 0.05), (30, 0.05), (20, 0.03), (20, 0.1)):
        collaborative_line(f"kNN k={k} T={temperature}", fold, parts, fold.model, *knn_pair(fold, targets, k, temperature))
    knn, ridge = knn_pair(fold, targets), ridge_pair(fold, targets, 10.0)
    for share in (0.5, 0.7):
        collaborative_line(f"{share}·kNN + {1 - share:.1f}·ridge", fold, parts, fold.model,
                           share * knn[0] + (1 - share) * ridge[0], share * knn[1] + (1 - share) * ridge[1])


def sweep_mlp(fold, parts, **_) -> None:
    from sklearn.neural_network import MLPRegressor

    targets = fold.model.training_item_factors[fold.train_items].astype(np.float32)
    saved = np.abs(targets).sum(axis=1) > 0
    scale = targets[saved].std()
    part = np.random.default_rng(VALIDATION_SEED).integers(0, CROSS_FIT_PARTS, len(targets))

    def fit(rows):
        return MLPRegressor(hidden_layer_sizes=(512,), alpha=1e-3, early_stopping=True, max_iter=60,
                            random_state=0).fit(fold.train_vectors[rows], targets[rows] / scale)

    train = np.zeros_like(targets)
    for p in range(CROSS_FIT_PARTS):
        train[part == p] = fit(saved & (part != p)).predict(fold.train_vectors[part == p]) * scale
    test = (fit(saved).predict(fold.test_vectors) * scale).astype(np.float32)
    collaborative_line("MLP 384→512→K", fold, parts, fold.model, train, test)
    knn = knn_pair(fold, targets)
    collaborative_line("mean of MLP and kNN", fold, parts, fold.model, (train + knn[0]) / 2, (test + knn[1]) / 2)


def sweep_als(fold, parts, data, vectors, settings, matrix, **_) -> None:
    for change in ({}, {"factors": 256}, {"regularization": 0.5}, {"alpha": 40.0}, {"alpha": 3.0},
                   {"weighting": "binary", "alpha": 20.0}):
        model = train_dense_collaborative(matrix, vectors, MODEL_ID, ALSSettings(**{**settings.__dict__, **change}))
        targets = model.training_item_factors[fold.train_items].astype(np.float32)
        for temperature in (0.05, 0.1):
            collaborative_line(f"ALS {change or 'as shipped'} T={temperature}", fold, parts, model,
                               *knn_pair(fold, targets, 20, temperature), model.training_user_factors[fold.users])


def sweep_itemcf(fold, parts, matrix, **_) -> None:
    """Item-to-item co-saves between the kNN neighbours of a user's items and of a candidate."""
    from scipy import sparse

    saves = (matrix[:, fold.train_items] > 0).astype(np.float32).tocsc()
    degree = np.asarray(saves.sum(axis=0)).ravel()
    scale = sparse.diags(1 / np.sqrt(np.maximum(degree, 1)))
    cosave = (scale @ (saves.T @ saves) @ scale).tocsr()
    cosave.setdiag(0)
    for k in (20, 50):
        train, test = _knn_weights(fold, degree > 0, k)
        users = sparse.vstack([sparse.csr_matrix(train[p].sum(axis=0)) for p in fold.positions]).tocsr()
        scores = np.asarray((users @ cosave @ test.T).todense(), dtype=np.float32)
        score, weights = fused(dict(parts, itemcf=scores), fold.relevant, FUSED_SIGNALS + ("itemcf",))
        say(f"item-to-item co-saves k={k}: alone {recall50(scores, fold.relevant):.4f}  fused {score:.4f} {weights}")


def _knn_weights(fold, saved: np.ndarray, k: int, temperature: float = 0.05):
    """Sparse (rows × training items) softmax weights of each row's k nearest saved training items."""
    from scipy import sparse

    columns = np.flatnonzero(saved)
    neighbours = fold.train_vectors[saved]
    self_rows = np.full(len(fold.train_items), -1)
    self_rows[saved] = np.arange(saved.sum())

    def weights(rows, own):
        sims = rows @ neighbours.T
        if own is not None:
            mine = np.flatnonzero(own >= 0)
            sims[mine, own[mine]] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        near = np.take_along_axis(sims, top, axis=1)
        w = np.exp((near - near.max(axis=1, keepdims=True)) / temperature)
        w /= w.sum(axis=1, keepdims=True)
        return sparse.csr_matrix((w.ravel(), (np.repeat(np.arange(len(rows)), k), columns[top].ravel())),
                                 shape=(len(rows), len(fold.train_items)))

    return weights(fold.train_vectors, self_rows), weights(fold.test_vectors, None)


def sweep_lexlearn(fold, parts, data, settings, **_) -> None:
    """A per-user logistic regression on tf-idf rows as a fifth signal."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    from recommender.collaborative.model import TextFeatures

    features = TextFeatures(settings.n_features, settings.ngram_range).fit([data.texts[i] for i in fold.train_items])
    rows = features.transform(data.texts)
    columns = np.unique(rows[fold.train_items].indices)
    train, test = rows[fold.train_items][:, columns].tocsr(), rows[fold.test_items][:, columns].tocsr()
    for c in (1.0, 10.0):
        scores = np.empty(fold.relevant.shape, dtype=np.float32)
        for row, p in enumerate(fold.positions):
            wanted = min(max(200, 10 * len(p)), test.shape[0])
            negatives = test[np.random.default_rng(row).choice(test.shape[0], size=wanted, replace=False)]
            model = LogisticRegression(C=c, class_weight="balanced", max_iter=200, solver="liblinear").fit(
                sparse.vstack([train[p], negatives]), np.r_[np.ones(len(p)), np.zeros(wanted)])
            scores[row] = test @ model.coef_.ravel()
        extra = dict(parts, lexlearn=scores)
        last, w_last = fused(extra, fold.relevant, FUSED_SIGNALS + ("lexlearn",))
        first, w_first = fused(extra, fold.relevant, ("lexlearn",) + FUSED_SIGNALS)
        say(f"tf-idf logreg C={c}: alone {recall50(scores, fold.relevant):.4f}  fused (added last) {last:.4f}"
            f" {w_last}  (added first) {first:.4f} {w_first}")


def sweep_weights(fold, parts, **_) -> None:
    """Every share on a 0.05 simplex grid, chosen on half the users and checked on the other half."""
    from recommender.scoring.fusion import standardise

    names = ("content",) + FUSED_SIGNALS
    z = {name: standardise(parts[name]).astype(np.float32) for name in names}
    half = np.arange(len(fold.relevant)) % 2 == 0

    def quality(shares, rows):
        return recall50(sum(s * z[n][rows] for s, n in zip(shares, names) if s > 0), fold.relevant[rows])

    grid = [np.array([a, b, c, 20 - a - b - c]) / 20 for a in range(21) for b in range(21 - a) for c in range(21 - a - b)]
    best = max(grid, key=lambda shares: quality(shares, half))
    greedy = fused({n: parts[n][half] for n in names}, fold.relevant[half])[1]
    greedy = np.array([greedy.get(n, 0.0) for n in names])
    for label, shares in (("step by step", greedy), ("best on the 0.05 grid", best)):
        say(f"weights {label} {np.round(shares, 3).tolist()}: chosen half {quality(shares, half):.4f}"
            f"  other half {quality(shares, ~half):.4f}")


SWEEPS = {"adapter": sweep_adapter, "maps": sweep_maps, "mlp": sweep_mlp, "als": sweep_als,
          "itemcf": sweep_itemcf, "lexlearn": sweep_lexlearn, "weights": sweep_weights}


def main(spec: str, sweep: str, n_users: int = 1500) -> None:
    from recommender.evaluation.folds import without_items

    data = load_dataset(spec)
    vectors = dense_report_rows(data, DenseRepresentation())
    settings = settings_for(data)
    test_items = item_cold_folds(data.n_items)[0]
    fold = validation_fold(data, test_items, settings, DenseItems(vectors, MODEL_ID))
    sample = np.sort(np.random.default_rng(1).choice(len(fold.users), size=min(n_users, len(fold.users)),
                                                     replace=False))
    fold.users, fold.relevant, fold.user_factors = fold.users[sample], fold.relevant[sample], fold.user_factors[sample]
    fold.positions = [fold.positions[i] for i in sample]
    parts = signals(fold, "top5")
    score, weights = fused(parts, fold.relevant)
    say(f"{data.name}, {len(fold.users)} users: as shipped fused {score:.4f} {weights}; content only"
        f" {fused(parts, fold.relevant, ('lexical', 'learned'))[0]:.4f}; CTR-like"
        f" {recall50(fold.user_factors @ fold.test_factors.T, fold.relevant):.4f}; "
        + ", ".join(f"{name} alone {recall50(parts[name], fold.relevant):.4f}" for name in ("content",) + FUSED_SIGNALS))
    matrix = without_items(data.interactions, np.union1d(fold.test_items, test_items))
    SWEEPS[sweep](fold, parts, data=data, vectors=vectors, settings=settings, matrix=matrix)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:]))
