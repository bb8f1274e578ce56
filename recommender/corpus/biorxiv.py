"""`biorxiv:SUBJECT`, `medrxiv:SUBJECT`: the servers' new and revised preprints by date interval.

The API (api.biorxiv.org, one for both servers) answers `/details/{server}/{from}/{to}/{cursor}/json`
with `?category=` (the subject, spaces as underscores) filtered on the server: a `messages` block
(`status` "ok", `cursor`, `count` on this page, `total` in the interval — a string —, `count_new_papers`)
and a `collection` of at most 30 records, one per version posted in the interval. A day with nothing is
`status` "no posts found" and an empty collection. `doi`, `version` (a string), `date` (of this
version), `authors` ("Surname, A.; Surname, B."), `category` (lower case, spaces), `abstract`, `published`
(the journal DOI, or "NA"). A paper is one row keyed `biorxiv:DOI` (`medrxiv:DOI`); a later version
replaces it, as arXiv's do. The format is the one bioRxiv's API page and real saved answers show
(tests/data/biorxiv-details-*.json name theirs).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any, ClassVar

from recommender.corpus.stream import AnswerError, Lister, StreamPage, StreamSource
from recommender.corpus.web_rows import add_rows, day, first_day, json_answer, plain, row, stamp
from recommender.errors import InputError

log = logging.getLogger(__name__)

API = "https://api.biorxiv.org"
SERVERS = {"biorxiv": ("bioRxiv", "https://www.biorxiv.org"), "medrxiv": ("medRxiv", "https://www.medrxiv.org")}
API_ENV = "ZOTREC_BIORXIV_API"  # another base URL (a mirror, a test double) for both servers
PAGE_SIZE = 30  # the API's fixed page
SUBJECTS = {
    "biorxiv": ("animal behavior and cognition", "biochemistry", "bioengineering", "bioinformatics", "biophysics",
                "cancer biology", "cell biology", "clinical trials", "developmental biology", "ecology",
                "epidemiology", "evolutionary biology", "genetics", "genomics", "immunology", "microbiology",
                "molecular biology", "neuroscience", "paleontology", "pathology", "pharmacology and toxicology",
                "physiology", "plant biology", "scientific communication and education", "synthetic biology",
                "systems biology", "zoology"),
    "medrxiv": ("addiction medicine", "allergy and immunology", "anesthesia", "cardiovascular medicine",
                "dentistry and oral medicine", "dermatology", "emergency medicine", "endocrinology",
                "epidemiology", "forensic medicine", "gastroenterology", "genetic and genomic medicine",
                "geriatric medicine", "health economics", "health informatics", "health policy",
                "health systems and quality improvement", "hematology", "hiv aids", "infectious diseases",
                "intensive care and critical care medicine", "medical education", "medical ethics", "nephrology",
                "neurology", "nursing", "nutrition", "obstetrics and gynecology",
                "occupational and environmental health", "oncology", "ophthalmology", "orthopedics",
                "otolaryngology", "pain medicine", "palliative medicine", "pathology", "pediatrics",
                "pharmacology and therapeutics", "primary care research", "psychiatry and clinical psychology",
                "public and global health", "radiology and imaging", "rehabilitation medicine and physical therapy",
                "respiratory medicine", "rheumatology", "sexual and reproductive health", "sports medicine",
                "surgery", "toxicology", "transplantation", "urology"),
}


def category_param(subject: str) -> str:
    """`cell-biology`, `cell biology`, `Cell_Biology` → `cell_biology`, as `?category=` takes it."""
    return "_".join(subject_words(subject).split())


def subject_words(subject: str) -> str:
    """A subject as the records spell it: lower case, words between single spaces."""
    return " ".join(subject.replace("-", " ").replace("_", " ").lower().split())


def resolve_subject(server: str, given: str) -> str:
    """`radiology` → "radiology and imaging": a server's subject named whole or by its first words; one
    not in zotrec's list is asked for as given (the servers add subjects), with a warning."""
    wanted = subject_words(given)
    known = SUBJECTS[server]
    if wanted in known:
        return wanted
    starts = [subject for subject in known if subject.startswith(wanted)]
    if len(starts) == 1:
        return starts[0]
    if len(starts) > 1:
        raise InputError(f"{server}:{given} could be {', '.join(starts)}; name one")
    log.warning("%s has no subject '%s' that zotrec knows (%s …); asking for it as given",
                SERVERS[server][0], wanted, ", ".join(known[:4]))
    return wanted


