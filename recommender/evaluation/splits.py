"""One item-cold split's inputs for the rules in peers.py, on either kind of features: tf-idf rows (the
collaborative part: evaluation/tfidf_peer.py) or precomputed dense item vectors (the collaborative part:
collaborative/dense_model.py, as zotrec ships it). Nothing here reads a held-out item's saves except `relevant`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse

from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.dense_model import fit_dense_map, knn_factors, train_dense_collaborative
from recommender.collaborative.model import ALSSettings
from recommender.evaluation.folds import CROSS_FIT_PARTS, cross_fit_parts, without_items
from recommender.evaluation.tfidf_peer import fit_text_map, train_collaborative
from recommender.features.tfidf import TfidfRepresentation
from recommender.scoring.adapter import ADAPTER_BETA, adapted


@dataclass(frozen=True)
class DenseItems:
    """The features parameter of a dense run: one embedding row per dataset item, and the encoder's id."""

    vectors: np.ndarray
    encoder_id: str


@dataclass
class Fold:
    """Everything the rules need for one split, built without reading held-out saves.

    train_vectors / test_vectors : tf-idf rows on the training items' columns (float64, sparse) or the
        dense embeddings; `similarity` is their cosine (train × test). `lexical_similarity`: a dense
        run's tf-idf cosine (None on tf-idf, where `similarity` is that already).
    model : the collaborative part (user_vector); user_factors: the users' trained ALS vectors;
        test_factors: the held-out items' predicted factors; train_factors_from_text: each training
        item's factor from a map that never saw it (as for a Zotero user's item).
    """

    test_items: np.ndarray
    train_items: np.ndarray
    train_matrix: sparse.csr_matrix
    users: np.ndarray
    relevant: np.ndarray  # (users, test items) bool: the held-out saves, used only for scoring
    positions: list[np.ndarray]  # each user's training items, as positions among train_items
    train_vectors: np.ndarray | sparse.csr_matrix
    test_vectors: np.ndarray | sparse.csr_matrix
    similarity: np.ndarray
    lexical_similarity: np.ndarray | None
    model: object
    user_factors: np.ndarray
    test_factors: np.ndarray
    train_factors_from_text: np.ndarray


def prepare_fold(data: InteractionData, held_out: np.ndarray, settings: ALSSettings, items: DenseItems | None = None,
                 ignored: np.ndarray | None = None) -> Fold:
    """Train the collaborative part on every item except `held_out` (and `ignored`), then set up scoring of
    `held_out` on tf-idf (`items` None) or on the dense item vectors."""
    excluded = held_out if ignored is None else np.union1d(held_out, ignored)
    train_items = np.setdiff1d(np.arange(data.n_items), excluded)
    train_matrix = without_items(data.interactions, excluded)
    held_saves = data.interactions[:, held_out]
    users = np.flatnonzero((held_saves.getnnz(axis=1) > 0) & (train_matrix.getnnz(axis=1) > 0))
    position = np.full(data.n_items, -1)
    position[train_items] = np.arange(len(train_items))
    common = dict(test_items=held_out, train_items=train_items, train_matrix=train_matrix, users=users,
                  relevant=held_saves[users].toarray() > 0,
                  positions=[position[train_matrix[user].indices] for user in users])
    return (_tfidf_fold if items is None else _dense_fold)(data, settings, items, common)


def _tfidf_fold(data: InteractionData, settings: ALSSettings, items: None, common: dict) -> Fold:
    train_items, held_out, train_matrix = common["train_items"], common["test_items"], common["train_matrix"]
    model = train_collaborative(train_matrix, data.texts, settings)
    rows = model.features.transform(data.texts)
    train_rows, test_rows = rows[train_items], rows[held_out]
    columns = np.unique(train_rows.indices)
    return Fold(
        **common,
        train_vectors=train_rows[:, columns].astype(np.float64).tocsr(),
        test_vectors=test_rows[:, columns].astype(np.float64).tocsr(),
        similarity=(train_rows @ test_rows.T).toarray().astype(np.float32),
        lexical_similarity=None,
        model=model,
        user_factors=model.training_user_factors[common["users"]],
        test_factors=model.item_factors_for_rows(test_rows).astype(np.float32),
        train_factors_from_text=_cross_fitted_text_map(model, train_rows, train_items, train_matrix),
    )


