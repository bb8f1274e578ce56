"""NCBI E-utilities answers → corpus rows: esearch's JSON (the count and the history server's WebEnv and
query_key) and efetch's PubMed XML (`PubmedArticleSet`).

The shapes are the ones NCBI's E-utilities manual (www.ncbi.nlm.nih.gov/books/NBK25499) and the PubMed DTD
(pubmed_250101.dtd) give, and real saved answers show (tests/data/pubmed-*.xml name theirs): an article's
`MedlineCitation/PMID`, `Article/ArticleTitle` (with inline `<i>`, `<sup>` markup), `Abstract/AbstractText`
once or once per labelled section (`Label="BACKGROUND"` …, kept as "BACKGROUND: …"), `AuthorList/Author`
(`LastName` + `ForeName`, or a `CollectiveName`), `Journal/Title`, the DOI in `ELocationID EIdType="doi"` or
`PubmedData/ArticleIdList/ArticleId IdType="doi"`, and the Entrez date (`PubMedPubDate PubStatus="entrez"`,
what esearch's `datetype=edat` windows on). The XML is parsed by the standard library's expat (2.4+ refuses
entity expansion attacks; no external entity or DTD is ever fetched).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from xml.etree import ElementTree

from recommender.corpus.stream import AnswerError, StreamPage
from recommender.corpus.stream_rows import check_markup
from recommender.corpus.web_rows import add_rows, find_doi, plain, row, stamp

SITE = "https://pubmed.ncbi.nlm.nih.gov/"
_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


@dataclass
class Search:
    """esearch with usehistory=y: how many match, and where the history server keeps them."""

    count: int
    webenv: str
    query_key: str


def parse_search(data: Any, where: str) -> Search:
    """esearch's JSON answer (parsed) → its count and history keys; NCBI's ERROR is an AnswerError."""
    result = data.get("esearchresult") if isinstance(data, dict) else None
    if not isinstance(result, dict):
        message = data.get("error") if isinstance(data, dict) else None
        raise AnswerError(f"{where}: {'NCBI says: ' + str(message) if message else 'not an esearch answer'}")
    if result.get("ERROR") or result.get("error"):
        raise AnswerError(f"{where}: NCBI says: {plain(result.get('ERROR') or result.get('error'))}")
    try:
        count = int(str(result.get("count", "0")))
    except ValueError:
        raise AnswerError(f"{where}: esearch's count is not a number ({result.get('count')!r})") from None
    webenv, key = str(result.get("webenv") or ""), str(result.get("querykey") or "")
    if count and not (webenv and key):
        raise AnswerError(f"{where}: esearch kept no history (no webenv/querykey); usehistory=y was ignored")
    return Search(count=count, webenv=webenv, query_key=key)


def parse_articles(body: bytes, where: str, entries: int = 10_000) -> StreamPage:
    """efetch's PubMed XML → its rows; a body cut short is retried, NCBI's <ERROR> is an AnswerError."""
    try:
        check_markup(bytes(body), where, entries)
    except ValueError as error:
        raise AnswerError(str(error)) from None
    try:
        root = ElementTree.fromstring(bytes(body))
    except ElementTree.ParseError as error:  # cut short (asked again), or entities expanding without end (not)
        raise AnswerError(f"{where}: the answer is not complete XML ({error})",
                          complete="amplification" in str(error)) from None
    if root.tag != "PubmedArticleSet":
        message = root.findtext(".//ERROR")
        raise AnswerError(f"{where}: {'NCBI says: ' + plain(message) if message else f'not PubMed XML (<{root.tag}>)'}")
    page = StreamPage()
    add_rows(page, root.iter("PubmedArticle"), article_row, where, "article")
    return page


def article_row(article: ElementTree.Element) -> tuple[dict[str, Any] | None, str]:
    """One PubmedArticle → a row keyed `pubmed:PMID`, or (None, why)."""
    citation = article.find("MedlineCitation")
    pmid = (citation.findtext("PMID") or "").strip() if citation is not None else ""
    body = citation.find("Article") if citation is not None else None
    if not pmid.isdigit() or body is None:
        return None, f"{pmid or 'an article'}: no PMID or Article"
    title = plain(_text(body.find("ArticleTitle")) or _text(body.find("VernacularTitle")))
    if not title:
        return None, f"PMID {pmid}: no title"
    doi = find_doi(*(_text(e) for e in body.findall("ELocationID") if e.get("EIdType") == "doi"),
                   *(_text(e) for e in article.findall("PubmedData/ArticleIdList/ArticleId")
                     if e.get("IdType") == "doi"))
    entrez = _history_date(article, "entrez") or _history_date(article, "pubmed")
    published = stamp(entrez or _journal_date(body) or datetime.now(UTC).date())
    title = title[:-1] if title.endswith(".") and not title.endswith("..") else title  # MEDLINE ends titles with "."
    return row(id=f"pubmed:{pmid}", title=title, abstract=_abstract(body), authors=_authors(body), url=f"{SITE}{pmid}/", doi=doi,
               published=published, venue=plain(body.findtext("Journal/Title")), pmid=pmid), ""


def _text(element: ElementTree.Element | None) -> str:
    return "".join(element.itertext()) if element is not None else ""


def _abstract(article: ElementTree.Element) -> str | None:
    sections = []
    for part in article.findall("Abstract/AbstractText"):
        text = plain(_text(part))
        if not text:
            continue
        label = (part.get("Label") or "").strip()
        sections.append(f"{label}: {text}" if label and label.upper() != "UNLABELLED" else text)
    return " ".join(sections) or None


def _authors(article: ElementTree.Element) -> list[str]:
    names = []
    for author in article.findall("AuthorList/Author"):
        if author.get("ValidYN", "Y") == "N":
            continue
        collective = plain(author.findtext("CollectiveName"))
        last, fore = plain(author.findtext("LastName")), plain(author.findtext("ForeName") or author.findtext("Initials"))
        name = f"{fore} {last}".strip() if last else collective
        if name:
            names.append(name)
    return names


def _history_date(article: ElementTree.Element, status: str) -> date | None:
    for stamp_ in article.findall("PubmedData/History/PubMedPubDate"):
        if stamp_.get("PubStatus") == status:
            return _date_of(stamp_)
    return None


def _journal_date(article: ElementTree.Element) -> date | None:
    electronic = article.find("ArticleDate")
    return _date_of(electronic) if electronic is not None else _date_of(article.find("Journal/JournalIssue/PubDate"))


def _date_of(element: ElementTree.Element | None) -> date | None:
    if element is None:
        return None
    year = (element.findtext("Year") or "").strip()
    month = (element.findtext("Month") or "1").strip()
    month_number = int(month) if month.isdigit() else _MONTHS.get(month[:3].lower(), 1)
    day_text = (element.findtext("Day") or "1").strip()
    try:
        return date(int(year), month_number, int(day_text) if day_text.isdigit() else 1)
    except ValueError:
        return None
