"""How far --prefer / --avoid move a list, per steering weight, and what --recent-half-life does.

Steering: on examples/library.bib against the default corpus (dense, the shipped collaborative part),
a recommended paper's topic is the first BibTeX keyword of its closest library item (as
benchmarks/topic_coverage.py). Per weight: the top N's count of the preferred topic, of the avoided
topic, and how many of the unsteered top N a nonsense prefer text keeps.

Recency: the newest-items hold-out (recommender/evaluation/holdout.py's split): the newest K dated items
are hidden among the corpus, the rest rank them, with and without each half-life.

    python benchmarks/steering.py [N]
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.topic_coverage import library_topics  # noqa: E402
from recommender.features.base import cosine  # noqa: E402
from recommender.items import Paper  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402
from recommender.scoring.steering import Steering, scale_for, steered_scores  # noqa: E402
from recommender.pipeline.build import default_built  # noqa: E402

WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
TESTS = [  # (what is asked, prefer texts, avoid texts, the topic it is about)
    ("prefer time series", ["time series forecasting"], [], "time series"),
    ("prefer normalizing flows", ["normalizing flows"], [], "normalizing flows"),
    ("prefer RLHF", ["reinforcement learning from human feedback"], [], "RLHF"),
    ("avoid LLMs", [], ["large language models"], "large language models"),
    ("avoid time series", [], ["time series forecasting"], "time series"),
]
NONSENSE = ["purple elephant marmalade on a Tuesday"]


def topic_counts(order, recommender, rows, items, topics, top_n) -> collections.Counter:
    """Topic of each of the first `top_n` papers: its closest library item's first keyword."""
    chosen = order[:top_n]
    sims = cosine(recommender.corpus_rows[chosen], rows)
    return collections.Counter(topics.get(items[int(best)].key, "?") for best in sims.argmax(axis=1))


def steering_table(top_n: int) -> None:
    items, topics = library_topics(ROOT / "examples" / "library.bib")
    items = [item for item in items if item.text.strip()]
    recommender = default_built().recommender
    recs = recommender.recommend(items, top_n=0)  # every paper not owned, by the fused score
    index = {paper.id: place for place, paper in enumerate(recommender.corpus)}
    candidates = np.array([index[rec.paper.id] for rec in recs])
    base = np.array([rec.score for rec in recs])
    rows = recommender.representation.transform([item.text for item in items])
    scale = scale_for(recommender.representation)

    def order_of(scores):
        return candidates[np.lexsort((np.arange(len(scores)), -scores))]

    def sims(texts):
        return cosine(recommender.representation.transform(texts), recommender.corpus_rows[candidates]).astype(float)

    unsteered = order_of(base)
    before = topic_counts(unsteered, recommender, rows, items, topics, top_n)
    print(f"examples/library.bib, top {top_n}, unsteered: " + ", ".join(f"{t} {n}" for t, n in before.most_common()))
    print(f"{'steering':28s} " + " ".join(f"w={w:<5}" for w in WEIGHTS) + "  (papers of the topic in the top N)")
    for name, prefer, avoid, topic in TESTS:
        cells = []
        for weight in WEIGHTS:
            scores = steered_scores(base, sims(prefer) if prefer else None, sims(avoid) if avoid else None,
                                    scale, weight)
            cells.append(topic_counts(order_of(scores), recommender, rows, items, topics, top_n)[topic])
        print(f"{name:28s} " + " ".join(f"{c:<7}" for c in cells) + f"  (unsteered {before[topic]})")
    cells = []
    nonsense = sims(NONSENSE)
    for weight in WEIGHTS:
        kept = set(order_of(steered_scores(base, nonsense, None, scale, weight))[:top_n]) & set(unsteered[:top_n])
        cells.append(len(kept))
    print(f"{'nonsense prefer: kept':28s} " + " ".join(f"{c:<7}" for c in cells)
          + f"  (of the unsteered top {top_n}; best cosine {nonsense.max():.2f})")


def recency_table(hidden: int = 5, half_lives=(None, 15, 30, 60, 120)) -> None:
    """Ranks of the newest `hidden` dated items among the corpus, from the rest, per half-life."""
    from recommender.evaluation.holdout import newest_items

    items, _ = library_topics(ROOT / "examples" / "library.bib")
    kept, hide = newest_items(items, hidden)
    corpus = default_built(with_model=False).recommender.corpus
    candidates = list(corpus) + [Paper(id=f"holdout:{i.key}", title=i.title, abstract=i.abstract or None)
                                 for i in hide]
    recommender = Recommender(candidates, representation="dense", aggregation="learned",
                              model=default_built().recommender.model)
    print(f"\nRecency: the newest {hidden} dated items of examples/library.bib hidden among "
          f"{len(candidates)} candidates, ranked from the other {len(kept)}")
    for half_life in half_lives:
        steering = Steering(half_life_days=half_life) if half_life else None
        ranked = recommender.recommend(kept, top_n=0, steering=steering)
        ranks = sorted(rec.rank for rec in ranked if rec.paper.id.startswith("holdout:"))
        print(f"  half-life {str(half_life or 'off'):>4}: ranks {ranks}, median {np.median(ranks):.0f}, "
              f"in the top 20: {sum(rank <= 20 for rank in ranks)}")


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    steering_table(top)
    for count in (5, 10):
        recency_table(count)
