"""Named corpora on disk: versioned JSON files in the user data dir, with provenance, written atomically.

A stored corpus is one JSON object: a header (format version, the zotrec version that wrote it,
name, fetch date, sources, counts) and a `papers` list of plain rows (id, title, abstract,
authors, url, … and extra keys such as `openreview_id`, `pdf_url`, `presentation`). The file is
replaced only by a complete, validated fetch, so a failed or truncated fetch keeps the last
good corpus. `--corpus NAME` resolves here: an existing path wins, otherwise a stored name.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recommender.errors import FormatError, InputError, RecommenderError
from recommender.store import data_dir, private_dir, write_bytes

log = logging.getLogger(__name__)

FORMAT = "zotrec-corpus"
FORMAT_VERSION = 1
SHRINK_LIMIT = 0.9  # a new fetch with fewer than 90 % of the stored papers is suspicious
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_FILE_SUFFIXES = {".txt", ".jsonl", ".ndjson", ".csv", ".bib", ".json"}


class CorpusStoreError(RecommenderError):
    """A stored corpus cannot be read or replaced; the message says which file and what to do."""


def zotrec_version() -> str:
    """The installed zotrec's version, as a stored corpus records it."""
    from importlib.metadata import PackageNotFoundError, version  # only to write one: 10 ms of every run's imports

    try:
        return version("zotrec")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def corpora_dir() -> Path:
    return data_dir() / "corpora"


def check_name(name: str) -> str:
    """Corpus names become file names: lower-case letters, digits, '.', '_' and '-'."""
    if not _NAME.match(name):
        raise InputError(f"corpus name '{name}' must be lower-case letters, digits, '.', '_' or '-'")
    return name


def stored_path(name: str) -> Path:
    return corpora_dir() / f"{check_name(name)}.json"


def partial_dir(name: str) -> Path:
    """Where an interrupted fetch keeps what it already has (so the next run resumes)."""
    return data_dir() / "partial" / check_name(name)


@dataclass
class StoredCorpus:
    """A stored corpus: its rows and its header (provenance, fetch date, counts)."""

    name: str
    papers: list[dict[str, Any]]
    header: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


def stored_names() -> list[str]:
    folder = corpora_dir()
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def resolve_corpus_path(spec: str | Path) -> Path:
    """A corpus argument → a file: an existing path wins, otherwise a stored corpus name (a stream's is its
    adapter's: `arxiv:cs.LG` is stored as `arxiv-cs.lg`)."""
    path = Path(spec)
    from recommender.streams import stream_source

    stream = None if path.exists() else stream_source(str(spec))
    if stream is not None:
        stored = corpora_dir() / f"{stream.name}.json"
        if stored.is_file():
            return stored
        raise InputError(f"'{spec}' is not fetched yet; fetch it with `zotrec corpus fetch {spec}`")
    if path.exists() or not _NAME.match(str(spec)):
        return path
    stored = corpora_dir() / f"{spec}.json"
    if stored.is_file():
        return stored
    if path.suffix.lower() in _FILE_SUFFIXES:
        return path  # a missing file: the reader says "no such file"
    known = ", ".join(stored_names()) or "none yet"
    raise InputError(
        f"'{spec}' is neither a file nor a stored corpus (stored: {known}); "
        f"fetch it with `zotrec corpus fetch {spec}`"
    )


def read_stored(path: Path, text: str | None = None) -> StoredCorpus:
    """Read and check a stored corpus file; a newer format is refused with a clear message."""
    if text is None:
        from recommender.formats.textfile import read_text

        text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg}); the file may be cut short", path=path,
                         line=error.lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to be a corpus", path=path) from None
    return stored_from_json(data, path)


