"""Own papers: ordering within a field (issue 33), for the shipped default and every peer rule.

Each ICML 2025 author with at least --min-papers papers in the bundled list (by name key, full given names)
is a researcher: their other papers, as a Zotero export has them (titles, creators), are the library; one
held-out paper and its --neighbours nearest papers (MiniLM cosine to the held-out paper, a measure no rule
ranks by; --space tfidf: tf-idf cosine) are the candidates; grades 2 / 1 / 0 for the held-out paper, a
collaborator's paper, the rest (benchmarks/lib/own_papers.py). Scores come from `Recommender.recommend(top_n=0)` on the real
shipped Recommender (pipeline/build.default_built) and the same class for the peer rules, so a row is what
that rule's user gets. The main figures leave the author step out (the library's items without their
creators: the held-out paper shares its author with every item, which would make it trivial; the
expertise check is about closeness of topic); the second pair adds it back with scoring/authors.with_authors,
the step `recommend` applies, checked against `recommend` with the creators for the default row.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/own_papers.py [--min-papers 6] [--held-out 2] \
        [--weights '{"lexical": 0.024, "learned": 0.56, "collaborative": 0.2}'] [--fine '{"nearest": 0.3}'] \
        [--self-validate] [--half 0|1] [--in-area] [--json OUT]

--weights / --fine add a row: the shipped model with those FusionWeights (keys it lacks are ignored with a
warning) and that fine order ('{}': none; left out: the model's); repeat them for more rows in one run. --half 0 or 1
keeps one half of the researchers (all profiles of an author together; a fixed shuffle, lib's HALF_SEED), so a row
chosen on one half can be judged on the other (issue 39). Prints a markdown table and the process's CPU seconds, wall
time and peak RSS; --json also keeps each row's per-profile loss parts ("profile_losses", no author step) for
paired comparisons between any two rows (`paired_se`), and the given rows' weights ("given": what
benchmarks/weight_choice.py --own-papers reads). --in-area scores each profile against its 20 candidates alone,
the held-out expertise check's situation (`zotrec score` on the rated papers): the fine order then orders every
candidate, where against the whole list it reaches few of them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.own_papers import (  # noqa: E402
    MIN_PAPERS, NDCG_AT, NEIGHBOURS, author_half, graded_ndcg, own_paper_cases, pairwise_loss, paper_item,
    pooled_loss,
)
from recommender.features import make_representation  # noqa: E402
from recommender.features.authors import string_key  # noqa: E402
from recommender.scoring.authors import match_authors, with_authors  # noqa: E402
from recommender.scoring.corpus_side import corpus_authors  # noqa: E402
from recommender.scoring.fusion import FINE_SIGNALS, FusionWeights  # noqa: E402
from recommender.scoring.owned import CorpusKeys  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402

log = logging.getLogger("own_papers")
DEFAULT = "zotrec default (fused, fine order, shipped model)"
LIST_ORDER = "zotrec default, list order (interests)"
NONE = "zotrec --model none"
SELF_VALIDATED = "self-validated: the default or --model none, by the profile's leave-one-out"
PEERS = ("max", "mean", "top3", "top5", "top10")
SIZE_BUCKETS = ((1, 5), (6, 8), (9, 10**6))  # profile items


def parsed_weights(text: str) -> FusionWeights:
    """FusionWeights from JSON; keys this checkout's FusionWeights lacks are dropped with a warning."""
    given = json.loads(text)
    known = {field.name for field in dataclasses.fields(FusionWeights)}
    for name in sorted(set(given) - known):
        log.warning("--weights: FusionWeights has no field %r here; ignored", name)
    return FusionWeights(**{name: float(value) for name, value in given.items() if name in known})


def parsed_fine(text: str) -> dict[str, float]:
    given = {name: float(value) for name, value in json.loads(text).items()}
    for name in sorted(set(given) - set(FINE_SIGNALS)):
        log.warning("--fine: no fine-order signal %r; ignored", name)
    return {name: value for name, value in given.items() if name in FINE_SIGNALS and value > 0}