def _dense_fold(data: InteractionData, settings: ALSSettings, items: DenseItems, common: dict) -> Fold:
    train_items, held_out, train_matrix = common["train_items"], common["test_items"], common["train_matrix"]
    vectors = items.vectors
    model = train_dense_collaborative(train_matrix, vectors, items.encoder_id, settings)
    features = TfidfRepresentation(settings.n_features, settings.ngram_range).fit(
        [data.texts[i] for i in train_items])
    rows = features.transform(data.texts)
    return Fold(
        **common,
        train_vectors=vectors[train_items], test_vectors=vectors[held_out],
        similarity=vectors[train_items] @ vectors[held_out].T,
        lexical_similarity=(rows[train_items] @ rows[held_out].T).toarray().astype(np.float32),
        model=model,
        user_factors=model.training_user_factors[common["users"]],
        test_factors=model.factors_for_vectors(vectors[held_out]),
        train_factors_from_text=_cross_fitted_dense_map(model, vectors, train_items, train_matrix),
    )


def _cross_fitted_text_map(model, train_rows, train_items, train_matrix) -> np.ndarray:
    """Each training item's factor from a tf-idf map fitted in 3 parts, never on the item itself."""
    targets = model.training_item_factors[train_items]
    saved = np.asarray(train_matrix.getnnz(axis=0))[train_items] > 0
    part = cross_fit_parts(len(train_items))
    predicted = np.zeros_like(targets, dtype=np.float32)
    for p in range(CROSS_FIT_PARTS):
        fit_on = saved & (part != p)
        columns, weights, intercept = fit_text_map(
            train_rows[fit_on], targets[fit_on], model.settings.map_regularization
        )
        lookup = np.full(train_rows.shape[1], -1)
        lookup[columns] = np.arange(len(columns))
        block = train_rows[part == p]
        known = lookup[block.indices] >= 0
        compact = sparse.csr_matrix(
            (block.data * known, np.maximum(lookup[block.indices], 0), block.indptr),
            shape=(block.shape[0], len(columns)),
        )
        predicted[part == p] = compact @ weights + intercept
    return predicted


def _cross_fitted_dense_map(model, vectors, train_items, train_matrix) -> np.ndarray:
    """Each training item's factor from a dense map that never saw it: kNN leaves the item itself out of
    its neighbours; ridge is cross-fitted in 3 parts."""
    targets = model.training_item_factors[train_items]
    saved = np.asarray(train_matrix.getnnz(axis=0))[train_items] > 0
    if model.map_kind == "knn":
        out = np.zeros_like(targets, dtype=np.float32)
        if (~saved).any():
            out[~saved] = model.factors_for_vectors(vectors[train_items[~saved]])
        # the model's neighbours are the saved items in id order, so saved item i is neighbour i
        out[saved] = knn_factors(vectors[train_items[saved]], model.neighbour_vectors, model.neighbour_factors,
                                 self_rows=np.arange(int(saved.sum())))
        return out
    part = cross_fit_parts(len(train_items))
    predicted = np.zeros_like(targets, dtype=np.float32)
    for p in range(CROSS_FIT_PARTS):
        fit_on = saved & (part != p)
        weights, intercept = fit_dense_map(vectors[train_items[fit_on]], targets[fit_on],
                                           model.settings.map_regularization)
        predicted[part == p] = vectors[train_items[part == p]] @ weights + intercept
    return predicted


def adapted_fold(fold: Fold, beta: float = ADAPTER_BETA) -> Fold:
    """A copy of a dense Fold whose content vectors and similarities live in the collaborative adapter's space
    (scoring/adapter.py). The user side uses the factors a Zotero user's items would get (cross-fitted: an
    item is never its own neighbour); the candidates use the map's factors. Lexical and collaborative stay."""
    train = adapted(fold.train_vectors, fold.train_factors_from_text, beta)
    test = adapted(fold.test_vectors, fold.test_factors, beta)
    return replace(fold, train_vectors=train, test_vectors=test, similarity=train @ test.T)


def users_only(fold: Fold, rows: np.ndarray) -> Fold:
    """The fold with only these of its users (rows of `users`)."""
    return replace(fold, users=fold.users[rows], relevant=fold.relevant[rows], user_factors=fold.user_factors[rows],
                   positions=[fold.positions[row] for row in rows])
