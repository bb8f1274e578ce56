"""Does a scoring form keep a multi-topic library's topics? Counts the topics in the top N.

A library item's topic is its first BibTeX keyword (examples/library.bib: normalizing flows, time
series, …). Each recommended paper is given the topic of the library item it is most similar to
(its first "because you saved …" reason). Prints, per form, without and with the re-ranking by the
library's interests (recommender/scoring/facets.py; the keywords take no part in it), how many of the
library's topics appear in the top N and how many papers each topic gets.

    python benchmarks/topic_coverage.py [library.bib] [corpus.jsonl] [N]
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.corpus.readers import load_corpus  # noqa: E402
from experiments.full_adapter import AdaptedRepresentation  # noqa: E402
from recommender.features import make_representation  # noqa: E402
from recommender.scoring.fusion import FusionWeights  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402


# the adapter form's weights chosen on citeulike-a fold 0's validation split (docs/evaluation.md)
ADAPTER_WEIGHTS = FusionWeights(lexical=0.016, learned=0.64, collaborative=0.2)


def library_topics(path: Path) -> tuple[list, dict[str, str]]:
    """The library's items (via zotrec's BibTeX reader) and item key → first keyword."""
    import bibtexparser

    from zotero_bridge.sources.dispatch import read_library

    items = read_library([str(path)]).items
    with open(path, encoding="utf-8") as handle:
        entries = bibtexparser.load(handle).entries
    topics = {entry["ID"]: entry.get("keywords", "?").split(",")[0].strip() for entry in entries}
    return items, topics


def main(library: Path, corpus: Path, top_n: int) -> None:
    items, topics = library_topics(library)
    papers = load_corpus([corpus]).papers
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    forms = {  # name: (aggregation, model, weights)
        "dense top5": ("top5", None, None),
        "fused, content only (default without a model)": ("learned", None, None),
        "fused with the shipped collaborative part (default)": ("learned", model, None),
        "collaborative only": ("learned", model, FusionWeights(collaborative=1.0)),
        "fused in the collaborative adapter's space (not shipped)": ("learned", model, ADAPTER_WEIGHTS),
    }
    wanted = sorted(set(topics.get(item.key, "?") for item in items))
    print(f"{library}: {len(items)} items, topics: {', '.join(wanted)}")
    for name, (aggregation, chosen, weights) in forms.items():
        representation = (AdaptedRepresentation(make_representation("dense"), model) if weights is ADAPTER_WEIGHTS
                          else "dense")
        for interests in (False, True):
            recommender = Recommender(papers, representation=representation, aggregation=aggregation, model=chosen,
                                      weights=weights, interests=interests)
            counts = collections.Counter(
                topics.get(rec.reasons[0].item_key, "?") if rec.reasons else "?"
                for rec in recommender.recommend(items, top_n=top_n))
            covered = sum(1 for topic in wanted if counts[topic])
            label = name + (", by interests" if interests else "")
            print(f"{label:52s} {covered}/{len(wanted)} topics in the top {top_n}: "
                  + ", ".join(f"{topic} {counts[topic]}" for topic in wanted))


if __name__ == "__main__":
    args = sys.argv[1:]
    main(Path(args[0]) if args else ROOT / "examples" / "library.bib",
         Path(args[1]) if len(args) > 1 else ROOT.parent / "shared" / "data" / "icml2025" / "papers.jsonl",
         int(args[2]) if len(args) > 2 else 20)
