"""Issue 37's quality check outside machine learning: a biology/medicine day, one real researcher's papers in it.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/field_recall.py ../shared/data/citeulike-a \
        [--users 200] [--day 500] [--held-out 5] [--seed 0] [--json OUT] [--model PATH]

CiteULike-a users whose items are mostly biology and medicine (by the items' own tags: BIO_TAGS against CS_TAGS,
never the titles the recommender reads) with 20–200 items; each user's `--held-out` random items are hidden
in a "day" of `--day` other biology/medicine titles that user never saved (a day of a bioRxiv/PubMed-like
stream: papers of the same fields, which others did save). The rest of the user's items are the library. Each
rule ranks the day's papers; recall@5/@10 is the share of the hidden papers in the top 5/10 (so recall@10 can
reach 1 only with 5 hidden), averaged over users, ± the standard error. Titles only (CiteULike-a has no abstracts
here).

Rules: the shipped default (dense features, the fused score, the shipped collaborative model, interests on), the
same without the collaborative model (that model was trained on CiteULike-a, these users' hidden items and the
day's papers among what it learned from: the leak-free comparison is the second row's), and plain similarity of the same MiniLM rows (each paper's best
cosine to a library item; and the mean cosine, zotero-arxiv-daily's rule without its recency weights). `--model`
adds the default with another collaborative model: `zotrec train` on a copy of CiteULike-a whose users.dat has
every biology/medicine item taken out (`--write-cold-copy FOLDER` writes it), so no paper of any day was seen.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.features.dense import DenseRepresentation  # noqa: E402
from recommender.items import LibraryItem, Paper  # noqa: E402
from recommender.scoring.fusion import DEFAULT_SCORING  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402

BIO_TAGS = {
    "evolution", "genomics", "genome", "protein", "genetics", "gene", "biology", "expression", "microarray",
    "sequencing", "transcription", "gene_expression", "gene-expression", "ngs", "regulation", "neuroscience",
    "mirna", "microrna", "rna", "systems_biology", "systems-biology", "yeast", "ppi", "phylogenetics", "phylogeny",
    "bacteria", "fmri", "brain", "metagenomics", "snp", "cancer", "dna", "binding", "pathway", "proteins", "disease",
    "ecology", "genetic", "gwas", "protein-protein", "humgen", "rna-seq", "protein_structure", "epigenetics",
    "metabolism", "ncrna", "cell", "immunology", "medicine", "clinical", "epidemiology", "virus", "hiv",
    "drosophila", "mouse", "plant", "chromatin", "splicing", "transcriptome", "proteomics", "neuron", "cortex",
    "population_genetics", "speciation", "adaptation", "bioinformatics", "molecular_evolution", "stem_cells"}
CS_TAGS = {
    "learning", "machine-learning", "machine_learning", "classification", "mining", "data-mining", "web", "web20",
    "social", "social_networks", "social-networks", "semantic", "ir", "retrieval", "search", "tagging", "hci",
    "nlp", "programming", "software", "internet", "recommender", "collaborative", "ontology", "text-mining",
    "algorithm", "algorithms", "citeulike", "computing", "distributed", "visualization", "clustering"}
MIN_ITEMS, MAX_ITEMS, BIO_SHARE = 20, 200, 0.7


def read_lists(path: Path) -> list[np.ndarray]:
    return [np.array(line.split()[1:], dtype=np.int64) for line in path.read_text().splitlines()]


def bio_items(item_tags: list[np.ndarray], tags: list[str]) -> np.ndarray:
    """Items tagged more often with biology/medicine tags than with computing ones."""
    bio = np.array([name in BIO_TAGS for name in tags])
    cs = np.array([name in CS_TAGS for name in tags])
    return np.array([len(row) > 0 and bio[row].sum() > cs[row].sum() for row in item_tags])


def write_cold_copy(root: Path, folder: Path, users: list[np.ndarray], is_bio: np.ndarray) -> None:
    """CiteULike-a with every save of a biology/medicine item taken out, for `zotrec train --data citeulike-a:…`."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [" ".join(map(str, [len(rest), *rest])) for rest in ([int(i) for i in row if not is_bio[i]]
                                                                for row in users)]
    (folder / "users.dat").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "titles.txt").write_text((root / "titles.txt").read_text(encoding="utf-8"), encoding="utf-8")
    print(f"{folder}: {int(is_bio.sum())} biology/medicine items without saves; now "
          f"zotrec train --data citeulike-a:{folder} -o cold.npz")


