"""Issue 39's per-pick floor: is `low_best` (recommender/scoring/match.py) a bar that separates a user's own next
save from a random paper, and how many picks of real lists fall under it.

    python benchmarks/weak_picks.py citeulike ../shared/data/citeulike-a 500   # held-out saves vs random papers
    python benchmarks/weak_picks.py lists [--corpus FILE] LIBRARY...   # each library's top 20 (default: bundled ICML)
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np


def citeulike(folder: str, users: int, seed: int = 0) -> None:
    """Per user: one saved item held out; its best cosine (dense title rows) to the user's other items,
    against a random item the user did not save."""
    from recommender.collaborative.datasets import load_citeulike_a
    from recommender.features import make_representation
    from recommender.scoring.match import CALIBRATIONS

    data = load_citeulike_a(folder)
    rows = make_representation("dense").fit(data.texts).transform(data.texts)
    rng = np.random.default_rng(seed)
    matrix = data.interactions.tocsr()
    chosen = rng.choice([u for u in range(data.n_users) if matrix[u].nnz >= 6], size=users, replace=False)
    held, random = [], []
    for user in chosen:
        items = matrix[user].indices
        out = rng.choice(items)
        rest = rows[items[items != out]]
        other = rng.integers(data.n_items)
        while other in items:
            other = rng.integers(data.n_items)
        held.append(float((rest @ rows[out]).max()))
        random.append(float((rest @ rows[other]).max()))
    held, random = np.array(held), np.array(random)
    bar = CALIBRATIONS["dense"].low_best
    print(f"{users} citeulike-a users (≥ 6 items), dense title rows, best cosine to the user's other items")
    print("| | p10 | p25 | median | p75 | below " + f"{bar:.2f} |")
    print("|---|---|---|---|---|---|")
    for name, values in (("held-out save", held), ("random paper", random)):
        p10, p25, p50, p75 = np.percentile(values, [10, 25, 50, 75])
        print(f"| {name} | {p10:.2f} | {p25:.2f} | {p50:.2f} | {p75:.2f} | {100 * np.mean(values < bar):.0f} % |")
    for cut in (0.25, 0.30, 0.35, 0.40, 0.45):
        print(f"bar {cut:.2f}: held-out below {100 * np.mean(held < cut):.0f} %, random below {100 * np.mean(random < cut):.0f} %")


def lists(libraries: list[str], corpus: list[str]) -> None:
    """Each library's top 20 through `zotrec reading-list --format json` (this checkout): its lowest match, the
    picks flagged weak, whether the list is flagged."""
    print("| library | lowest match in the top 20 | picks below the bar | flagged |")
    print("|---|---|---|---|")
    for library in libraries:
        done = subprocess.run([sys.executable, "-m", "zotero_bridge", "reading-list", "--library", library, "-n", "20",
                               "--format", "json", *corpus], capture_output=True, text=True, check=True)
        rows = json.loads(done.stdout)
        matches = [row["match"] for row in rows if row["match"] is not None]
        weak = [row["rank"] for row in rows if row.get("weak")]
        flagged = "Weak match" in done.stderr
        print(f"| {library.rsplit('/', 1)[-1]} | {min(matches, default='—')} % | {len(weak)} "
              f"{'(' + ', '.join(map(str, weak)) + ')' if weak else ''} | {'yes' if flagged else 'no'} |")
        for line in done.stderr.splitlines():
            if "Weak match" in line:
                print("    " + line.strip())


if __name__ == "__main__":
    if sys.argv[1] == "citeulike":
        citeulike(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[2:3] == ["--corpus"]:
        lists(sys.argv[4:], ["--corpus", sys.argv[3]])
    else:
        lists(sys.argv[2:], [])