class PreprintStream(StreamSource):
    """`biorxiv:SUBJECT[,SUBJECT…]` or `medrxiv:…`: the subjects' preprints posted in the window."""

    service: ClassVar[str] = "bioRxiv/medRxiv"
    api: ClassVar[str] = API
    pause_s: ClassVar[float] = 1.0  # the API's guidance: space requests out (at least 0.5 s)
    pause_env: ClassVar[str] = "ZOTREC_BIORXIV_PAUSE_S"
    page_size: ClassVar[int] = PAGE_SIZE
    newest_first: ClassVar[bool] = False  # an interval is asked whole, oldest first

    def __init__(self, server: str, subjects: tuple[str, ...]) -> None:
        self.server, self.subjects = server, subjects
        self.prefix = server  # type: ignore[misc]  # rows are `biorxiv:DOI` or `medrxiv:DOI`
        self.service = SERVERS[server][0]  # type: ignore[misc]
        self.api = os.environ.get(API_ENV, "").strip() or API  # type: ignore[misc]
        self.name = f"{server}-" + "_".join(category_param(s) for s in subjects)[:50]
        self.label = f"{SERVERS[server][0]} {', '.join(subjects)}"

    @classmethod
    def from_name(cls, name: str) -> PreprintStream:
        server, _, rest = name.partition(":")
        given = [part.strip() for part in rest.split(",") if part.strip()]
        if server not in SERVERS or not given:
            raise InputError(f"'{name}': a preprint stream is biorxiv:SUBJECT or medrxiv:SUBJECT, e.g. "
                             "medrxiv:radiology or biorxiv:genomics,bioinformatics")
        return cls(server, tuple(sorted({resolve_subject(server, subject) for subject in given})))

    def parse(self, body: bytes, where: str) -> StreamPage:
        return parse_details(body, where, self.server, getattr(self, "_asking", None))

    def wanted(self, row: dict[str, Any]) -> bool:
        return subject_words(str(row.get("subject") or "")) in self.subjects

    def provenance(self) -> dict[str, Any]:
        return {"server": self.server, "subjects": list(self.subjects)}

    def listing(self, lister: Lister, url: str, since: datetime) -> Iterator[StreamPage]:
        """Each subject's interval from `since`'s day to today, 30 records a page, until the cursor reaches
        the interval's total."""
        start, end = first_day(since, lister.report.window_start), lister.now.astimezone(UTC).date()
        for subject in self.subjects:
            cursor = 0
            self._asking = subject  # parse checks that the answer is of it
            while True:
                page = lister.get(details_url(url, self.server, start, end, cursor),
                                  {"category": category_param(subject)}, is_json=True)
                yield page
                read = len(page.rows) + len(page.skipped)
                cursor += read
                if not read or cursor >= (page.total or 0):
                    break


def details_url(base: str, server: str, start: date, end: date, cursor: int) -> str:
    return f"{base.rstrip('/')}/details/{server}/{start.isoformat()}/{end.isoformat()}/{cursor}/json"


def parse_details(body: bytes, where: str, server: str, asked: str | None = None) -> StreamPage:
    """One details answer → its page (`start` the cursor, `total` the interval's records); raises AnswerError
    for a body that is no details JSON or the API's refusal, and for an answer of every subject when the
    subject `asked` was one (the API answers a subject it does not know with all of them, `category` "all")."""
    data = json_answer(body, where)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise AnswerError(f"{where}: not a bioRxiv/medRxiv details answer (no 'messages' block)")
    message = data["messages"][0] if data["messages"] and isinstance(data["messages"][0], dict) else {}
    status = str(message.get("status", "")).strip()
    collection = data.get("collection") or []
    if status != "ok":
        if "no posts found" not in status.lower() or collection:
            raise AnswerError(f"{where}: the API says: {status or 'no status'}")
        return StreamPage(start=_int(message.get("cursor")), total=0)
    if not isinstance(collection, list):
        raise AnswerError(f"{where}: 'collection' is not a list")
    answered = subject_words(str(message.get("category") or ""))
    if asked and answered == "all":
        raise AnswerError(f"{where}: {SERVERS[server][0]} has no subject '{asked}' (it answered with every "
                          f"subject); its subjects: {', '.join(SUBJECTS[server])}")
    page = StreamPage(start=_int(message.get("cursor")), total=_int(message.get("total"), len(collection)))
    add_rows(page, collection, lambda record: record_row(record, server), where, "record")
    return page


def record_row(record: Any, server: str) -> tuple[dict[str, Any] | None, str]:
    """One details record → a row keyed `server:DOI`, or (None, why)."""
    if not isinstance(record, dict):
        return None, "not a record"
    doi = str(record.get("doi") or "").strip()
    title = plain(record.get("title"))
    when = day(record.get("date"))
    if not doi or not title:
        return None, f"{doi or title[:60] or 'a record'}: no {'DOI' if not doi else 'title'}"
    if when is None:
        return None, f"{doi}: no date"
    version = _int(record.get("version"), 1) or 1
    label, site = SERVERS[server]
    published_doi = str(record.get("published") or "").strip()
    return row(id=f"{server}:{doi.lower()}", title=title, abstract=plain(record.get("abstract")) or None,
               authors=_authors(record.get("authors")), url=f"{site}/content/{doi}v{version}", doi=doi,
               published=stamp(when), venue=f"{label} {plain(record.get('category'))}".strip(), version=version,
               subject=plain(record.get("category")), journal_doi=published_doi if published_doi != "NA" else None,
               pdf_url=f"{site}/content/{doi}v{version}.full.pdf"), ""


def _authors(value: Any) -> list[str]:
    """"Surname, A.; Surname, B." → ["A. Surname", "B. Surname"] (the order zotrec shows names in)."""
    names = []
    for part in str(value or "").split(";"):
        part = plain(part)
        if not part:
            continue
        surname, _, given = part.partition(",")
        names.append(f"{given.strip()} {surname.strip()}".strip() if given.strip() else surname.strip())
    return names


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default
