"""`--corpus zotero:feeds[:NAME]` → a corpus file: the unread feed items of the zotero.sqlite `--library` names
(or the default profile's), less those the library already holds, written where the corpus readers read it.

The file is rewritten only when its bytes change, so an unchanged feed costs the prepared-corpus cache's hit
(recommender/pipeline/build.py) and nothing is embedded twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from zotero_bridge.cli.common import note

log = logging.getLogger("zotrec")


def with_feed_corpora(corpora: Sequence[str], libraries: Sequence[str]) -> list[str]:
    """`corpora` with each `zotero:feeds[:NAME]` replaced by the file of its unread papers; a feed with none
    left is dropped with a note, unless it is all there is to rank (then one error line)."""
    from zotero_bridge.sources.feeds import is_feeds_spec

    if not any(is_feeds_spec(spec) for spec in corpora):
        return list(corpora)
    resolved: list[str] = []
    for spec in corpora:
        if not is_feeds_spec(spec):
            resolved.append(spec)
        elif (path := feed_corpus_file(spec, libraries, alone=len(corpora) == 1)) is not None:
            resolved.append(str(path))
    return resolved


def feed_corpus_file(spec: str, libraries: Sequence[str], *, alone: bool = True) -> Path | None:
    """Read the feeds, leave out read and owned items, write the rest; None when nothing is left."""
    from recommender.scoring.owned import CorpusKeys
    from recommender.store import cache_dir, private_dir
    from recommender.words import plural
    from zotero_bridge.errors import SourceError
    from zotero_bridge.sources.feeds import feed_name, feed_papers, feeds_database
    from zotero_bridge.sources.sqlite import read_sqlite_feeds

    found = read_sqlite_feeds(feeds_database(libraries))
    chosen = feed_papers(found, feed_name(spec))
    owned = CorpusKeys(chosen.papers).owned(found.library.items)
    papers = [paper for paper, mine in zip(chosen.papers, owned) if not mine]
    left_out = ", ".join(part for part in (f"{chosen.read} read" if chosen.read else "",
                                           f"{int(owned.sum())} already in your library" if owned.any() else "")
                         if part)
    said = (f"{spec}: {plural(len(papers), 'unread item')} from {plural(len(chosen.feeds), 'feed')}"
            + (f" ({left_out} left out)" if left_out else ""))
    if not papers:
        if alone:
            raise SourceError(f"{said}: nothing new to rank (Zotero refreshes its feeds while it runs)")
        note(said, said + ".")
        return None
    note(said, said + ".")
    folder = private_dir(cache_dir() / "feeds")
    digest = hashlib.sha256(f"{found.path.resolve()}\0{feed_name(spec).casefold()}".encode()).hexdigest()[:16]
    path = folder / f"zotero-feeds-{digest}.jsonl"
    _write_if_changed(path, "".join(json.dumps(_row(paper), ensure_ascii=False) + "\n" for paper in papers))
    return path


def _row(paper) -> dict:
    return {"id": paper.id, "title": "" if paper.title_derived else paper.title, "abstract": paper.abstract,
            "authors": list(paper.authors),
            "url": paper.url, "doi": paper.doi, "year": paper.year, "venue": paper.venue, **paper.metadata}


def _write_if_changed(path: Path, text: str) -> None:
    from recommender.store.files import write_atomic

    data = text.encode("utf-8")
    try:
        if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
            return
    except OSError:
        pass
    write_atomic(path, lambda stream: stream.write(data))
