"""The fused score's weights chosen for robustness across folds and datasets, not the peak of one split (issue 33).

A weighting is judged by its validation recall@50 on each of the five folds. Of every weighting within one
standard error (over the folds) of the best one (none finds the saves measurably better), the one that orders
each user's hard candidates best is taken: ordering within the user's own field is what a default tuned on
recall alone gets wrong. The simplest within (the least weight, averaged over the users, on the per-user linear
model and the collaborative part) is the alternative reported beside it. The linear model's share grows with the library:
learned · n / (n + n0) for a profile of n items (fusion.evidence_share). The fine order is chosen after, the
same way, on the fine benchmark's nDCG@10, the simplest being the one nearest to plain nearest-items order.

Pure functions of the kept signals (recommender/evaluation/dumps.py); no fold is refitted here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from recommender.evaluation.dumps import SplitSignals
from recommender.evaluation.fine import FINE_AT, ndcg_at
from recommender.evaluation.order import above_counts, order_losses
from recommender.scoring.fusion import (
    FINE_TOP,
    FusionWeights,
    cascade,
    evidence_share,
    library_fine_weights,
    standardise,
    weighted_sum,
)

BUCKETS = ((0, 20), (21, 50), (51, None))  # library sizes (training items) the tables are cut by
LEXICAL_GRID = (0.024, 0.1, 0.18)  # 0.024: shipped until now (citeulike-a's titles); 0.18: citeulike-t's folds' pick
LEARNED_GRID = (0.0, 0.2, 0.3, 0.4, 0.5, 0.56, 0.65)  # 0.56 and 0.2: the weights shipped until now
COLLABORATIVE_GRID = (0.0, 0.05, 0.1, 0.2, 0.3)
EVIDENCE_GRID = (0.0, 5.0, 15.0, 40.0, 100.0)
NEAREST_GRID = (1.0, 0.6, 0.3, 0.0)  # the fine order: nearest-items top3's share, the fused score's the rest


def bucket_name(bucket: tuple[int, int | None]) -> str:
    low, high = bucket
    return f"> {low - 1}" if high is None else (f"≤ {high}" if low == 0 else f"{low}–{high}")


def in_bucket(sizes: np.ndarray, bucket: tuple[int, int | None]) -> np.ndarray:
    low, high = bucket
    return (sizes >= low) & (sizes <= (np.inf if high is None else high))


def coarse_grid() -> list[FusionWeights]:
    """Every weighting tried: each tf-idf share, each linear-model share with each n0 (one n0 for a zero
    share, where it changes nothing) and each collaborative share."""
    grid = []
    for lexical in LEXICAL_GRID:
        for learned in LEARNED_GRID:
            for evidence in (EVIDENCE_GRID if learned > 0 else (0.0,)):
                for collaborative in COLLABORATIVE_GRID:
                    grid.append(FusionWeights(lexical=lexical, learned=learned, collaborative=collaborative,
                                              learned_evidence=evidence))
    return grid


def fine_mix(weights: FusionWeights, nearest: float) -> dict[str, float]:
    """The fine order's weights: the content top3 ("nearest") at `nearest`, the fused score's own signals at
    their shares of the rest (the linear model's scaled by the library's evidence where it is used)."""
    shares = weights.shares(("lexical", "learned", "collaborative"))
    mix = {name: float(value) * (1.0 - nearest) for name, value in shares.items() if value > 0}
    return {name: value for name, value in ({"nearest": nearest} | mix).items() if value > 0}


@dataclass(frozen=True)
class Weighting:
    """One candidate default: the fused score's weights and the fine order's (None: the fused order alone)."""

    weights: FusionWeights
    fine: Mapping[str, float] | None = field(default=None, hash=False)

    def label(self) -> str:
        w = self.weights
        text = f"lexical {w.lexical:g}, learned {w.learned:g}, collaborative {w.collaborative:g}, n0 {w.learned_evidence:g}"
        if self.fine is not None:
            text += "; fine " + ", ".join(f"{name} {value:.3g}" for name, value in self.fine.items())
        return text


# the shipped model's card and fusion.FINE_WEIGHTS before issue 33 (citeulike-a fold 0's validation split, stepwise)
SHIPPED_UNTIL_NOW = Weighting(FusionWeights(lexical=0.024, learned=0.56, collaborative=0.2),
                              {"nearest": 0.144, "content": 0.144, "lexical": 0.072, "learned": 0.54, "collaborative": 0.1})


def complexity(weights: FusionWeights, sizes: np.ndarray) -> float:
    """The mean weight, over these users, on the linear model (at its evidence share) and the collaborative part."""
    return float(np.mean(weights.learned * evidence_share(sizes, weights.learned_evidence)) + weights.collaborative)


class ScoredSplit:
    """One split's signals standardised once, to score many weightings on."""

    def __init__(self, split: SplitSignals, seed: int = 0, dtype=np.float32) -> None:
        self.split, self.seed = split, seed
        self.names = list(split.signals)
        self.z = {name: standardise(values).astype(dtype) for name, values in split.signals.items()}
        self.sizes = split.sizes[:, None].astype(np.float64)
        self.hard_relevant = np.asarray(split.hard_relevant, dtype=bool)
        self.in_area_z = ({name: standardise(values).astype(dtype) for name, values in split.in_area.items()}
                          if split.in_area else None)

    def coarse(self, weights: FusionWeights, z: Mapping[str, np.ndarray] | None = None,
               sizes: np.ndarray | None = None) -> np.ndarray:
        """The fused score, as Recommender.recommend makes it (FusionWeights.shares at each user's size)."""
        z = self.z if z is None else z
        shares = weights.shares(self.names, self.sizes if sizes is None else sizes)
        dtype = next(iter(z.values())).dtype
        return weighted_sum(z, {name: np.asarray(value, dtype=dtype) for name, value in shares.items()})

    def validation_measures(self, weights: FusionWeights) -> dict[str, float]:
        """The choice's measures of the fused score (the fine order keeps the top 50's set, and moves little
        below it), means over the users, pooled and for libraries of ≤ 20 items: recall@50 (a save is found
        when fewer than 50 items score above it), the order loss over the whole held-out set and among the hard
        candidates (the cut view: ordering within the user's own field)."""
        scores = self.coarse(weights)
        relevant = self.split.relevant
        rows, above = above_counts(scores, relevant, ties=False)
        n_relevant = relevant.sum(axis=1).astype(np.float64)
        found = np.bincount(rows, weights=above < 50, minlength=len(relevant)) / n_relevant
        wrong = np.bincount(rows, weights=above, minlength=len(relevant)) - n_relevant * (n_relevant - 1) / 2
        loss = wrong / (n_relevant * (relevant.shape[1] - n_relevant))
        cut = np.take_along_axis(scores[self.split.hard_rows], self.split.hard_columns, axis=1)
        hard = order_losses(cut, self.hard_relevant)
        small, hard_small = self.split.sizes <= BUCKETS[0][1], self.split.sizes[self.split.hard_rows] <= BUCKETS[0][1]
        return {"recall@50": float(found.mean()), "order loss": float(loss.mean()),
                "fine.order loss": float(np.nanmean(hard)), "recall@50 ≤ 20": float(found[small].mean()),
                "fine.order loss ≤ 20": float(np.nanmean(hard[hard_small]))}

    def shipped_form(self, weighting: Weighting, signals: Mapping[str, np.ndarray] | None = None,
                     z: Mapping[str, np.ndarray] | None = None, sizes: np.ndarray | None = None) -> np.ndarray:
        """The fused score with its FINE_TOP best in the fine order (fusion.cascade), as shipped."""
        sizes = self.sizes if sizes is None else sizes
        coarse = self.coarse(weighting.weights, z, sizes)
        if not weighting.fine:
            return coarse
        fine = library_fine_weights(weighting.fine, weighting.weights, sizes)
        return cascade(coarse, self.split.signals if signals is None else signals, fine, FINE_TOP)

    def metrics(self, weighting: Weighting) -> dict[str, np.ndarray]:
        """Per user: recall@20/50, nDCG@50, the order loss over every held-out item; per hard-candidate user (the
        fine benchmark's rows): fine nDCG@10 and order loss, cut and (on the test split) with the in-area corpus."""
        scores = self.shipped_form(weighting)
        relevant = self.split.relevant
        out = _top_metrics(scores, relevant)
        out["order loss"] = order_losses(scores, relevant)
        rows, columns = self.split.hard_rows, self.split.hard_columns
        cut = np.take_along_axis(scores[rows], columns, axis=1)
        out[f"fine.ndcg@{FINE_AT}"] = ndcg_at(cut, self.hard_relevant, FINE_AT, self.seed)
        out["fine.order loss"] = order_losses(cut, self.hard_relevant)
        if self.in_area_z is not None:
            area = self.shipped_form(weighting, self.split.in_area, self.in_area_z, self.sizes[rows])
            out[f"in-area.ndcg@{FINE_AT}"] = ndcg_at(area, self.hard_relevant, FINE_AT, self.seed)
            out["in-area.order loss"] = order_losses(area, self.hard_relevant)
        return out

    def fine_ndcg(self, weighting: Weighting) -> np.ndarray:
        """Per hard-candidate user, the cut view's fine nDCG@10 (the fine order's criterion)."""
        scores = self.shipped_form(weighting)
        cut = np.take_along_axis(scores[self.split.hard_rows], self.split.hard_columns, axis=1)
        return ndcg_at(cut, self.hard_relevant, FINE_AT, self.seed)


