"""A fold run's inputs to the weight choice (issue 33), kept on disk: the shipped form's signals on the
validation and test splits, who saved what, the users' library sizes and the fine benchmark's candidates,
and every recorded rule's per-user metrics (for the tables by library size).

The choice across five folds (benchmarks/lib/weight_grid.py) reads these instead of rerunning a fold per
candidate weighting: a fold costs minutes of CPU, a weighting's scores a fraction of a second. One .npy
per array, so a reader maps what it needs. Evaluation output on CiteULike, never user data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SPLITS = ("validation", "test")


@dataclass(frozen=True)
class SplitSignals:
    """One split of one fold, as the weight choice needs it."""

    signals: dict[str, np.ndarray]  # (users × held-out items) per signal, the shipped form's (peers.shipped_signals)
    relevant: np.ndarray  # (users × held-out items) bool
    sizes: np.ndarray  # per user: the training items in the profile
    hard_rows: np.ndarray  # the fine benchmark's users (rows) …
    hard_columns: np.ndarray  # … their candidates (columns of the held-out items) …
    hard_relevant: np.ndarray  # … and which of them they saved
    in_area: dict[str, np.ndarray]  # the signals with the corpus cut to the candidates (test only; {} else)


class FoldDump:
    """Writes one fold's SplitSignals and rule metrics under `folder`/fold{F}/."""

    def __init__(self, folder: Path, fold: int) -> None:
        self.root = Path(folder) / f"fold{fold}"
        self.root.mkdir(parents=True, exist_ok=True)
        self.rules: dict[str, dict[str, np.ndarray]] = {}

    def split(self, name: str, signals: dict[str, np.ndarray], relevant: np.ndarray, positions, hard,
              in_area: dict[str, np.ndarray] | None = None) -> None:
        """Keep a split's signals (float32), saves, library sizes, hard candidates and in-area signals."""
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        arrays = {f"signal.{key}": np.asarray(value, dtype=np.float32) for key, value in signals.items()}
        arrays |= {f"in_area.{key}": np.asarray(value, dtype=np.float32) for key, value in (in_area or {}).items()}
        arrays |= {"relevant": np.asarray(relevant, dtype=bool),
                   "sizes": np.array([len(p) for p in positions], dtype=np.int64),
                   "hard_rows": hard.rows, "hard_columns": hard.columns, "hard_relevant": hard.relevant}
        for key, value in arrays.items():
            np.save(folder / f"{key}.npy", value)

    def rule(self, name: str, metrics: dict[str, np.ndarray]) -> None:
        """Keep one rule's per-user metrics (merged with what was kept for it already)."""
        self.rules.setdefault(name, {}).update({key: np.asarray(value, dtype=np.float64)
                                                for key, value in metrics.items()})

    def close(self) -> None:
        """Write the rules' per-user metrics: one .npz and the names in order."""
        flat = {f"{index}.{metric}": values for index, (name, metrics) in enumerate(self.rules.items())
                for metric, values in metrics.items()}
        np.savez(self.root / "rules.npz", **flat)
        (self.root / "rules.json").write_text(json.dumps(list(self.rules)), encoding="utf-8")


def read_split(folder: Path, fold: int, name: str) -> SplitSignals:
    """One split of one fold as written by FoldDump.split, mapped rather than read where it is large."""
    root = Path(folder) / f"fold{fold}" / name
    arrays = {path.stem: np.load(path, mmap_mode="r") for path in sorted(root.glob("*.npy"))}
    pick = lambda prefix: {key.split(".", 1)[1]: value for key, value in arrays.items() if key.startswith(prefix)}  # noqa: E731
    return SplitSignals(signals=pick("signal."), relevant=np.asarray(arrays["relevant"]),
                        sizes=np.asarray(arrays["sizes"]), hard_rows=np.asarray(arrays["hard_rows"]),
                        hard_columns=np.asarray(arrays["hard_columns"]),
                        hard_relevant=np.asarray(arrays["hard_relevant"]), in_area=pick("in_area."))


def read_rules(folder: Path, fold: int) -> dict[str, dict[str, np.ndarray]]:
    """Every recorded rule's per-user metrics of one fold (FoldDump.close)."""
    root = Path(folder) / f"fold{fold}"
    names = json.loads((root / "rules.json").read_text(encoding="utf-8"))
    flat = np.load(root / "rules.npz")
    rules: dict[str, dict[str, np.ndarray]] = {name: {} for name in names}
    for key in flat.files:
        index, metric = key.split(".", 1)
        rules[names[int(index)]][metric] = flat[key]
    return rules