def stored_from_json(data: Any, path: Path) -> StoredCorpus:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"not a zotrec corpus file (no \"format\": \"{FORMAT}\")", path=path)
    file_version = data.get("format_version")
    if not isinstance(file_version, int):
        raise InputError("corpus file has no format_version", path=path)
    if file_version > FORMAT_VERSION:
        raise FormatError(
            f"written by zotrec {data.get('zotrec_version', '?')} (corpus format {file_version}); this "
            f"zotrec {zotrec_version()} reads format {FORMAT_VERSION}: "
            "upgrade zotrec or fetch the corpus again",
            path=path, found=str(file_version), newer=True,
        )
    papers = data.get("papers")
    if not isinstance(papers, list):
        raise InputError("corpus file has no 'papers' list", path=path)
    header = {k: v for k, v in data.items() if k != "papers"}
    return StoredCorpus(name=str(data.get("name") or path.stem), papers=papers, header=header, path=path)


def json_rows(text: str, path: Path) -> list[dict[str, Any]]:
    """Paper rows of a .json corpus file: a stored zotrec corpus, or a plain JSON list of objects."""
    from recommender.formats.textfile import load_json

    data = load_json(text, path, "a corpus")
    rows = data if isinstance(data, list) else stored_from_json(data, path).papers
    return [row if isinstance(row, dict) else {} for row in rows]


def save_corpus(name: str, papers: list[dict[str, Any]], provenance: dict[str, Any], *,
                allow_shrink: bool = False) -> Path:
    """Write `papers` as the stored corpus `name`, atomically, keeping the old one if the new looks cut.

    A fetch that yields far fewer papers than the stored corpus (a truncated listing, a changed
    API) does not replace it unless `allow_shrink`.
    """
    target = stored_path(name)
    if target.is_file() and not allow_shrink:
        _refuse_shrink(target, name, len(papers))
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "zotrec_version": zotrec_version(),
        "name": name,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **provenance,
        "papers": papers,
    }
    write_text_file(target, json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    return target


def _refuse_shrink(target: Path, name: str, new_count: int) -> None:
    """Keep a stored corpus that looks better than the new one, or that a newer zotrec wrote."""
    try:
        old = read_stored(target)
    except RecommenderError as error:
        if isinstance(error, FormatError) and error.newer:
            raise CorpusStoreError(f"{error}; it was not replaced (use --force to replace it)") from None
        return  # an unreadable old file is no good corpus to keep
    if new_count < SHRINK_LIMIT * len(old.papers):
        raise CorpusStoreError(
            f"{target}: the new fetch has {new_count:,} papers but the stored '{name}' has "
            f"{len(old.papers):,} (fetched {old.header.get('fetched_at', '?')}); kept the stored one "
            "(use --force to replace it)"
        )


def not_saved(error: OSError, name: str, where: Path | None = None, also: str = "") -> str:
    """A failed write of the corpus `name` in one line: the path, the reason, and what was kept (the stored
    corpus as it was, and `also`), with a hint when the disk is full."""
    import errno

    try:
        stored = read_stored(stored_path(name))
        kept = f"kept the stored corpus '{name}' as it was ({len(stored.papers):,} papers)"
    except (RecommenderError, OSError):
        kept = f"no corpus '{name}' is stored yet"
    full = error.errno in (errno.ENOSPC, errno.EDQUOT)
    return (f"{error.filename or where or stored_path(name)}: cannot write ({error.strerror or error}); {kept}"
            + (f"; {also}" if also else "") + (" — free some space and run again" if full else ""))


def remove_stored(name: str) -> StoredCorpus:
    """Delete the stored corpus `name` (and what an interrupted fetch of it kept); returns what it held."""
    import shutil

    target = stored_path(name)
    if not target.is_file():
        known = ", ".join(stored_names()) or "none"
        raise InputError(f"no stored corpus '{name}' in {corpora_dir()} (stored: {known})")
    try:
        removed = read_stored(target)
    except RecommenderError:  # a damaged file goes too: that is what removing it is for
        removed = StoredCorpus(name=name, papers=[], path=target)
    target.unlink()
    shutil.rmtree(partial_dir(name), ignore_errors=True)
    return removed


def write_text_file(target: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename: readers never see half a file; the
    folder is made private (0700), the file 0600."""
    private_dir(target.parent)
    write_bytes(target, text.encode("utf-8"))