def _top_metrics(scores: np.ndarray, relevant: np.ndarray) -> dict[str, np.ndarray]:
    """recall@20, recall@50 and nDCG@50 (binary gains) from each row's 50 best, in order."""
    top = _best(scores, 50)
    top = np.take_along_axis(top, np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable"), axis=1)
    hits = np.take_along_axis(relevant, top, axis=1)
    n_relevant = relevant.sum(axis=1)
    discounts = 1.0 / np.log2(np.arange(2, top.shape[1] + 2))
    ideal = np.cumsum(discounts)[np.minimum(n_relevant, top.shape[1]) - 1]
    return {"recall@20": hits[:, :20].sum(axis=1) / n_relevant, "recall@50": hits.sum(axis=1) / n_relevant,
            "ndcg@50": (hits * discounts).sum(axis=1) / ideal}


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """Each row's k best columns, in no order (all of them where a row has no more)."""
    if scores.shape[1] <= k:
        return np.tile(np.arange(scores.shape[1]), (len(scores), 1))
    return np.argpartition(-scores, k, axis=1)[:, :k]


@dataclass(frozen=True)
class Choice:
    """The one-SE choice on validation: the chosen weighting, the best one, and what made the cut."""

    chosen: FusionWeights
    best: FusionWeights
    threshold: float  # per dataset: best mean − its standard error
    within: list[FusionWeights]  # every weighting within one SE of the best on every dataset
    table: dict[str, dict[FusionWeights, tuple[float, float]]]  # dataset → weighting → (mean, SE) over folds


def fold_means(per_fold: Sequence[Mapping], measure: str | None = None) -> dict:
    """key → (mean over folds, standard error of that mean); each fold maps a key to a value, or (with
    `measure`) to a dict of measures of which that one is taken."""
    out = {}
    for key in per_fold[0]:
        values = np.array([fold[key] if measure is None else fold[key][measure] for fold in per_fold])
        out[key] = (float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0)
    return out


CRITERION = "recall@50"  # what a default must not lose: finding the saves
OBJECTIVE = "fine.order loss"  # what it is then chosen for: ordering the user's own field (the held-out check's kind)


def one_se_choice(per_dataset: Mapping[str, Sequence[Mapping[FusionWeights, Mapping[str, float]]]],
                  sizes: Mapping[str, np.ndarray], objective: str | None = OBJECTIVE,
                  outside: Mapping[FusionWeights, float] | None = None) -> Choice:
    """Of the weightings within one SE of each dataset's best validation recall@50 (where none is within on
    all, the first dataset's alone), the one with the lowest mean `objective` over the datasets and folds; with
    `outside` (a loss per weighting measured outside these datasets: own papers, issue 39), the lowest of that
    instead, since the datasets cannot tell the set apart; with `objective` None, the simplest (complexity over
    every dataset's users). Ties: the simpler, then the better recall."""
    table = {name: fold_means(folds, CRITERION) for name, folds in per_dataset.items()}
    within, thresholds = _within_one_se(table)
    grid = list(next(iter(table.values())))
    everyone = np.concatenate([np.asarray(s, dtype=np.float64) for s in sizes.values()])

    def rank(w: FusionWeights):
        simple = round(complexity(w, everyone), 6)
        recall = -np.mean([table[n][w][0] for n in table])
        if outside is not None:
            return round(float(outside[w]), 6), simple, recall
        if objective is None:
            return simple, recall
        ordering = np.mean([fold[w][objective] for folds in per_dataset.values() for fold in folds])
        return round(float(ordering), 6), simple, recall

    missing = [w for w in within if outside is not None and w not in outside]
    if missing:
        raise MissingOutside(missing)
    chosen = min(within, key=rank)
    first = next(iter(table))
    best = max(grid, key=lambda w: table[first][w][0])
    return Choice(chosen, best, thresholds[first], within, table)


class MissingOutside(Exception):
    """Weightings of the one-SE set that the outside measurement lacks (they must be measured first)."""

    def __init__(self, weightings: list[FusionWeights]) -> None:
        super().__init__(f"{len(weightings)} weightings lack an outside loss")
        self.weightings = weightings


def fine_choice(per_dataset: Mapping[str, Sequence[Mapping[float, float]]]) -> float:
    """The fine order's nearest share: the largest (the plainest order) within one SE of each dataset's best
    fine nDCG@10; the first dataset's alone where none is within on all."""
    return max(_within_one_se({name: fold_means(folds) for name, folds in per_dataset.items()})[0])


def _within_one_se(table: Mapping[str, Mapping]) -> tuple[list, dict[str, float]]:
    """(the keys within one SE of the best mean on every dataset, else on the first dataset alone; each dataset's
    bar: its best mean less that mean's standard error)."""
    thresholds = {name: (lambda best: best[0] - best[1])(max(t.values(), key=lambda value: value[0]))
                  for name, t in table.items()}
    keys = list(next(iter(table.values())))
    within = [key for key in keys if all(table[n][key][0] >= thresholds[n] for n in table)]
    if not within:
        first = next(iter(table))
        within = [key for key in keys if table[first][key][0] >= thresholds[first]]
    return within, thresholds


def bucket_means(metrics: Mapping[str, np.ndarray], sizes: np.ndarray, hard_rows: np.ndarray,
                 buckets: Iterable[tuple[int, int | None]] = BUCKETS) -> dict[str, dict[str, float]]:
    """metric → {"all", each bucket's name} → the mean over those users (fine metrics over the hard-candidate
    users, by their own library size)."""
    out: dict[str, dict[str, float]] = {}
    for metric, values in metrics.items():
        own = sizes[hard_rows] if metric.startswith(("fine.", "in-area.")) else sizes
        cells = {"all": float(np.nanmean(values))}
        for bucket in buckets:
            mask = in_bucket(own, bucket)
            cells[bucket_name(bucket)] = float(np.nanmean(values[mask])) if mask.any() else float("nan")
        out[metric] = cells
    return out


def variants(chosen: Weighting) -> dict[str, Weighting]:
    """The chosen default and what each of its parts adds: without the collaborative part, without the
    evidence share (n0 = 0; only where the default has one), without the linear model, without the fine order."""
    w, nearest = chosen.weights, (chosen.fine or {}).get("nearest", 0.0)

    def without(**changes) -> Weighting:
        weights = replace(w, **changes)
        return Weighting(weights, None if chosen.fine is None else fine_mix(weights, nearest))

    rows = {"without the collaborative part": without(collaborative=0.0)}
    if w.learned_evidence > 0:  # with n0 = 0 this row would be the default itself
        rows["without the evidence share (n0 = 0)"] = Weighting(replace(w, learned_evidence=0.0), chosen.fine)
    rows["without the linear model"] = without(learned=0.0, learned_evidence=0.0)
    rows["fused order (no fine order)"] = Weighting(w, None)
    return rows
