"""Why a grown library's linear model is refitted from zero: L-BFGS started from the last run's optimum
stops at another point within the tolerance, and the scores move enough to reorder candidates.

    python benchmarks/warm_start.py [--warm-cache DIR]   # embeds 10,010 CiteULike titles + ICML once

A 10,000-item library (real CiteULike-a titles, as benchmarks/run.py) against the ICML 2025 titles: the
model of the library plus 10 items fitted from zero (what a full run does) and from the 10,000-item
model's optimum, at zotrec's tolerance and at tighter ones. Printed as a markdown table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from run import ICML, default_warm_cache  # noqa: E402
from synthetic import library_titles, read_titles  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-cache", metavar="DIR", help="embedding cache (default: the benchmarks' own)")
    args = parser.parse_args()
    os.environ["ZOTREC_CACHE_DIR"] = str(Path(args.warm_cache) if args.warm_cache else default_warm_cache())
    import numpy as np

    from recommender.corpus.readers import load_corpus
    from recommender.features import make_representation
    from recommender.scoring import learned

    encoder = make_representation("dense")
    papers = load_corpus([ICML]).papers
    corpus = np.asarray(encoder.transform([paper.text for paper in papers]), dtype=np.float32)
    library = np.asarray(encoder.transform(library_titles(10010, read_titles())), dtype=np.float32)
    print("| tolerance (gtol) | fit from zero: evaluations, CPU s | from the last optimum: evaluations, CPU s "
          "| largest score change | score spread (sd) | top 20 in the same order | all 3,330 in the same order |")
    print("|---|---:|---:|---:|---:|---|---|")
    for tol in (learned.TOL, 1e-6, 1e-8):
        last = learned.minimize_logistic(*learned.training_rows(library[:10000], corpus), tol=tol)
        x, y = learned.training_rows(library, corpus)
        fits = []
        for start in (None, last.x):
            started = time.process_time()
            result = learned.minimize_logistic(x, y, start=start, tol=tol)
            fits.append((result, time.process_time() - started))
        (cold, cold_s), (warm, warm_s) = fits
        scores = [corpus.astype(np.float64) @ result.x[:-1] for result in (cold, warm)]
        orders = [np.argsort(-values, kind="stable") for values in scores]
        print(f"| {tol:g}{' (zotrec)' if tol == learned.TOL else ''} | {cold.nfev}, {cold_s:.3f} | "
              f"{warm.nfev}, {warm_s:.3f} | {np.abs(scores[0] - scores[1]).max():.2g} | {scores[0].std():.2f} | "
              f"{'yes' if np.array_equal(orders[0][:20], orders[1][:20]) else 'no'} | "
              f"{'yes' if np.array_equal(orders[0], orders[1]) else 'no'} |")


if __name__ == "__main__":
    main()
