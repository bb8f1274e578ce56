"""A stream's last parsed answers, kept in the cache folder (`streams/<corpus>.json`), so that an answer whose bytes
are those of one kept is not parsed again: a day with nothing new re-reads the overlap's pages unchanged, and
feedparser's walk of them was most of that day's CPU (docs/performance.md, issue 38).

What is kept is the adapter's own reading of the bytes (its `parse`, a function of the bytes and the request's
`where` alone), before any of fetch_stream's checks; a page found here goes through the same checks, merge and
counts as a parsed one, so a fetch's rows, counts and lines stay the same. The key is a digest of the answer
as the adapter compares it (`StreamSource.answer_key`: arXiv leaves out the feed's own date, the day of the
answer), the request's `where`, the corpus code and feedparser's version. A page is kept only when its JSON
reads back equal (a tuple or NaN would not); a missing, damaged or unwritable file only costs a parse.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recommender.items import Skipped

log = logging.getLogger(__name__)

FORMAT = 1
MAX_BYTES = 64 << 20  # a window's pages (30,000 records at most) with room
_CODE = Path(__file__).parent, Path(__file__).parents[1] / "items.py", Path(__file__).parents[1] / "text.py"


def _code() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from recommender.store.keys import code_fingerprint

    try:
        feedparser = version("feedparser")
    except PackageNotFoundError:
        feedparser = ""
    return f"{FORMAT} {code_fingerprint(*_CODE)} {feedparser}"


class KeptPages:
    """The pages one stream's last fetch parsed, by key; `parse` answers from them, `save` keeps this fetch's.
    `page` makes a page of its fields (stream.StreamPage, handed in: that module imports this one)."""

    def __init__(self, name: str, answer_key: Callable[[bytes], bytes], page: Callable[..., Any]) -> None:
        from recommender.store.paths import cache_dir

        self.path = cache_dir() / "streams" / f"{name}.json"
        self.answer_key, self.page = answer_key, page
        self.kept: dict[str, str] = {}
        self.used: dict[str, str] = {}
        self._code: str | None = None
        self._read()

    def _read(self) -> None:
        from recommender.store.files import read_private

        try:
            data = read_private(self.path, "kept stream pages", MAX_BYTES)
            if data is None:
                return
            kept = json.loads(data)
            if not isinstance(kept, dict) or not all(isinstance(v, str) for v in kept.values()):
                raise ValueError("not a map of pages")
            self.kept = kept
        except (OSError, ValueError) as error:  # NotPrivate is an OSError: never trusted, parsed afresh
            log.debug("%s not used: %s", self.path, error)

    def key(self, body: bytes, where: str) -> str:
        from recommender.store.keys import digest

        if self._code is None:
            self._code = _code()
        return digest(self._code, where, self.answer_key(body))

    def parse(self, body: bytes, where: str, parse: Callable[[bytes, str], Any]) -> Any:
        """The page of `body`: the kept one when its key is kept, else `parse(body, where)` (kept for `save`
        when it reads back from JSON equal). An error `parse` raises is raised as it is, and nothing is kept."""
        key = self.key(body, where)
        text = self.kept.get(key)
        if text is not None:
            try:
                page = self.page(**_fields_read(json.loads(text)))
                self.used[key] = text
                return page
            except (ValueError, TypeError, KeyError) as error:
                log.debug("kept page %s not used: %s", key, error)
        page = parse(body, where)
        text = _text(page)
        if text is not None:
            self.used[key] = text
        return page

    def save(self) -> None:
        """Keep this fetch's pages in place of the last fetch's (nothing written when they are the same)."""
        if not self.used or self.used.keys() == self.kept.keys():
            return
        from recommender.store.files import write_bytes
        from recommender.store.paths import private_dir

        try:
            private_dir(self.path.parent)
            write_bytes(self.path, json.dumps(self.used, ensure_ascii=False).encode())
        except OSError as error:
            log.debug("%s not written: %s", self.path, error)


def _fields(page: Any) -> dict[str, Any]:
    return {"rows": page.rows, "total": page.total, "start": page.start, "cursor": page.cursor,
            "not_modified": page.not_modified,
            "skipped": [[s.where, s.reason, s.unreadable] for s in page.skipped]}


def _text(page: Any) -> str | None:
    """The page as JSON, or None when JSON would not give it back equal."""
    fields = _fields(page)
    try:
        text = json.dumps(fields, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if json.loads(text) == fields else None


def _fields_read(fields: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(fields.get("rows"), list) or not all(isinstance(row, dict) for row in fields["rows"]):
        raise ValueError("no rows")
    return {"rows": fields["rows"], "total": fields["total"], "start": fields["start"], "cursor": fields["cursor"],
            "not_modified": bool(fields["not_modified"]),
            "skipped": [Skipped(str(where), str(reason), bool(unreadable))
                        for where, reason, unreadable in fields["skipped"]]}
