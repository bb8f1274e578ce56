"""What a library already reads, as corpora to follow: `suggest_sources(items)` for `zotrec sources`, the MCP
`sources` tool and `daily --corpus auto`.

The journals its items appeared in (grouped by ISSN, or by title where no item of that journal has one) become
a journal's own table-of-contents feed where we know it, else `openalex:issn:ISSN`; the arXiv categories of its
arXiv items (Zotero's arXiv translator writes 'arXiv:2101.00001 [cs.LG]' into Extra and tags the primary
category; old ids such as hep-th/9901001 name their archive) become `arxiv:CATEGORY`; bioRxiv and medRxiv items
tagged with one of the servers' subjects become `biorxiv:SUBJECT` / `medrxiv:SUBJECT`. Each comes with how many
library items point there, the most first.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from recommender.items import LibraryItem
from recommender.text import title_key

# Journals whose own table-of-contents feed we know (publisher pages list them): (titles, ISSNs, feed).
JOURNAL_FEEDS = (
    (("Nature",), ("0028-0836", "1476-4687"), "https://www.nature.com/nature.rss"),
    (("Nature Communications",), ("2041-1723",), "https://www.nature.com/ncomms.rss"),
    (("Scientific Reports",), ("2045-2322",), "https://www.nature.com/srep.rss"),
    (("Science",), ("0036-8075", "1095-9203"),
     "https://www.science.org/action/showFeed?type=etoc&feed=rss&jc=science"),
    (("Science Advances",), ("2375-2548",), "https://www.science.org/action/showFeed?type=etoc&feed=rss&jc=sciadv"),
    (("Proceedings of the National Academy of Sciences", "PNAS",
      "Proceedings of the National Academy of Sciences of the United States of America"), ("0027-8424", "1091-6490"),
     "https://www.pnas.org/action/showFeed?type=etoc&feed=rss&jc=pnas"),
    (("PLOS ONE",), ("1932-6203",), "https://journals.plos.org/plosone/feed/atom"),
    (("PLOS Biology",), ("1544-9173", "1545-7885"), "https://journals.plos.org/plosbiology/feed/atom"),
    (("eLife",), ("2050-084X",), "https://elifesciences.org/rss/recent.xml"),
)
_FEED_BY_ISSN = {issn: url for _, issns, url in JOURNAL_FEEDS for issn in issns}
_FEED_BY_TITLE = {title_key(name): (url, issns[0]) for names, issns, url in JOURNAL_FEEDS for name in names}
BIORXIV_SUBJECTS = (
    "Animal Behavior and Cognition", "Biochemistry", "Bioengineering", "Bioinformatics", "Biophysics",
    "Cancer Biology", "Cell Biology", "Clinical Trials", "Developmental Biology", "Ecology", "Epidemiology",
    "Evolutionary Biology", "Genetics", "Genomics", "Immunology", "Microbiology", "Molecular Biology",
    "Neuroscience", "Paleontology", "Pathology", "Pharmacology and Toxicology", "Physiology", "Plant Biology",
    "Scientific Communication and Education", "Synthetic Biology", "Systems Biology", "Zoology")
MEDRXIV_SUBJECTS = (
    "Addiction Medicine", "Allergy and Immunology", "Anesthesia", "Cardiovascular Medicine",
    "Dentistry and Oral Medicine", "Dermatology", "Emergency Medicine", "Endocrinology", "Epidemiology",
    "Forensic Medicine", "Gastroenterology", "Genetic and Genomic Medicine", "Geriatric Medicine",
    "Health Economics", "Health Informatics", "Health Policy", "Health Systems and Quality Improvement",
    "Hematology", "HIV/AIDS", "Infectious Diseases", "Intensive Care and Critical Care Medicine",
    "Medical Education", "Medical Ethics", "Nephrology", "Neurology", "Nursing", "Nutrition",
    "Obstetrics and Gynecology", "Occupational and Environmental Health", "Oncology", "Ophthalmology",
    "Orthopedics", "Otolaryngology", "Pain Medicine", "Palliative Medicine", "Pathology", "Pediatrics",
    "Pharmacology and Therapeutics", "Primary Care Research", "Psychiatry and Clinical Psychology",
    "Public and Global Health", "Radiology and Imaging", "Rehabilitation Medicine and Physical Therapy",
    "Respiratory Medicine", "Rheumatology", "Sexual and Reproductive Health", "Sports Medicine", "Surgery",
    "Toxicology", "Transplantation", "Urology")
_ISSN = re.compile(r"\b(\d{4})-?(\d{3}[\dXx])\b")
_ARXIV_EXTRA = re.compile(r"arXiv:\s*\S+\s*\[([a-z][a-z-]+\.[A-Za-z][A-Za-z-]*)\]")
_ARXIV_OLD_ID = re.compile(r"(?:arxiv\.org/(?:abs|pdf)/|arXiv:\s*|arXiv\.)([a-z][a-z-]+(?:\.[A-Z]{2})?)/\d{7}",
                           re.IGNORECASE)
_ARXIV_ITEM = re.compile(r"arxiv\.org/|arXiv:|10\.48550/arXiv\.", re.IGNORECASE)
_CATEGORY_TAG = re.compile(r"^(?:astro-ph|cond-mat|cs|econ|eess|math|nlin|physics|q-bio|q-fin|stat)"
                           r"\.[A-Za-z][A-Za-z-]{1,7}$|^(?:gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math-ph|nucl-ex|"
                           r"nucl-th|quant-ph)$")
_PREPRINT_VENUE = re.compile(r"^(arxiv|biorxiv|medrxiv|ssrn|research square|preprints?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SourceSuggestion:
    """One corpus to follow: the `--corpus` option, what it is in words, and how many library items point there."""

    option: str  # 'arxiv:cs.LG', 'feed:https://…', 'openalex:issn:1234-5678', 'biorxiv:cell-biology'
    label: str  # 'Nature (ISSN 0028-0836)', 'arXiv cs.LG'
    count: int
    kind: str  # 'journal', 'arxiv', 'biorxiv', 'medrxiv'


def suggest_sources(items: Iterable[LibraryItem]) -> list[SourceSuggestion]:
    """Every source the library's items point to, the most items first (then by label)."""
    items = list(items)
    found = [*_journals(items), *_arxiv(items), *_preprint_servers(items)]
    return sorted(found, key=lambda s: (-s.count, s.label.casefold(), s.option))


