"""The collaborative adapter (issue 16): a space where papers saved by the same people come closer.

Each paper's unit embedding is joined to β × its unit predicted ALS factor (the dense model's map)
and the row renormalised, so the cosine of two papers becomes (cos(text) + β²·cos(factors)) / (1 + β²).
zotrec fits its per-user linear model in that space when the dense model records an `adapter_beta`
(docs/evaluation.md: measured on CiteULike a and t and the ICML leave-out); the topK similarities,
and so the "because you saved …" reasons, stay in the plain content space.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

ADAPTER_BETA = 0.5  # chosen on citeulike-a and -t validation against β ∈ {1, 2, 3} (docs/evaluation.md)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def adapted(vectors: np.ndarray, factors: np.ndarray, beta: float = ADAPTER_BETA) -> np.ndarray:
    """Unit rows of [embedding, β·unit(predicted factor)]: the adapted space's vectors."""
    if len(vectors) != len(factors):
        raise ValueError(f"{len(vectors)} embeddings but {len(factors)} factor rows")
    return unit_rows(np.hstack([unit_rows(vectors), beta * unit_rows(factors)]))


def adapted_blocks(vectors: np.ndarray, factors: np.ndarray, beta: float, rows: np.ndarray,
                   block: int = 1024) -> Iterable[np.ndarray]:
    """The adapted rows of `rows` (indices), a block at a time: a 10,000-row library's joined rows
    at once added 18 MB to the peak beside the linear model's design matrix (docs/performance.md)."""
    for start in range(0, len(rows), block):
        chosen = rows[start : start + block]
        yield adapted(vectors[chosen], factors[chosen], beta)


def adapter_beta(model) -> float:
    """The β a dense collaborative model was validated with (0: no adapter, as in models made before it)."""
    return model.card.adapter_beta if model is not None else 0.0


__all__ = ["ADAPTER_BETA", "adapted", "adapted_blocks", "adapter_beta", "unit_rows"]
