"""CiteULike user–item data with item text: read from a local folder, or fetched once into the user cache."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from recommender.errors import InputError

log = logging.getLogger(__name__)

DATASETS = ("citeulike-a", "citeulike-t")

# Pinned public copies (see shared/data/*/SOURCE.md): the data files only, never code.
_RAW = "https://raw.githubusercontent.com"
DOWNLOADS = {
    "citeulike-a": {
        "users.dat": f"{_RAW}/js05212/citeulike-a/91b603922d7f2d3db18071d4798bf78c9c5d1680/users.dat",
        "titles.txt": f"{_RAW}/ericproffitt/TopicModelsVB.jl/a91ae62af7fac40d27eb4776be8c79c59bac96b7"
        "/datasets/citeu/citeutitles.txt",
    },
    "citeulike-t": {
        name: f"{_RAW}/js05212/citeulike-t/4f103c6ea0fe407b23be230837b65517e613c34a/{name}"
        for name in ("users.dat", "mult.dat", "vocabulary.dat")
    },
}


@dataclass
class InteractionData:
    """Who saved what, plus each item's text.

    Attributes
    ----------
    name : "citeulike-a" or "citeulike-t".
    interactions : csr_matrix of shape (users, items), 1.0 where the user saved the item.
    texts : one string per item. citeulike-a: the raw title. citeulike-t: the item's bag of
        words written out as words (order is lost, so only unigram features make sense).
    word_order_kept : False when `texts` are bags of words (then use unigram features).
    source : the folder the files were read from.
    """

    name: str
    interactions: sparse.csr_matrix
    texts: list[str]
    word_order_kept: bool
    source: str

    @property
    def n_users(self) -> int:
        return self.interactions.shape[0]

    @property
    def n_items(self) -> int:
        return self.interactions.shape[1]


def parse_data_spec(spec: str) -> tuple[str, Path]:
    """'citeulike-a:/path/to/folder' → ('citeulike-a', Path('/path/to/folder'))."""
    name, colon, folder = spec.partition(":")
    if not colon or name not in DATASETS or not folder:
        raise InputError(f"data must be NAME:FOLDER with NAME one of {', '.join(DATASETS)}, got '{spec}'")
    return name, Path(folder).expanduser()


def load_dataset(spec: str) -> InteractionData:
    """Read the data named by 'citeulike-a:FOLDER' or 'citeulike-t:FOLDER'."""
    name, folder = parse_data_spec(spec)
    return load_citeulike_a(folder) if name == "citeulike-a" else load_citeulike_t(folder)


def load_citeulike_a(folder: str | Path) -> InteractionData:
    """citeulike-a: users.dat (0-based item ids per user) and titles.txt (one title per item)."""
    folder = Path(folder)
    titles = _read_lines(folder / "titles.txt")
    users = _read_id_lists(folder / "users.dat")
    interactions = _user_item_matrix(users, len(titles), folder / "users.dat")
    log.info("citeulike-a: %d users, %d items, %d saves", *interactions.shape, interactions.nnz)
    return InteractionData("citeulike-a", interactions, titles, True, str(folder))


def load_citeulike_t(folder: str | Path) -> InteractionData:
    """citeulike-t: users.dat, mult.dat (word:count per item) and vocabulary.dat."""
    folder = Path(folder)
    vocabulary = _read_lines(folder / "vocabulary.dat")
    texts = _read_bags(folder / "mult.dat", vocabulary)
    users = _read_id_lists(folder / "users.dat")
    interactions = _user_item_matrix(users, len(texts), folder / "users.dat")
    log.info("citeulike-t: %d users, %d items, %d saves", *interactions.shape, interactions.nnz)
    return InteractionData("citeulike-t", interactions, texts, False, str(folder))


def download_citeulike(name: str, cache_dir: str | Path | None = None) -> Path:
    """Fetch the public files of `name` into the user cache once; returns the folder.

    For users with a network: `load_dataset(f"{name}:{download_citeulike(name)}")`.
    """
    import httpx2

    if name not in DOWNLOADS:
        raise InputError(f"unknown dataset '{name}' (choose from {', '.join(DATASETS)})")
    from recommender.store import cache_dir as default_cache_dir, private_dir, write_bytes

    folder = private_dir(Path(cache_dir or default_cache_dir()) / name)
    for filename, url in DOWNLOADS[name].items():
        target = folder / filename
        if target.exists():
            continue
        log.info("Downloading %s", url)
        try:
            response = httpx2.get(url, timeout=60, follow_redirects=True)
            response.raise_for_status()
        except httpx2.HTTPError as error:
            raise InputError(f"could not download {url}: {error}") from None
        write_bytes(target, response.content)
    return folder


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=path) from None
    return [line.strip() for line in text.splitlines()]


def _read_id_lists(path: Path) -> list[np.ndarray]:
    """Lines of `n id1 … idn` → one int array per line (the count must match)."""
    lists = []
    for number, line in enumerate(_read_lines(path), start=1):
        fields = line.split()
        try:
            values = np.array([int(field) for field in fields], dtype=np.int64)
        except ValueError:
            raise InputError("expected integers 'n id1 … idn'", path=path, line=number) from None
        if not len(values) or values[0] != len(values) - 1:
            raise InputError("the count does not match the number of ids", path=path, line=number)
        lists.append(values[1:])
    return lists


def _user_item_matrix(users: list[np.ndarray], n_items: int, path: Path) -> sparse.csr_matrix:
    for number, items in enumerate(users, start=1):
        if len(items) and (items.min() < 0 or items.max() >= n_items):
            raise InputError(f"item id outside 0..{n_items - 1}", path=path, line=number)
    rows = np.repeat(np.arange(len(users)), [len(items) for items in users])
    columns = np.concatenate(users) if users else np.zeros(0, dtype=np.int64)
    matrix = sparse.csr_matrix(
        (np.ones(len(columns), dtype=np.float32), (rows, columns)), shape=(len(users), n_items)
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    return matrix


def _read_bags(path: Path, vocabulary: list[str]) -> list[str]:
    """mult.dat lines `n w:c …` → each item's words written out `c` times."""
    texts = []
    for number, line in enumerate(_read_lines(path), start=1):
        fields = line.split()
        try:
            declared = int(fields[0])
            pairs = [field.split(":") for field in fields[1:]]
            words = [(vocabulary[int(word)] + " ") * int(count) for word, count in pairs]
        except (ValueError, IndexError):
            raise InputError(f"expected 'n word:count …' with word ids below {len(vocabulary)}",
                             path=path, line=number) from None
        if declared != len(pairs):
            raise InputError("the count does not match the number of word:count pairs", path=path, line=number)
        texts.append("".join(words).strip())
    return texts