def recall(order: np.ndarray, hidden: set[int], ids: list[int], k: int) -> float:
    return len({ids[i] for i in order[:k]} & hidden) / len(hidden)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--day", type=int, default=500)
    parser.add_argument("--held-out", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--model", type=Path, help="also the default with this collaborative model (`zotrec train` on "
                        "a copy of the data without the biology/medicine items: none of a day's papers seen)")
    parser.add_argument("--write-cold-copy", type=Path, metavar="FOLDER",
                        help="write users.dat and titles.txt without the biology/medicine items' saves, then stop")
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    users = read_lists(args.root / "users.dat")
    item_tags = read_lists(args.root / "item-tag.dat")
    titles = (args.root / "titles.txt").read_text(encoding="utf-8").splitlines()
    tags = (args.root / "tags.dat").read_text(encoding="utf-8").splitlines()
    is_bio = bio_items(item_tags, tags)
    if args.write_cold_copy:
        write_cold_copy(args.root, args.write_cold_copy, users, is_bio)
        return
    rng = np.random.default_rng(args.seed)
    seen: set[tuple[int, ...]] = set()
    fit = [user for user in rng.permutation(len(users))
           if MIN_ITEMS <= len(users[user]) <= MAX_ITEMS and is_bio[users[user]].mean() >= BIO_SHARE
           and not (tuple(users[user]) in seen or seen.add(tuple(users[user])))]
    drawn = [int(user) for user in fit[:args.users]]
    mine = set(np.concatenate([users[user] for user in drawn]).tolist())
    pool = np.flatnonzero(is_bio)
    representation = DenseRepresentation()
    needed = sorted(mine | set(pool.tolist()))
    rows = dict(zip(needed, representation.transform([titles[item] for item in needed])))
    print(f"{len(drawn)} of {len(fit)} biology/medicine users, a day of {args.day} from {len(pool)} biology/medicine "
          f"titles, {args.held_out} held out each; {len(needed)} titles embedded in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    models = {"default": model, "default without the collaborative model": None}
    if args.model:
        models[f"default with {args.model.name}"] = DenseCollaborativeModel.load(args.model)
    rules = (*models, "best cosine (max)", "mean cosine")
    scores: dict[str, dict[str, list[float]]] = {rule: {"recall@5": [], "recall@10": []} for rule in rules}
    for user in drawn:
        items = np.random.default_rng([args.seed, user]).permutation(users[user])
        hidden, kept = items[:args.held_out], items[args.held_out:]
        others = np.setdiff1d(pool, users[user])  # every biology/medicine title this user never saved
        day = np.concatenate([hidden, rng.choice(others, size=args.day, replace=False)])
        day = day[rng.permutation(len(day))]
        ids = [int(item) for item in day]
        papers = [Paper(id=str(item), title=titles[item]) for item in ids]
        library = [LibraryItem(key=str(item), title=titles[item]) for item in kept]
        day_rows = np.stack([rows[item] for item in ids])
        orders = {}
        for rule, with_model in models.items():
            recommender = Recommender(papers, representation=representation, aggregation=DEFAULT_SCORING,
                                      model=with_model, corpus_rows=day_rows)
            place = {paper_id: n for n, paper_id in enumerate(ids)}
            orders[rule] = np.array([place[int(rec.paper.id)] for rec in recommender.recommend(library, top_n=10)])
        similarity = day_rows @ np.stack([rows[item] for item in kept]).T
        orders["best cosine (max)"] = np.argsort(-similarity.max(axis=1), kind="stable")
        orders["mean cosine"] = np.argsort(-similarity.mean(axis=1), kind="stable")
        wanted = set(int(item) for item in hidden)
        for rule, order in orders.items():
            for k in (5, 10):
                scores[rule][f"recall@{k}"].append(recall(order, wanted, ids, k))
    floor = {f"recall@{k}": k / (args.day + args.held_out) for k in (5, 10)}
    result = {"users": len(drawn), "day": args.day, "held_out": args.held_out, "seed": args.seed,
              "random": floor, "rules": {}}
    print(f"\n| rule | recall@5 | recall@10 |\n|---|---|---|")
    for rule in rules:
        cells = {}
        for metric, values in scores[rule].items():
            values = np.array(values)
            cells[metric] = {"mean": float(values.mean()), "se": float(values.std(ddof=1) / np.sqrt(len(values)))}
        result["rules"][rule] = cells
        print(f"| {rule} | {cells['recall@5']['mean']:.3f} ± {cells['recall@5']['se']:.3f} | "
              f"{cells['recall@10']['mean']:.3f} ± {cells['recall@10']['se']:.3f} |")
    print(f"| random | {floor['recall@5']:.3f} | {floor['recall@10']:.3f} |")
    print(f"\n{time.perf_counter() - started:.0f} s wall, {time.process_time() - cpu:.0f} s CPU", flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
