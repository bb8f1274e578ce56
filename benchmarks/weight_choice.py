"""Issue 33's weight choice and tables, from the signals benchmarks/dense_fold.py kept (dump=FOLDER).

    python benchmarks/weight_choice.py citeulike-a=DUMPS/a citeulike-t=DUMPS/t [--folds 0,1,2,3,4] \
        [--own-papers OWN.json] [--json PATH]

1. Every weighting of benchmarks/lib/weight_grid.coarse_grid on every fold's validation split: recall@50 and the order
   losses. The weightings within one standard error (over the folds) of the best recall@50 on every dataset find
   the saves equally well as far as the folds can tell; of those, the one that orders researchers' own papers best
   (`--own-papers FILE`: benchmarks/own_papers.py --json with the set as --weights rows; a run without it, or
   lacking some, prints the command that measures them) is the default (issue 39: out-of-domain evidence inside
   the choice). Beside it: issue 33's pick (the best CiteULike hard-candidate order), each dataset's own choice
   and the simplest within.
2. The fine order's nearest share, the same way, on the validation splits' fine nDCG@10.
3. On the test folds: the chosen default, what each of its parts adds, its n0 sweep, issue 33's pick, the weights
   shipped until then and every rule the fold run recorded (the peers), pooled and per library-size bucket: recall@50, recall@20,
   fine nDCG@10 and the order losses (whole held-out set; hard candidates, cut and with the in-area corpus).
Also checks the grid's arithmetic against the fold run's own shipped-form row (the fold's stepwise weights).
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
import dataclasses
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.evaluation.dumps import read_rules, read_split  # noqa: E402
from benchmarks.lib.weight_grid import (  # noqa: E402
    BUCKETS,
    EVIDENCE_GRID,
    NEAREST_GRID,
    SHIPPED_UNTIL_NOW,
    ScoredSplit,
    Weighting,
    bucket_means,
    bucket_name,
    coarse_grid,
    complexity,
    fine_choice,
    fine_mix,
    OBJECTIVE,
    fold_means,
    MissingOutside,
    one_se_choice,
    variants,
)
from recommender.scoring.fusion import FINE_WEIGHTS, FusionWeights  # noqa: E402

log = logging.getLogger("weight_choice")
SHIPPED_RULE = "zotrec fused (shipped form)"
SHOWN = (("recall@50", "recall@50"), ("recall@20", "recall@20"), ("fine.ndcg@10", "fine nDCG@10 (cut)"),
         ("order loss", "order loss, whole held-out set"), ("fine.order loss", "order loss, hard candidates (cut)"),
         ("in-area.ndcg@10", "fine nDCG@10, in-area corpus"), ("in-area.order loss", "order loss, in-area corpus"))


def fold_weights(out_file: Path) -> Weighting | None:
    """The fold run's own stepwise weights (the .out file's first line), as a Weighting."""
    if not out_file.is_file():
        return None
    first = json.loads(out_file.read_text(encoding="utf-8").splitlines()[0])["weights"]
    weights = FusionWeights(**{name: first.get(name, 0.0) for name in ("lexical", "learned", "collaborative")})
    return Weighting(weights, {k: v for k, v in first["fine"].items() if v > 0})


def validation_pass(dumps: dict[str, Path], folds: list[int]):
    grid = coarse_grid()
    per_dataset, sizes = {}, {}
    for name, folder in dumps.items():
        per_dataset[name], sizes[name] = [], []
        for fold in folds:
            started = time.process_time()
            kept = folder / f"fold{fold}" / "validation-measures.json"  # this pass's results, kept beside the dump
            known = json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else {}
            split = read_split(folder, fold, "validation")
            if not all(Weighting(w).label() in known for w in grid):
                scored = ScoredSplit(split, seed=fold)
                known |= {Weighting(w).label(): scored.validation_measures(w)
                          for w in grid if Weighting(w).label() not in known}
                kept.write_text(json.dumps(known, indent=0) + "\n", encoding="utf-8")
                del scored
            per_dataset[name].append({w: known[Weighting(w).label()] for w in grid})
            sizes[name].append(split.sizes)
            log.info("%s fold %d validation: %d weightings in %.0f s CPU", name, fold, len(grid),
                     time.process_time() - started)
    return per_dataset, {name: np.concatenate(s) for name, s in sizes.items()}


def fine_pass(dumps: dict[str, Path], folds: list[int], chosen: FusionWeights) -> dict[str, list[dict[float, float]]]:
    per_dataset = {}
    for name, folder in dumps.items():
        per_dataset[name] = []
        for fold in folds:
            scored = ScoredSplit(read_split(folder, fold, "validation"), seed=fold)
            per_dataset[name].append({s: float(scored.fine_ndcg(Weighting(chosen, fine_mix(chosen, s))).mean())
                                      for s in NEAREST_GRID})
            del scored
    return per_dataset


def own_papers_losses(path: Path) -> dict[FusionWeights, float]:
    """The own-papers loss (no author step) of each given row of a benchmarks/own_papers.py --json file."""
    result = json.loads(path.read_text(encoding="utf-8"))
    return {FusionWeights(**row["fusion_weights"]): result["rows"][row["row"]]["bare"]["loss"]
            for row in result.get("given", [])}


def own_papers_command(weightings: list[FusionWeights]) -> str:
    """The benchmarks/own_papers.py run that measures `weightings` (each with the shipped fine order's nearest
    share; the fine order moves own papers by 0.0005 at most, docs/evaluation-history.md)."""
    nearest = FINE_WEIGHTS["nearest"]
    rows = " ".join(f"--weights '{json.dumps(dataclasses.asdict(w))}' --fine '{json.dumps(fine_mix(w, nearest))}'"
                    for w in weightings)
    return (f"{len(weightings)} weightings of the one-SE set have no own-papers loss; measure them:\n"
            f"  OPENBLAS_NUM_THREADS=1 python benchmarks/own_papers.py {rows} --json OWN.json")


def test_rows(default: Weighting, by_order: Weighting) -> dict[str, Weighting]:
    rows = {"zotrec default (issue 39: one-SE recall on both datasets, best on own papers)": default,
            **{f"default {name}": weighting for name, weighting in variants(default).items()}}
    if by_order.weights != default.weights:
        rows["issue 33's rule (one-SE recall, best CiteULike hard-candidate order)"] = by_order
    rows["weights shipped until issue 33 (fixed)"] = SHIPPED_UNTIL_NOW
    for n0 in EVIDENCE_GRID:
        if n0 != default.weights.learned_evidence:
            rows[f"default with n0 = {n0:g}"] = Weighting(replace(default.weights, learned_evidence=n0), default.fine)
    return rows


def test_pass(dumps: dict[str, Path], folds: list[int], default: Weighting, by_order: Weighting,
              simplest: dict[str, Weighting]) -> dict[str, list[dict]]:
    """dataset → per fold: rule → metric → bucket → mean."""
    out = {}
    for name, folder in dumps.items():
        out[name] = []
        for fold in folds:
            started = time.process_time()
            split = read_split(folder, fold, "test")
            scored = ScoredSplit(split, seed=fold)
            table = {}
            rules = read_rules(folder, fold)
            own = fold_weights(Path(str(folder) + f"{fold}.out"))
            if own is not None and SHIPPED_RULE in rules:  # the grid's arithmetic is the fold run's
                mine = scored.metrics(own)
                for metric in ("recall@50", "order loss"):  # float32 signals here: a rare tie may fall apart
                    if abs(np.mean(mine[metric]) - np.mean(rules[SHIPPED_RULE][metric])) > 2e-4:
                        raise SystemExit(f"{name} fold {fold}: the grid's {metric} differs from the fold run's "
                                         f"shipped form ({np.mean(mine[metric]):.5f} vs "
                                         f"{np.mean(rules[SHIPPED_RULE][metric]):.5f})")
                log.info("%s fold %d: the grid reproduces the fold run's shipped form", name, fold)
            rows = test_rows(default, by_order)
            rows["one-SE, the simplest within (least weight on the linear model and collaborative part)"] = simplest[name]
            for label, weighting in rows.items():
                table[label] = bucket_means(scored.metrics(weighting), split.sizes, split.hard_rows)
            for label, metrics in rules.items():
                label = "zotrec fused, stepwise weights per fold (until now)" if label == SHIPPED_RULE else label
                table[label] = bucket_means(metrics, split.sizes, split.hard_rows)
            out[name].append(table)
            log.info("%s fold %d test: %.0f s CPU", name, fold, time.process_time() - started)
            del scored, split
    return out


def cell(values: list[float]) -> str:
    values = [v for v in values if v == v]
    return f"{np.mean(values):.4f} ± {np.std(values):.4f}" if values else "–"


def print_tables(tests: dict[str, list[dict]]) -> None:
    columns = ["all", *(bucket_name(b) for b in BUCKETS)]
    for name, folds in tests.items():
        for metric, title in SHOWN:
            rows = [rule for rule in folds[0] if metric in folds[0][rule]]
            if not rows:
                continue
            print(f"\n{name}, {title}, {len(folds)} folds, mean ± std over folds, by library size (training items)")
            print("| rule | " + " | ".join(columns) + " |")
            print("|---|" + "---:|" * len(columns))
            for rule in rows:
                print(f"| {rule} | " + " | ".join(cell([f[rule][metric][c] for f in folds]) for c in columns) + " |")


def main(argv: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    started, wall = time.process_time(), time.perf_counter()
    json_path, own_path, folds, dumps = None, None, [0, 1, 2, 3, 4], {}
    args = iter(argv)
    for arg in args:
        if arg == "--json":
            json_path = Path(next(args))
        elif arg == "--own-papers":
            own_path = Path(next(args))
        elif arg == "--folds":
            folds = [int(f) for f in next(args).split(",")]
        else:
            name, folder = arg.split("=", 1)
            dumps[name] = Path(folder)
    per_dataset, sizes = validation_pass(dumps, folds)
    own_choices, simplest = {}, {}
    for name in dumps:  # each dataset's own choice and its simplest within, reported beside the default
        choice = own_choices[name] = one_se_choice({name: per_dataset[name]}, {name: sizes[name]})
        simplest[name] = one_se_choice({name: per_dataset[name]}, {name: sizes[name]}, objective=None).chosen
        table = choice.table[name]
        ordering = fold_means(per_dataset[name], OBJECTIVE)
        print(f"{name} validation recall@50, mean ± SE over folds: best {Weighting(choice.best).label()} "
              f"{table[choice.best][0]:.4f} ± {table[choice.best][1]:.4f}; {len(choice.within)} of "
              f"{len(coarse_grid())} within one SE")
        for label, weights in (("its own choice (the best order loss among hard candidates)", choice.chosen),
                               ("the simplest within", simplest[name]), ("shipped until issue 33", SHIPPED_UNTIL_NOW.weights)):
            if weights in table:
                print(f"  {label}: {Weighting(weights).label()}: recall@50 {table[weights][0]:.4f}, {OBJECTIVE} "
                      f"{ordering[weights][0]:.4f}, mean weight on the linear model and the collaborative part "
                      f"{complexity(weights, sizes[name]):.3f}")
    by_order = one_se_choice(per_dataset, sizes)  # issue 33's rule, on every dataset at once
    outside = own_papers_losses(own_path) if own_path is not None else None
    try:
        joint = one_se_choice(per_dataset, sizes, outside=outside) if outside is not None else by_order
    except MissingOutside as missing:
        raise SystemExit(own_papers_command(missing.weightings)) from None
    print(f"within one SE on every dataset: {len(joint.within)} weightings")
    for weights in joint.within:
        print(f"  {Weighting(weights).label()}: " + ", ".join(
            f"{name} recall@50 {joint.table[name][weights][0]:.4f}" for name in dumps)
              + ("" if outside is None else f", own papers {outside[weights]:.4f}"))
    if outside is None:
        print("no --own-papers: the default is issue 33's pick; " + own_papers_command(joint.within))
    with ProcessPoolExecutor(len(dumps)) as pool:  # a process per dataset (each holds one split at a time)
        fine_tables = dict(zip(dumps, pool.map(fine_pass, [{name: dumps[name]} for name in dumps], [folds] * len(dumps),
                                               [joint.chosen] * len(dumps))))
    fine_tables = {name: table[name] for name, table in fine_tables.items()}
    nearest = fine_choice(fine_tables)
    print("fine nDCG@10 on validation: " + "; ".join(
        name + " " + ", ".join(f"nearest {s:g}: {np.mean([f[s] for f in fine_tables[name]]):.4f}" for s in NEAREST_GRID)
        for name in dumps) + f"; chosen nearest {nearest:g}")
    default = Weighting(joint.chosen, fine_mix(joint.chosen, nearest))
    by_order_default = Weighting(by_order.chosen, fine_mix(by_order.chosen, nearest))
    print(f"default: {default.label()}\nissue 33's rule: {by_order_default.label()}")
    alternatives = {name: Weighting(w, fine_mix(w, nearest)) for name, w in simplest.items()}
    with ProcessPoolExecutor(len(dumps)) as pool:
        parts = pool.map(test_pass, [{name: dumps[name]} for name in dumps], [folds] * len(dumps),
                         [default] * len(dumps), [by_order_default] * len(dumps), [alternatives] * len(dumps))
        tests = {name: part[name] for name, part in zip(dumps, parts)}
    print_tables(tests)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\n{time.process_time() - started:.0f} s CPU, {time.perf_counter() - wall:.0f} s wall, "
          f"peak RSS {usage.ru_maxrss / 1024:.0f} MB")
    if json_path is not None:
        def card(w: Weighting) -> dict:
            return {"fusion_weights": dataclasses.asdict(w.weights), "fine_weights": dict(w.fine or {})}

        json_path.write_text(json.dumps({
            "made_by": "benchmarks/weight_choice.py " + " ".join(argv),
            "default": card(default),
            "chosen_by": "own papers" if outside is not None else "CiteULike hard-candidate order loss",
            "issue_33_rule": card(by_order_default),
            "own_choices": {name: Weighting(choice.chosen).label() for name, choice in own_choices.items()},
            "within_one_se_on_every_dataset": [Weighting(w).label() for w in joint.within],
            "own_papers_loss": None if outside is None else {Weighting(w).label(): outside[w] for w in joint.within},
            "validation_recall50": {name: {Weighting(w).label(): list(v) for w, v in table.items()}
                                    for name, table in joint.table.items()},
            "validation_fine_ndcg10": {name: {str(s): [f[s] for f in table] for s in NEAREST_GRID}
                                       for name, table in fine_tables.items()},
            "test": tests}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
