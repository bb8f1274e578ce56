"""The stream registry: which corpus names are streams (`arxiv:cs.LG`, …) and which paper ids are theirs.

A corpus name's prefix picks its adapter (a `StreamSource` of recommender/corpus/stream.py, imported only
when that prefix is used); a stream paper's id starts with the same prefix and a colon, which is all that the
seen-once memory and the rolling collection need to know of streams. A new source is one line in STREAMS.
"""

from __future__ import annotations

import importlib
from typing import Any

STREAMS: dict[str, str] = {  # prefix → "module:class" of its adapter
    "arxiv": "recommender.corpus.arxiv:ArxivStream",
    "feed": "recommender.corpus.feed:FeedStream",
    "biorxiv": "recommender.corpus.biorxiv:PreprintStream",
    "medrxiv": "recommender.corpus.biorxiv:PreprintStream",
    "pubmed": "recommender.corpus.pubmed:PubmedStream",
    "openalex": "recommender.corpus.openalex:OpenAlexStream",
}


def stream_source(name: str) -> Any:
    """The adapter of a stream corpus name (`arxiv:cs.LG`; a malformed one is its adapter's one-line
    InputError), None for any other name."""
    prefix, colon, _ = str(name).partition(":")
    where = STREAMS.get(prefix) if colon else None
    if where is None:
        return None
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute).from_name(str(name))


def is_stream_id(corpus_id: str) -> bool:
    """A paper of a stream corpus (its id has a stream's prefix): shown once, rolling in the collection."""
    prefix, colon, rest = str(corpus_id).partition(":")
    return bool(colon and rest) and prefix in STREAMS


def stream_names() -> str:
    """The stream prefixes, for messages: 'arxiv:…'."""
    return ", ".join(f"{prefix}:…" for prefix in STREAMS)