def auto_corpora(suggestions: Sequence[SourceSuggestion], can_follow: Callable[[str], bool],
                 top: int = 3) -> list[str]:
    """The options `daily --corpus auto` follows: the `top` suggestions whose option `can_follow` (a source
    with an adapter), the arXiv categories among them as one corpus (`arxiv:cs.CV,eess.IV`: each paper once)."""
    chosen = [s for s in suggestions if s.option and can_follow(s.option)][:top]
    categories = [s.option.removeprefix("arxiv:") for s in chosen if s.kind == "arxiv"]
    options = []
    for suggestion in chosen:
        if suggestion.kind != "arxiv":
            options.append(suggestion.option)
        elif suggestion.option == f"arxiv:{categories[0]}":
            options.append("arxiv:" + ",".join(categories))
    return options


def issns(value: str) -> list[str]:
    """Every ISSN in a field ('0004-637X, 1538-4357', '00358711'), as NNNN-NNNC."""
    return list(dict.fromkeys(f"{a}-{b.upper()}" for a, b in _ISSN.findall(value or "")))


def _journals(items: Sequence[LibraryItem]) -> list[SourceSuggestion]:
    titled_issn: dict[str, Counter] = defaultdict(Counter)  # title key → the ISSNs its items carry
    for item in items:
        if item.publication and not _PREPRINT_VENUE.match(item.publication):
            for issn in issns(item.issn):
                titled_issn[title_key(item.publication)][issn] += 1
    groups: dict[str, list[LibraryItem]] = defaultdict(list)
    for item in items:
        if item.publication and _PREPRINT_VENUE.match(item.publication):
            continue
        own = issns(item.issn)
        key = title_key(item.publication) if item.publication else ""
        if key in titled_issn:
            groups[titled_issn[key].most_common(1)[0][0]].append(item)
        elif own:
            groups[own[0]].append(item)
        elif key:
            groups["title:" + key].append(item)
    found = []
    for key, members in groups.items():
        names = Counter(item.publication for item in members if item.publication)
        name = names.most_common(1)[0][0] if names else key
        every = list(dict.fromkeys(issn for item in members for issn in issns(item.issn)))
        if key.startswith("title:"):
            known = _FEED_BY_TITLE.get(key.removeprefix("title:"))
            found.append(SourceSuggestion(f"feed:{known[0]}", f"{name} (ISSN {known[1]})", len(members), "journal")
                         if known else SourceSuggestion("", f"{name} (no ISSN in the library)", len(members),
                                                        "journal"))
            continue
        feed = next((_FEED_BY_ISSN[issn] for issn in [key, *every] if issn in _FEED_BY_ISSN), None)
        option = f"feed:{feed}" if feed else f"openalex:issn:{key}"
        found.append(SourceSuggestion(option, f"{name} (ISSN {key})", len(members), "journal"))
    return found


def arxiv_categories(item: LibraryItem) -> set[str]:
    """The arXiv categories an item shows: Extra's '[cs.LG]', an old-style id's archive, category tags."""
    texts = " ".join((item.extra, item.url, item.doi, item.publication))
    if not _ARXIV_ITEM.search(texts):
        return set()
    found = set(_ARXIV_EXTRA.findall(item.extra))
    found.update(match for match in _ARXIV_OLD_ID.findall(texts))
    found.update(tag for tag in item.tags if _CATEGORY_TAG.match(tag))
    return found


def _arxiv(items: Sequence[LibraryItem]) -> list[SourceSuggestion]:
    counts = Counter(category for item in items for category in arxiv_categories(item))
    return [SourceSuggestion(f"arxiv:{category}", f"arXiv {category}", count, "arxiv")
            for category, count in counts.items()]


def _server(item: LibraryItem) -> str:
    text = f"{item.url} {item.publication}".lower()
    return "medrxiv" if "medrxiv" in text else "biorxiv" if "biorxiv" in text else ""


_SUBJECTS = {"biorxiv": {s.casefold(): s for s in BIORXIV_SUBJECTS},
             "medrxiv": {s.casefold(): s for s in MEDRXIV_SUBJECTS}}


def _preprint_servers(items: Sequence[LibraryItem]) -> list[SourceSuggestion]:
    counts: Counter = Counter()
    for item in items:
        server = _server(item)
        if server:
            counts.update({(server, _SUBJECTS[server][tag.strip().casefold()]) for tag in item.tags
                           if tag.strip().casefold() in _SUBJECTS[server]})
    label = {"biorxiv": "bioRxiv", "medrxiv": "medRxiv"}
    return [SourceSuggestion(f"{server}:{'-'.join(subject.lower().replace('/', ' ').split())}",
                             f"{label[server]} {subject}", count, server)
            for (server, subject), count in counts.items()]
