"""OpenAlex `/works` answers → corpus rows, and `openalex:FILTER` → the API's filter.

A list answer (developers.openalex.org, "Get lists of entities"; real saved answers in tests/data name
theirs) is `{"meta": {"count", "per_page", "next_cursor"}, "results": [work…]}`; with `cursor=*` paging,
`next_cursor` is null after the last page. A work has `id` (`https://openalex.org/W…`), `doi` (a doi.org
link or null), `title`/`display_name`, `publication_date`, `created_date`, `authorships[].author.
display_name`, `primary_location.source.display_name`, and the abstract only as `abstract_inverted_index`
(word → positions), rebuilt here. An error is `{"error": …, "message": …}`.
"""

from __future__ import annotations

import re
from typing import Any

from recommender.corpus.stream import AnswerError, StreamPage
from recommender.corpus.web_rows import add_rows, day, find_doi, json_answer, plain, row, stamp
from recommender.errors import InputError

MAX_WORDS = 5_000  # an inverted index longer than this is not an abstract (some hold a full text)
_ISSN = re.compile(r"^\d{4}-\d{3}[\dXx]$")
_SHORT = re.compile(r"^(topic|journal|issn|institution|source|search):(.+)$")


def api_filter(spec: str) -> tuple[str, str]:
    """What follows `openalex:` → (filter, search). Short forms: `topic:T10017`, `journal:1234-5678` or
    `issn:…`, `source:S…`, `institution:I…`, `search:WORDS`; anything else is OpenAlex's own filter syntax
    (`primary_topic.id:T10017,type:article`), passed as it is."""
    spec = spec.strip()
    if not spec:
        raise InputError("openalex: needs a filter, e.g. openalex:topic:T10017, openalex:journal:0028-0836, "
                         "openalex:institution:I27837315 or openalex:search:cardiac MRI")
    match = _SHORT.match(spec)
    if not match:
        return spec, ""
    kind, value = match.group(1), match.group(2).strip()
    if kind == "search":
        return "", value
    if kind in ("journal", "issn"):
        if not _ISSN.match(value):
            raise InputError(f"openalex:{kind}:{value}: an ISSN looks like 0028-0836")
        return f"primary_location.source.issn:{value.upper()}", ""
    field_name = {"topic": "primary_topic.id", "source": "primary_location.source.id",
                  "institution": "institutions.id"}[kind]
    return f"{field_name}:{value}", ""


def parse_works(body: bytes, where: str) -> StreamPage:
    """One list answer → its page (`total` the count, `cursor` the next page's); OpenAlex's error JSON, or
    no list answer at all, is an AnswerError."""
    data = json_answer(body, where)
    if not isinstance(data, dict) or "results" not in data:
        message = data.get("message") or data.get("error") if isinstance(data, dict) else None
        raise AnswerError(f"{where}: {'OpenAlex says: ' + plain(message) if message else 'not an OpenAlex list answer'}")
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    results = data.get("results")
    if not isinstance(results, list):
        raise AnswerError(f"{where}: 'results' is not a list")
    count = meta.get("count")
    page = StreamPage(total=count if isinstance(count, int) else None,
                      cursor=str(meta["next_cursor"]) if meta.get("next_cursor") else None)
    add_rows(page, results, work_row, where, "result")
    return page


def work_row(work: Any) -> tuple[dict[str, Any] | None, str]:
    """One work → a row keyed `openalex:W…`, or (None, why)."""
    if not isinstance(work, dict):
        return None, "not a work"
    short = str(work.get("id") or "").rstrip("/").rsplit("/", 1)[-1]
    if not re.fullmatch(r"W\d+", short):
        return None, f"no OpenAlex work id ({str(work.get('id'))[:60]})"
    title = plain(work.get("title") or work.get("display_name"))
    if not title:
        return None, f"{short}: no title"
    published = day(work.get("publication_date")) or day(work.get("created_date"))
    if published is None:
        return None, f"{short}: no publication date"
    doi = find_doi(work.get("doi"))
    location = work.get("primary_location") if isinstance(work.get("primary_location"), dict) else {}
    source = location.get("source") if isinstance(location.get("source"), dict) else {}
    authorships = work.get("authorships") if isinstance(work.get("authorships"), list) else []
    authors = [plain(a["author"].get("display_name")) for a in authorships
               if isinstance(a, dict) and isinstance(a.get("author"), dict)]
    return row(id=f"openalex:{short}", title=title, abstract=abstract(work.get("abstract_inverted_index")),
               authors=authors, url=(f"https://doi.org/{doi}" if doi else f"https://openalex.org/{short}"),
               doi=doi, published=stamp(published), updated=stamp(day(work.get("created_date")) or published),
               venue=plain(source.get("display_name")), openalex_id=short,
               pdf_url=location.get("pdf_url") if str(location.get("pdf_url") or "").startswith("https://") else None), ""


def abstract(index: Any) -> str | None:
    """OpenAlex's inverted index (word → positions) → the abstract's text; None when there is none."""
    if not isinstance(index, dict) or not index:
        return None
    placed: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions if isinstance(positions, list) else ():
            if isinstance(position, int) and 0 <= position < MAX_WORDS:
                placed.setdefault(position, str(word))
    return plain(" ".join(placed[p] for p in sorted(placed))) or None