def given_rows(weights: list[str], fine: list[str]) -> list[tuple[FusionWeights | None, dict | None]]:
    """The extra rows: the i-th --weights with the i-th --fine (the model's fine order when there is none);
    a --fine beyond the last --weights goes with the shipped weights."""
    count = max(len(weights), len(fine))
    return [(parsed_weights(weights[i]) if i < len(weights) else None, parsed_fine(fine[i]) if i < len(fine) else None)
            for i in range(count)]


def rules(built, extra: list[tuple[FusionWeights | None, dict | None]]) -> dict[str, Recommender]:
    """Every rule's Recommender on the shipped corpus rows (the default is the shipped one itself), and one
    with the shipped model per given (weights, fine order) pair (None: the model's own)."""
    shipped = built.recommender
    papers, model = shipped.corpus, shipped.model
    common = dict(representation=shipped.representation, corpus_rows=shipped.corpus_rows,
                  corpus_keys=CorpusKeys(papers), interests=False)  # the interests reorder the list, not a score
    out = {DEFAULT: shipped,
           "zotrec, no fine order": Recommender(papers, model=model, fine_order=False, **common),
           NONE: Recommender(papers, model=None, **common),
           "zotrec --aggregation top5 (with the model)": Recommender(papers, aggregation="top5", model=model, **common)}
    out.update({f"dense {name}": Recommender(papers, aggregation=name, **common) for name in PEERS})
    out["tf-idf top5"] = Recommender(papers, representation="tfidf", aggregation="top5",
                                     corpus_keys=common["corpus_keys"], interests=False)
    for number, (weights, fine) in enumerate(extra):
        given = Recommender(papers, model=model, weights=weights, **common)
        if fine is not None:
            given.fine = fine
        out[f"given {number + 1}: {given.weights}, fine {given.fine}"] = given
    return out


def in_area(recommender: Recommender, candidates: np.ndarray, background: list) -> Recommender:
    """The same rule with the candidates alone as its corpus (the expertise check's situation), scored beside
    `background` as `zotrec score` scores a small corpus (recommender/scoring/background.py; [] for none); tf-idf
    rules are fitted on those papers, as `zotrec score` on them would be."""
    papers = [recommender.corpus[number] for number in candidates]
    narrowed = Recommender(papers, representation=recommender.representation if recommender.dense else "tfidf",
                           aggregation=recommender.aggregation, model=recommender.model, weights=recommender.weights,
                           corpus_rows=recommender.corpus_rows[candidates] if recommender.dense else None,
                           corpus_keys=CorpusKeys(papers), interests=False, fine_order=bool(recommender.fine),
                           background=background)
    narrowed.fine = recommender.fine
    return narrowed


def held_out_rank(recommender: Recommender, items: list, profile: list[int], position: dict[int, int],
                  size: int) -> float:
    """The mean place (0: first) of each profile paper among the unowned corpus when the rest of the profile
    ranks it: the library's own evidence of how well a form orders its field (issue 39, self-validation)."""
    places = []
    for left_out, paper in enumerate(profile):
        rest = items[:left_out] + items[left_out + 1:]
        scores = full_scores(recommender.recommend(rest, top_n=0), position, size)
        places.append(float((scores > scores[paper]).sum()))
    return float(np.mean(places))


def full_scores(recommendations, position: dict[int, int], size: int, by_rank: bool = False) -> np.ndarray:
    """Per corpus paper, its score (or −rank: the list's order) in `recommend`'s answer; −inf if owned."""
    scores = np.full(size, -np.inf)
    for found in recommendations:
        scores[position[id(found.paper)]] = -found.rank if by_rank else found.score
    return scores


