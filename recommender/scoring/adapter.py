"""The collaborative adapter (issue 16): a space where papers saved by the same people come closer.

Each paper's unit embedding is joined to β × its unit predicted ALS factor (the dense model's map)
and the row renormalised, so the cosine of two papers becomes (cos(text) + β²·cos(factors)) / (1 + β²).
zotrec fits its per-user linear model in that space when the dense model records an `adapter_beta`
(docs/evaluation.md: measured on CiteULike a and t and the ICML leave-out); the topK similarities,
and so the "because you saved …" reasons, stay in the plain content space.
"""

from __future__ import annotations

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


class AdaptedRows:
    """Rows in the adapter's space, joined only when read, a block at a time.

    The linear model reads at most MAX_POSITIVES (scoring/learned.py) of a library's rows, into its
    own float64 copy: joining all 50,000 rows of a large library up front cost 185 MB of peak memory.
    Indexing gives another lazy AdaptedRows over the same arrays (`rows`: which of them, in order);
    numpy reads one through `__array__`.
    """

    BLOCK = 1024  # rows joined at a time: a 4,096-row block's temporaries added 30 MB to a 10,000-item run's peak

    def __init__(self, vectors: np.ndarray, factors: np.ndarray, beta: float = ADAPTER_BETA,
                 rows: np.ndarray | None = None) -> None:
        if len(vectors) != len(factors):
            raise ValueError(f"{len(vectors)} embeddings but {len(factors)} factor rows")
        self.vectors, self.factors, self.beta, self.rows = vectors, factors, beta, rows
        self.shape = (len(vectors) if rows is None else len(rows), vectors.shape[1] + factors.shape[1])
        self.dtype = np.dtype(np.float32)
        self.size = self.shape[0] * self.shape[1]

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index) -> AdaptedRows:
        rows = np.arange(len(self.vectors)) if self.rows is None else self.rows
        return AdaptedRows(self.vectors, self.factors, self.beta, rows=np.atleast_1d(rows[index]))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.empty(self.shape, dtype=np.float32)
        for start in range(0, len(self), self.BLOCK):
            stop = start + self.BLOCK
            block = slice(start, stop) if self.rows is None else self.rows[start:stop]
            out[start:stop] = adapted(self.vectors[block], self.factors[block], self.beta)
        return out if dtype is None else out.astype(dtype, copy=False)


def adapter_beta(model) -> float:
    """The β a dense collaborative model was validated with (0: no adapter, as in models made before it)."""
    return float((getattr(model, "provenance", None) or {}).get("adapter_beta", 0.0))


__all__ = ["ADAPTER_BETA", "AdaptedRows", "adapted", "adapter_beta", "unit_rows"]
