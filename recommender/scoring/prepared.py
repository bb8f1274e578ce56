"""The prepared-corpus cache: a corpus's cleaned papers, identity keys and feature matrix, stored once.

Reading and cleaning the same corpus file, and looking its 3,330 vectors up one by one, cost every
run about half a second. Here they are stored after the first run under a key made of the corpus
files' bytes, the representation and its model id, the zotrec version and the code that cleans a
corpus, so any change to any of them is a new entry (stale entries are pruned). Papers and keys are
JSON, the matrix `.npy` read with `allow_pickle=False`: nothing in the cache can run code. An entry is
written into a private folder and renamed into place, so concurrent runs never see half of one; a
damaged entry is a miss (rebuilt), never an error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from recommender.items import Paper

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
KEEP_ENTRIES = 8  # prepared corpora kept (the least recently used beyond these are removed)
_PACKAGE = Path(__file__).resolve().parents[1]
_CLEANING_CODE = ("text.py", "items.py", "corpus", "formats", "scoring/ranking.py", "scoring/prepared.py",
                  "features/lexical.py")


def prepared_dir() -> Path:
    from recommender.features.cache import cache_dir

    return cache_dir() / "prepared"


def _code_fingerprint() -> bytes:
    """The bytes of the code that turns corpus files into papers and keys: a change is a new entry,
    even in a checkout whose version number never changes."""
    digest = hashlib.sha256()
    for name in _CLEANING_CODE:
        path = _PACKAGE / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.digest()


def prepared_key(files: Sequence[Path], representation: str, model_id: str, version: str) -> str:
    """The entry's name: a hash of the corpus files' bytes and of everything that shapes the result."""
    digest = hashlib.sha256(f"{FORMAT_VERSION}\0{representation}\0{model_id}\0{version}\0".encode())
    digest.update(_code_fingerprint())
    for file in files:
        with open(file, "rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()[:32]


class PreparedCorpus:
    """Papers, their identity keys (recommender.scoring.ranking.CorpusKeys.to_json), the feature
    matrix (None for representations that are fitted per run, such as tf-idf) and what reading
    the corpus had to say (skipped rows), as stored under one key."""

    def __init__(self, papers: list[Paper], keys: dict, matrix: np.ndarray | None, notes: dict) -> None:
        self.papers, self.keys, self.matrix, self.notes = papers, keys, matrix, notes


def load_prepared(key: str, folder: Path | None = None) -> PreparedCorpus | None:
    """The stored entry, or None when there is none or it is damaged in any way."""
    entry = (folder or prepared_dir()) / key
    try:
        index = json.loads((entry / "papers.json").read_text(encoding="utf-8"))
        if index.get("format_version") != FORMAT_VERSION:
            return None
        papers = [Paper(**{**row, "authors": tuple(row["authors"])}) for row in index["papers"]]
        matrix = None
        if index.get("matrix"):
            matrix = np.load(entry / "matrix.npy", allow_pickle=False)
            if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != len(papers):
                raise ValueError(f"matrix of shape {matrix.shape} for {len(papers)} papers")
        keys = json.loads((entry / "keys.json").read_text(encoding="utf-8"))
        if keys.get("size") != len(papers):
            raise ValueError("keys of another corpus")
        os.utime(entry)  # recently used: kept by the pruning
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("prepared corpus %s is damaged (%s): it is rebuilt", entry, error)
        return None
    return PreparedCorpus(papers, keys, matrix, index.get("notes", {}))


def store_prepared(key: str, prepared: PreparedCorpus, folder: Path | None = None) -> None:
    """Write an entry atomically (a private folder renamed into place); failures only cost speed."""
    folder = folder or prepared_dir()
    staging = folder / ".unused"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=folder))
        index = {"format_version": FORMAT_VERSION, "matrix": prepared.matrix is not None, "notes": prepared.notes,
                 "papers": [_paper_row(paper) for paper in prepared.papers]}
        _write(staging / "papers.json", json.dumps(index, ensure_ascii=False).encode("utf-8"))
        _write(staging / "keys.json", json.dumps(prepared.keys).encode("utf-8"))
        if prepared.matrix is not None:
            with open(staging / "matrix.npy", "wb", opener=_private) as handle:
                np.save(handle, np.ascontiguousarray(prepared.matrix, dtype=np.float32), allow_pickle=False)
        _replace_entry(staging, folder / key)
        _prune(folder)
    except TypeError as error:  # metadata that JSON cannot hold: this corpus is prepared every run
        log.debug("prepared corpus not stored: %s", error)
        shutil.rmtree(staging, ignore_errors=True)
    except (OSError, ValueError) as error:
        # the embedding cache has already warned about an unusable cache folder
        log.info("prepared corpus cache %s cannot be written (%s): the next run prepares it again", folder, error)


def prepared_extra(key: str, name: str, build: Callable[[], dict[str, np.ndarray]],
                   folder: Path | None = None) -> dict[str, np.ndarray]:
    """Arrays a scoring signal keeps beside an entry (e.g. the lexical signal's idf and corpus rows):
    read from `<entry>/<name>.npz` (allow_pickle=False), else built, stored and returned. Stored only
    into an entry that exists; a damaged file is rebuilt, a failed write costs only speed."""
    entry = (folder or prepared_dir()) / key
    path = entry / f"{name}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return {field: data[field] for field in data.files}
    except (FileNotFoundError, NotADirectoryError):
        pass
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        log.warning("prepared corpus %s is damaged (%s): it is rebuilt", path, error)
    arrays = build()
    if entry.is_dir():
        try:
            write_private_npz(path, arrays)
        except OSError as error:
            log.info("prepared corpus %s cannot be written (%s): the next run builds it again", path, error)
    return arrays


def factors_name(model) -> str | None:
    """The name a collaborative model's predicted factors are kept under (with the prepared corpus and
    in the kept library state): one per model version (its cache_id); None for a model without one."""
    cache_id = getattr(model, "cache_id", None)
    return None if cache_id is None else f"factors-{hashlib.sha256(cache_id.encode()).hexdigest()[:16]}"


def write_private_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Arrays a cache keeps (corpus or library data): a 0600 file written beside `path` and renamed over
    it, so a reader sees the old file or the new one, never half of one; a failed write leaves nothing
    behind and raises OSError."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb", opener=_private) as handle:
        handle.write(data)


def _replace_entry(staging: Path, entry: Path) -> None:
    """Rename the finished folder into place; if another run got there first, or a damaged entry is
    there, the damaged one is moved aside and removed, and a finished one is kept."""
    try:
        os.rename(staging, entry)
        return
    except OSError:
        pass
    if load_prepared(entry.name, entry.parent) is None and entry.exists():
        aside = entry.with_name(f".{entry.name}.old{os.getpid()}")
        try:
            os.rename(entry, aside)
            shutil.rmtree(aside, ignore_errors=True)
            os.rename(staging, entry)
            return
        except OSError:
            pass
    shutil.rmtree(staging, ignore_errors=True)


def _prune(folder: Path) -> None:
    entries = sorted((path for path in folder.iterdir() if not path.name.startswith(".")),
                     key=lambda path: path.stat().st_mtime, reverse=True)
    for stale in entries[KEEP_ENTRIES:]:
        shutil.rmtree(stale, ignore_errors=True)


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