def run(args) -> dict:
    from recommender.pipeline.build import default_built

    wall, started = time.perf_counter(), time.process_time()
    built = default_built()
    corpus = built.recommender.corpus
    keys = [{key for key in map(string_key, paper.authors) if key is not None and len(key.given) > 1}
            for paper in corpus]
    space = built.recommender.corpus_rows  # MiniLM rows; tf-idf rows (sparse) to see what the choice does
    if args.space == "tfidf":
        texts = [paper.text for paper in corpus]
        space = make_representation("tfidf").fit(texts).transform(texts)
    cases = own_paper_cases(keys, space, min_papers=args.min_papers,
                            held_out_per_author=args.held_out, neighbours=args.neighbours, pool=args.pool,
                            seed=args.seed)
    if args.half is not None:
        cases = author_half(cases, args.half)
    if args.limit:
        cases = cases[: args.limit]
    scorers = rules(built, given_rows(args.weights or [], args.fine or []))
    if args.rules:  # the default always stays: every row is compared with it
        scorers = {name: scorer for name, scorer in scorers.items()
                   if name == DEFAULT or any(name.startswith(prefix) for prefix in args.rules)}
    index, position = corpus_authors(corpus), {id(paper): number for number, paper in enumerate(corpus)}
    if args.self_validate and args.in_area:
        raise SystemExit("--self-validate ranks the profile among the whole list: not with --in-area")
    validated = SELF_VALIDATED if args.self_validate and NONE in scorers else None
    parts = {name: {"bare": [], "authors": []} for name in [DEFAULT, LIST_ORDER, *list(scorers)[1:]]
             + ([validated] if validated else [])}
    chose_default = 0
    mismatched = 0
    for number, case in enumerate(cases):
        items = [paper_item(corpus[p], f"own-{p}") for p in case.profile]
        bare = [dataclasses.replace(item, creators=()) for item in items]
        matches = match_authors(index, items)
        if args.in_area:  # the bundled list without this case's papers: the candidates are papers it does not hold
            mine = {int(n) for n in (*case.candidates, *case.profile)}
            background = [] if args.no_background else [p for n, p in enumerate(corpus) if n not in mine]
        for name, recommender in scorers.items():
            if args.in_area:
                recommender = in_area(recommender, case.candidates, background)
            answer = recommender.recommend(bare, top_n=0)
            scores = full_scores(answer, position, len(corpus))
            owned = np.isinf(scores)
            boosted = with_authors(scores, matches, owned)
            parts[name]["bare"].append((scores[case.candidates], case.grades))
            parts[name]["authors"].append((boosted[case.candidates], case.grades))
            if name == DEFAULT:  # the real path with creators: the same step, and the list a user sees
                real = recommender.recommend(items, top_n=0)
                # (in-area, each author's cap counts the background's papers too: the check is the whole list's)
                mismatched += not args.in_area and not np.allclose(full_scores(real, position, len(corpus)), boosted)
                parts[LIST_ORDER]["bare"].append((full_scores(answer, position, len(corpus), True)[case.candidates],
                                                  case.grades))
                parts[LIST_ORDER]["authors"].append((full_scores(real, position, len(corpus), True)[case.candidates],
                                                     case.grades))
        if validated:  # the form whose leave-one-out ranks the profile's own papers higher (ties: the default)
            forms = {name: held_out_rank(scorers[name], bare, case.profile, position, len(corpus))
                     for name in (DEFAULT, NONE)}
            chosen = DEFAULT if forms[DEFAULT] <= forms[NONE] else NONE
            chose_default += chosen == DEFAULT
            for kind in ("bare", "authors"):
                parts[validated][kind].append(parts[chosen][kind][-1])
        if (number + 1) % 25 == 0:
            print(f"  {number + 1}/{len(cases)} profiles, {time.process_time() - started:.0f} s CPU", file=sys.stderr,
                  flush=True)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    grades = np.concatenate([case.grades for case in cases]) if cases else np.zeros(0)
    return {
        "profiles": len(cases), "authors": len({case.author for case in cases}),
        "profile_sizes": [int(min(len(c.profile) for c in cases)), int(max(len(c.profile) for c in cases))] if cases else [],
        "candidates": args.neighbours + 1, "grade_counts": {str(g): int((grades == g).sum()) for g in (2, 1, 0)},
        "with_authors_mismatches": mismatched, "settings": vars(args),
        "self_validated_chose_default": chose_default if validated else None,
        "rows": {name: {kind: summary(found, parts[DEFAULT][kind]) for kind, found in kinds.items()}
                 for name, kinds in parts.items()},
        "profile_losses": {name: [pairwise_loss(*row) for row in kinds["bare"]]
                           for name, kinds in parts.items()},
        "given": [{"row": name, "fusion_weights": dataclasses.asdict(scorers[name].weights),
                   "fine_weights": dict(scorers[name].fine or {})}
                  for name in scorers if name.startswith("given ")],
        "by_profile_size": by_size(parts, [len(case.profile) for case in cases]),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "wall_s": round(time.perf_counter() - wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024), "load": os.getloadavg()}


