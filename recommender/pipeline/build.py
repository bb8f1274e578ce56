"""The shipped Recommender for a corpus, and the caches a run hands it: built here for every command, the
evaluation's checks and the benchmarks alike (none of them builds one from the command line's parts).

A corpus given as files is read once through the prepared-corpus cache (recommender/scoring/prepared.py):
the same papers, identity keys and dense rows, without reading and embedding them again. Its key is the
files' bytes, the features, the encoder's id and a fingerprint of the code that shapes the entry (never the
package version). The caches are a value (`Built.caches`), handed to `rank` with each library.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from recommender.items import Paper
from recommender.scoring.caches import NO_CACHES, ScoringCaches
from recommender.scoring.ranking import Recommender
from recommender.store import code_fingerprint

_PACKAGE = Path(__file__).resolve().parents[1]
# The code whose output a prepared-corpus entry stores: corpus files → papers, identity keys, feature rows.
# scripts.py: which texts title keys, the tf-idf analyzer's character pairs and the unread rule treat as non-Latin.
PREPARED_CODE = (_PACKAGE / "text.py", _PACKAGE / "scripts.py", _PACKAGE / "items.py", _PACKAGE / "corpus",
                 _PACKAGE / "formats", _PACKAGE / "features", _PACKAGE / "scoring" / "owned.py",
                 _PACKAGE / "scoring" / "prepared.py")
# The code the kept library state's values come from (each signal's own inputs are in their keys too).
LIBRARY_STATE_CODE = (_PACKAGE / "scoring", _PACKAGE / "features", _PACKAGE / "scripts.py",
                      _PACKAGE / "collaborative" / "dense_model.py")


@dataclass(frozen=True)
class Built:
    """The Recommender for a corpus, the caches to rank with, and what reading the corpus had to say
    (`notes`: "skipped" [[where, reason]], "fetched" counts)."""

    recommender: Recommender
    caches: ScoringCaches = NO_CACHES
    notes: Mapping = field(default_factory=dict)


def shipped_recommender(files: Sequence[Path | str], fetched: Sequence[Path] = (), *, features: str,
                        aggregation: str, model=None, representation=None, keep_state: bool = True) -> Built:
    """The Recommender every command ranks with for these corpus files (`fetched`: a stored corpus that
    enriches them by id), `aggregation` and `model` as the command checked them. `keep_state`: keep each
    library's rows and top-K for its next run (one library per run; batch scoring does not)."""
    from recommender.corpus.readers import load_corpus
    from recommender.corpus.store import resolve_corpus_path
    from recommender.features import make_representation
    from recommender.scoring.owned import CorpusKeys
    from recommender.scoring.prepared import prepare, prepared_extra

    paths = [resolve_corpus_path(spec) for spec in files]
    if not all(path.is_file() for path in paths):  # the reader gives the one-line error
        loaded = load_corpus(files, enrich_with=fetched)
        recommender = Recommender(loaded.papers, aggregation=aggregation, representation=representation or features,
                                  model=model, background=background_for(len(loaded.papers)))
        return Built(recommender, NO_CACHES, _notes(loaded))
    representation = representation or make_representation(features)

    def load():
        loaded = load_corpus(paths, enrich_with=fetched)
        return loaded.papers, _notes(loaded)

    def matrix(papers):
        if features != "dense":  # tf-idf is fitted per run; only dense rows are stored
            return None
        return representation.transform([paper.text for paper in papers])

    model_id = representation.model_id if features == "dense" else ""
    prepared, key = prepare([*paths, *fetched], load, features, model_id, code_fingerprint(*PREPARED_CODE), matrix,
                            lambda papers: CorpusKeys(papers).to_json())
    recommender = Recommender(prepared.papers, aggregation=aggregation, representation=representation, model=model,
                              corpus_rows=prepared.matrix, corpus_keys=CorpusKeys.from_json(prepared.keys),
                              background=background_for(len(prepared.papers)))
    state = None
    if keep_state and recommender.dense:  # dense rows: keep the library's rows and top-K for the next run
        context = f"{key}/{aggregation}/{code_fingerprint(*LIBRARY_STATE_CODE)}"
        state = functools.partial(_library_state, context + (f"/{recommender.background_tag}"
                                                              if recommender.background_tag else ""))
    caches = ScoringCaches(corpus_memo=functools.partial(prepared_extra, key),  # partials: they cross to workers
                           library_state=state, library_memo=_library_memo if keep_state else None)
    return Built(recommender, caches, prepared.notes)


def background_for(corpus_size: int) -> tuple[Paper, ...]:
    """The papers a corpus of this size is scored beside (recommender/scoring/background.py): the bundled list
    for a small corpus, none for a large one (which then never reads it)."""
    from recommender.scoring.background import needs_background

    return bundled_background() if needs_background(corpus_size) else ()


@functools.lru_cache(maxsize=1)
def bundled_background() -> tuple[Paper, ...]:
    """The bundled ICML 2025 list as the package ships it, never with the fetched abstracts: its texts are the
    ones whose MiniLM vectors and collaborative factors are bundled, so the background costs no encoding."""
    from recommender.corpus.default import default_corpus
    from recommender.corpus.readers import load_corpus

    return tuple(load_corpus(default_corpus().files).papers)


def _library_state(context: str):
    """A fresh kept library state for this corpus, aggregation and code (one per ranking call)."""
    from recommender.scoring.incremental import IncrementalScorer, state_dir

    return IncrementalScorer(state_dir(), context)


def _library_memo(key: str, build):
    """Arrays derived from one library alone (its interests: recommender/scoring/kept_interests.py), kept."""
    from recommender.store.memo import Store
    from recommender.store.paths import cache_dir

    return Store(cache_dir() / "interests", keep=8, what="library interests").memo("interests", key, build)


def _notes(loaded) -> dict:
    return {"skipped": [[skipped.where, skipped.reason] for skipped in loaded.skipped],
            "fetched": loaded.fetch_counts()}


def default_built(*, features: str = "dense", with_model: bool = True, keep_state: bool = False) -> Built:
    """What `zotrec reading-list` ranks with by default: the default corpus (the bundled ICML 2025 list,
    enriched by a fetch: recommender/corpus/default.py), the fused scoring and, on dense features, the
    collaborative model shipped with zotrec (`with_model` False: content only). For benchmarks and checks."""
    from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel
    from recommender.corpus.default import default_corpus
    from recommender.scoring.fusion import DEFAULT_SCORING

    model = (DenseCollaborativeModel.load(SHIPPED_MODEL)
             if with_model and features == "dense" and SHIPPED_MODEL.exists() else None)
    corpus = default_corpus()
    return shipped_recommender(corpus.files, corpus.fetched, features=features, aggregation=DEFAULT_SCORING,
                               model=model, keep_state=keep_state)
