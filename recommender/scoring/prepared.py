"""The prepared-corpus cache: a corpus's cleaned papers, identity keys and feature matrix, stored once.

Reading and cleaning the same corpus file, and looking its vectors up one by one, would be most of a
warm run. Here they are stored after the first run under a key made of FORMAT_VERSION, the corpus
files' bytes, the representation, its model id and the zotrec version, so any change to them is a new
entry (stale entries are pruned). An entry is one `corpus-<key>.npz` in the store (recommender/store/):
papers and keys as JSON bytes, the matrix as float32; a damaged entry is a miss (rebuilt), never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from recommender.items import Paper
from recommender.store import Store, cache_dir, digest
from recommender.store.files import Damaged

log = logging.getLogger(__name__)

# Bump whenever the code that turns corpus files into papers and keys changes what it makes (text.py,
# items.py, corpus/, formats/, ranking.CorpusKeys, features/lexical.py, this file): the key hashes the
# data, never that code. 2: one .npz per entry, keys from recommender.store.digest. 3: the bundled seeds
# sit on their papers by a shipped match (corpus/enrich.py), a fetched corpus enriches the list (default.py).
FORMAT_VERSION = 3
KEEP_ENTRIES = 8  # prepared corpora kept (the least recently used beyond these are removed)


def prepared_dir() -> Path:
    return cache_dir() / "prepared"


def _store(folder: Path | None) -> Store:
    return Store(folder or prepared_dir(), keep=KEEP_ENTRIES, what="prepared corpus")


def prepared_key(files: Sequence[Path], representation: str, model_id: str, version: str) -> str:
    """The entry's key: the corpus files' bytes and everything else that shapes the result."""
    contents = []
    for file in files:
        with open(file, "rb") as handle:
            contents.append(hashlib.file_digest(handle, "sha256").digest())
    return digest(FORMAT_VERSION, representation, model_id, version, contents)


class PreparedCorpus:
    """Papers, their identity keys (recommender.scoring.ranking.CorpusKeys.to_json), the feature
    matrix (None for representations that are fitted per run, such as tf-idf) and what reading
    the corpus had to say (skipped rows), as stored under one key."""

    def __init__(self, papers: list[Paper], keys: dict, matrix: np.ndarray | None, notes: dict) -> None:
        self.papers, self.keys, self.matrix, self.notes = papers, keys, matrix, notes


_PAPER_FIELDS = {f.name for f in dataclasses.fields(Paper)}


def _json(arrays: dict, name: str) -> dict:
    try:
        value = json.loads(arrays[name].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Damaged(f"'{name}' is not JSON ({error})") from None
    if not isinstance(value, dict):
        raise Damaged(f"'{name}' is not a JSON object")
    return value


def _paper(row) -> Paper:
    if not isinstance(row, dict) or not {"id", "title"} <= set(row) <= _PAPER_FIELDS \
            or not isinstance(row.get("authors", []), list):
        raise Damaged("a paper row of another shape")
    return Paper(**{**row, "authors": tuple(row.get("authors", ()))})


def _parse(arrays: dict) -> PreparedCorpus:
    """The entry in the arrays; Damaged for one that cannot be the one stored."""
    index, keys, matrix = _json(arrays, "papers"), _json(arrays, "keys"), arrays.get("matrix")
    if not isinstance(index.get("papers"), list) or not isinstance(index.get("notes", {}), dict):
        raise Damaged("no list of papers")
    papers = [_paper(row) for row in index["papers"]]
    if keys.get("size") != len(papers):
        raise Damaged("keys of another corpus")
    if matrix is not None and (matrix.dtype != np.float32 or matrix.ndim != 2
                               or matrix.shape[0] != len(papers)):
        raise Damaged(f"matrix of shape {matrix.shape} for {len(papers)} papers")
    return PreparedCorpus(papers, keys, matrix, index.get("notes", {}))


def load_prepared(key: str, folder: Path | None = None) -> PreparedCorpus | None:
    """The stored entry, or None when there is none or it is damaged in any way."""
    return _store(folder).load("corpus", key, parse=_parse)


def store_prepared(key: str, prepared: PreparedCorpus, folder: Path | None = None) -> None:
    """Store an entry; metadata JSON cannot hold means this corpus is prepared every run."""
    try:
        rows = [_paper_row(paper) for paper in prepared.papers]
        index = json.dumps({"papers": rows, "notes": prepared.notes}, ensure_ascii=False).encode("utf-8")
        keys = json.dumps(prepared.keys).encode("utf-8")
    except (TypeError, ValueError) as error:
        log.debug("prepared corpus not stored: %s", error)
        return
    arrays = {"papers": np.frombuffer(index, dtype=np.uint8), "keys": np.frombuffer(keys, dtype=np.uint8)}
    if prepared.matrix is not None:
        arrays["matrix"] = np.ascontiguousarray(prepared.matrix, dtype=np.float32)
    _store(folder).save("corpus", key, arrays)


def prepared_extra(key: str, name: str, build: Callable[[], dict[str, np.ndarray]],
                   folder: Path | None = None) -> dict[str, np.ndarray]:
    """Arrays a scoring signal keeps beside an entry (e.g. the lexical signal's idf and corpus rows):
    `<name>-<key>.npz` in the store, else built, stored and returned (pruned with the entry)."""
    return _store(folder).memo(name, key, build)


def _paper_row(paper: Paper) -> dict:
    return {"id": paper.id, "title": paper.title, "abstract": paper.abstract, "authors": list(paper.authors),
            "url": paper.url, "doi": paper.doi, "year": paper.year, "venue": paper.venue,
            "title_derived": paper.title_derived, "metadata": paper.metadata}


def prepare(files: Sequence[Path], load: Callable[[], tuple[list[Paper], dict]], representation: str,
            model_id: str, version: str, build_matrix: Callable[[list[Paper]], np.ndarray | None],
            build_keys: Callable[[list[Paper]], dict]) -> tuple[PreparedCorpus, str]:
    """The prepared corpus for these files: from the cache, else loaded, built and stored."""
    key = prepared_key(files, representation, model_id, version)
    found = load_prepared(key)
    if found is not None:
        return found, key
    papers, notes = load()
    prepared = PreparedCorpus(papers, build_keys(papers), build_matrix(papers), notes)
    store_prepared(key, prepared)
    return prepared, key