def paired_se(losses, base=None, draws: int = 200) -> float:
    """The bootstrap standard error over profiles of the pooled loss from per-profile (wrong, weight) parts
    `losses`, or with `base` (the other rule's parts on the same profiles) of the difference between the two,
    the same draws for both (seed 0, as every table here)."""
    losses = np.asarray(losses, dtype=np.float64)
    rows = np.random.default_rng(0).integers(0, len(losses), size=(draws, len(losses)))

    def booted(parts: np.ndarray) -> np.ndarray:
        return parts[rows, 0].sum(axis=1) / np.maximum(parts[rows, 1].sum(axis=1), 1e-12)

    spread = booted(losses) if base is None else booted(losses) - booted(np.asarray(base, dtype=np.float64))
    return float(spread.std())


def summary(found: list[tuple[np.ndarray, np.ndarray]], reference: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """The pooled loss, its bootstrap standard error over profiles, its difference from the `reference` rule's
    on the same profiles with the paired bootstrap's standard error (the same draws for both), mean
    nDCG@10 and how often the held-out paper comes first among the candidates."""
    losses, base = ([pairwise_loss(scores, grades) for scores, grades in rows] for rows in (found, reference))
    loss = pooled_loss(losses)
    ndcg = [graded_ndcg(scores, grades, NDCG_AT) for scores, grades in found]
    first = [float((scores[0] > scores[1:]).all()) for scores, _ in found]  # the held-out paper is first
    return {"loss": round(loss, 4), "loss_se": round(paired_se(losses), 4),
            "vs_default": round(loss - pooled_loss(base), 4), "vs_default_se": round(paired_se(losses, base), 4),
            f"ndcg@{NDCG_AT}": round(float(np.nanmean(ndcg)), 4), "held_out_first": round(float(np.mean(first)), 3)}


def by_size(parts: dict, sizes: list[int]) -> dict:
    """Each rule's pooled loss (no author step) per profile-size bucket: whether a rule's edge depends on
    how many items the library has (issue 33: the linear model's share n / (n + n0))."""
    out = {}
    for low, high in SIZE_BUCKETS:
        chosen = [number for number, size in enumerate(sizes) if low <= size <= high]
        if chosen:
            out[f"{low}-{high}" if high < 10**6 else f"{low}+"] = {"profiles": len(chosen), **{
                name: round(pooled_loss([pairwise_loss(*kinds["bare"][n]) for n in chosen]), 4)
                for name, kinds in parts.items()}}
    return out


def table(result: dict) -> str:
    half = result["settings"].get("half")
    lines = [("" if half is None else f"Half {half} of the researchers: ")
             + ((f"In-area (each profile's candidates alone as the corpus"
                 f"{', no background' if result['settings'].get('no_background') else ', beside the bundled list'}): ")
                if result["settings"].get("in_area") else "")
             + f"{result['profiles']} profiles ({result['authors']} authors with ≥ {result['settings']['min_papers']} "
             f"ICML 2025 papers; profiles of {result['profile_sizes'][0]}–{result['profile_sizes'][1]} titles), "
             f"{result['candidates']} candidates each; grades (2/1/0): "
             + " / ".join(str(v) for v in result["grade_counts"].values()), "",
             f"| rule | loss | ± | − default's (± paired) | nDCG@{NDCG_AT} | held-out first | loss, with authors "
             f"| nDCG@{NDCG_AT}, with authors |", "|---|---|---|---|---|---|---|---|"]
    for name, row in result["rows"].items():
        bare, boosted = row["bare"], row["authors"]
        lines.append(f"| {name} | {bare['loss']:.4f} | {bare['loss_se']:.4f} | "
                     f"{bare['vs_default']:+.4f} ± {bare['vs_default_se']:.4f} | {bare[f'ndcg@{NDCG_AT}']:.4f} | "
                     f"{bare['held_out_first']:.3f} | {boosted['loss']:.4f} | {boosted[f'ndcg@{NDCG_AT}']:.4f} |")
    buckets = result["by_profile_size"]
    lines += ["", "Loss by profile size (items, no author step):", "", "| rule | " + " | ".join(
        f"{name} ({row['profiles']} profiles)" for name, row in buckets.items()) + " |",
        "|---|" + "---|" * len(buckets)]
    lines += [f"| {name} | " + " | ".join(f"{row[name]:.4f}" for row in buckets.values()) + " |"
              for name in result["rows"]]
    lines += ["", f"CPU {result['cpu_s']} s, wall {result['wall_s']} s, peak RSS {result['peak_rss_mb']} MB "
              f"(load {' / '.join(f'{v:.1f}' for v in result['load'])} on {os.cpu_count()} cores); "
              f"author step ≠ recommend's: {result['with_authors_mismatches']} profiles"]
    if result.get("self_validated_chose_default") is not None:
        lines.append(f"self-validation chose the default for {result['self_validated_chose_default']} of "
                     f"{result['profiles']} profiles")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-papers", type=int, default=MIN_PAPERS)
    parser.add_argument("--held-out", type=int, default=2, help="papers held out in turn per author")
    parser.add_argument("--neighbours", type=int, default=NEIGHBOURS)
    parser.add_argument("--pool", type=int, default=0,
                        help="draw the neighbours from the held-out paper's POOL nearest (0: the nearest)")
    parser.add_argument("--space", choices=("dense", "tfidf"), default="dense",
                        help="the rows the held-out paper's neighbours are chosen by")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--half", type=int, choices=(0, 1),
                        help="one half of the researchers only (a fixed shuffle): choose on one, judge on the other")
    parser.add_argument("--limit", type=int, default=0, help="the first N profiles only (a quick look)")
    parser.add_argument("--weights", action="append",
                        help="JSON FusionWeights for an extra row with the shipped model (repeatable)")
    parser.add_argument("--fine", action="append",
                        help="JSON fine-order weights for the row of the same position ('{}': no fine order)")
    parser.add_argument("--rules", nargs="+", metavar="PREFIX",
                        help="only the rules whose names start so (and the default), e.g. 'dense top3' given")
    parser.add_argument("--self-validate", action="store_true",
                        help="add the row that picks the default or --model none per profile by its leave-one-out")
    parser.add_argument("--in-area", action="store_true",
                        help="score each profile against its candidates alone (the expertise check's situation)")
    parser.add_argument("--no-background", action="store_true",
                        help="with --in-area: the candidates alone, no background beside them (zotrec before issue 39)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    # A fresh cache: the bundled list alone, as a new install ranks it (not a corpus fetched into the user's cache).
    with tempfile.TemporaryDirectory(prefix="zotrec-own-papers-") as cache:
        os.environ["ZOTREC_CACHE_DIR"] = cache
        result = run(args)
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
