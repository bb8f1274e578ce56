"""What `zotrec corpus info` and `corpus list` show: counts and provenance of stored corpora and files."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recommender.corpus.readers import load_corpus
from recommender.corpus.store import read_stored, resolve_corpus_path, stored_names, stored_path
from recommender.errors import InputError, RecommenderError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CorpusInfo:
    """What `zotrec corpus info` shows: counts, where the papers came from, and when."""

    name: str
    path: Path
    papers: int
    with_abstracts: int
    with_authors: int
    duplicates_dropped: int
    source: str
    date: str
    untitled_matched: int = 0  # untitled abstracts (seeds) given their paper's title
    skipped: int = 0
    enriched_by_fetch: int | None = None  # the default corpus only: papers the fetched icml2025 added to
    added_by_fetch: int | None = None  # the default corpus only: fetched papers the bundled list lacked


def describe_corpus(spec: str | Path) -> CorpusInfo:
    """Counts for a stored corpus name or any corpus file, read the way scoring reads it."""
    path = resolve_corpus_path(spec)
    loaded = load_corpus([path])
    header = _header(path) if path.suffix.lower() == ".json" else {}
    fetched = header.get("counts", {})
    sources = ", ".join(s.get("location", "?") for s in header.get("sources", [])) or str(path)
    modified = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    return CorpusInfo(
        name=str(header.get("name") or path.stem), path=path, papers=len(loaded.papers),
        with_abstracts=sum(p.abstract is not None for p in loaded.papers),
        with_authors=sum(bool(p.authors) for p in loaded.papers),
        duplicates_dropped=int(fetched.get("duplicates_dropped", 0)) + loaded.duplicates,
        source=sources, date=str(header.get("fetched_at") or f"{modified} (file date)"),
        untitled_matched=loaded.enriched, skipped=len(loaded.skipped) + int(fetched.get("skipped", 0)),
    )


def describe_default() -> CorpusInfo:
    """Counts for the default corpus, read as reading-list reads it without --corpus: the bundled list and
    seeds, enriched by the stored icml2025 when it was fetched (default.py)."""
    from recommender.corpus.default import DEFAULT_NAME, default_corpus

    default = default_corpus()
    loaded = load_corpus(default.files, enrich_with=default.fetched)
    sources = f"the bundled list {default.files[0]} and {len(default.files) - 1} seed files"
    date = "bundled with zotrec"
    if default.fetched:
        header = _header(default.fetched[0])
        sources += f", enriched by the stored {DEFAULT_NAME} ({default.fetched[0]})"
        date = f"fetched {header.get('fetched_at') or '?'}"
    return CorpusInfo(
        name=f"{DEFAULT_NAME} (the default corpus)", path=default.files[0], papers=len(loaded.papers),
        with_abstracts=sum(p.abstract is not None for p in loaded.papers),
        with_authors=sum(bool(p.authors) for p in loaded.papers), duplicates_dropped=loaded.duplicates,
        source=sources, date=date, untitled_matched=loaded.enriched, skipped=len(loaded.skipped),
        enriched_by_fetch=loaded.fetched_enriched, added_by_fetch=loaded.fetched_added,
    )


def _header(path: Path) -> dict[str, Any]:
    try:
        return read_stored(path).header
    except InputError:
        return {}  # a plain JSON list of papers has no header


def list_corpora() -> list[CorpusInfo]:
    """Every stored corpus, counted exactly as `corpus info NAME` counts it (the two never disagree)."""
    infos = []
    for name in stored_names():
        try:
            infos.append(replace(describe_corpus(stored_path(name)), name=name))
        except RecommenderError as error:
            log.warning("%s", error)
    return infos
