"""The feed keeps the week (issue 38): the window's picks, newest first, stable ids, a rel="self" link, and the
W3C feed validator's checks for what zotrec writes (w3c/feedvalidator, src/feedvalidator/feed.py: id, title,
updated, author, MissingSelf; entry.py: rfc3339 dates, no duplicate ids (an error) or `updated` values
(DuplicateUpdated); link.py: RelativeSelf, one alternate per type). The validator itself passed these feeds with
no warning (run by hand: its validateString with an absolute self link), which is why each check is here."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

import pytest

from recommender.items import Paper, Reason, Recommendation
from zotero_bridge.render.atom import ATOM, parse_feed, render_atom

A = f"{{{ATOM}}}"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
NOW = datetime(2026, 12, 1, 7, 15, tzinfo=UTC)


def rec(number: int, rank: int) -> Recommendation:
    paper = Paper(id=f"arxiv:2501.{number:05d}", title=f"Paper {number} & <b>", abstract="An abstract.",
                  authors=["Jane Doe"], url=f"https://arxiv.org/abs/2501.{number:05d}v1",
                  metadata={"updated": "2025-01-02T03:04:05+00:00", "categories": ["cs.LG"]})
    return Recommendation(paper=paper, score=0.5, rank=rank,
                          reasons=[Reason(item_key="K", item_title="A saved paper", similarity=0.4)])


def week(days: int, keep_days: int = 7, self_href: str = "https://example.org/arxiv.xml") -> str:
    text = None
    for day in range(days):
        text = render_atom([rec(10 * day + k, k + 1) for k in range(3)], title="Reading list · arxiv:cs.LG",
                           library="/home/me/Zotero/zotero.sqlite", corpus="arxiv:cs.LG",
                           now=NOW + timedelta(days=day), self_href=self_href, previous=text, keep_days=keep_days)
    return text


def validator_checks(root: ET.Element) -> list[str]:
    """The feed validator's errors and warnings that apply to zotrec's feeds, as plain checks."""
    problems = []
    for name in ("id", "title", "updated"):
        if root.find(A + name) is None:
            problems.append(f"feed lacks {name}")
    selves = [link for link in root.iterfind(A + "link") if link.get("rel") == "self"]
    if not selves:
        problems.append("MissingSelf")
    elif not re.match(r"^https?://", selves[0].get("href", "")):
        problems.append("RelativeSelf")
    entries = root.findall(A + "entry")
    feed_author = root.find(A + "author") is not None
    for kind, values in (("DuplicateIds", [e.findtext(A + "id") for e in entries]),
                         ("DuplicateUpdated", [e.findtext(A + "updated") for e in entries])):
        problems += [f"{kind} {value}" for value, count in Counter(values).items() if count > 1]
    for entry in entries:
        for name in ("id", "title", "updated"):
            if entry.find(A + name) is None:
                problems.append(f"entry lacks {name}")
        for name in ("updated", "published"):
            value = entry.findtext(A + name)
            if value is not None and not RFC3339.match(value):
                problems.append(f"{name} not RFC 3339: {value}")
        if not feed_author and entry.find(A + "author") is None:
            problems.append("entry without author")
        types = Counter(link.get("type") for link in entry.iterfind(A + "link") if link.get("rel") == "alternate")
        problems += [f"duplicate alternate {t}" for t, count in types.items() if count > 1]
        if not entry.findtext(A + "id", "").startswith(("urn:", "http:", "https:", "tag:")):
            problems.append("id not a URI")
    return problems


def test_the_feed_keeps_the_week_newest_first():
    root = parse_feed(week(3))
    entries = root.findall(A + "entry")
    assert [e.findtext(A + "id")[-5:] for e in entries] == ["00020", "00021", "00022", "00010", "00011", "00012",
                                                            "00000", "00001", "00002"]
    published = [e.findtext(A + "published") for e in entries]
    assert published == sorted(published, reverse=True)
    assert validator_checks(root) == []


def test_entries_older_than_the_window_leave():
    root = parse_feed(week(5, keep_days=2))
    assert {e.findtext(A + "id")[-5:-1] for e in root.findall(A + "entry")} == {"0004", "0003", "0002"}


def test_ids_stay_the_same_across_days_and_a_paper_delivered_again_is_one_entry():
    first = parse_feed(week(1))
    again = render_atom([rec(0, 1)], title="t", library="x", corpus="arxiv:cs.LG", now=NOW + timedelta(days=1),
                        self_href="https://example.org/a.xml", previous=week(1), keep_days=7)
    ids = [e.findtext(A + "id") for e in parse_feed(again).findall(A + "entry")]
    assert ids[0] == first.find(A + "entry").findtext(A + "id") and len(ids) == len(set(ids)) == 3


def test_the_validator_would_warn_about_a_relative_or_missing_self_link():
    assert validator_checks(parse_feed(week(1, self_href="arxiv.xml"))) == ["RelativeSelf"]
    assert validator_checks(parse_feed(week(1, self_href=""))) == ["MissingSelf"]


def test_the_feed_names_the_library_not_its_path():
    text = week(1)
    assert "/home/me" not in text and "ranked for zotero.sqlite" in text


@pytest.mark.parametrize("bad", ["<!DOCTYPE feed [<!ENTITY a 'b'>]><feed xmlns='http://www.w3.org/2005/Atom'/>",
                                 "<feed xmlns='http://www.w3.org/2005/Atom'>\ufffe</feed>", "<rss/>", "not xml"])
def test_a_feed_that_a_strict_parser_refuses_is_refused(bad):
    with pytest.raises(ValueError):
        parse_feed(bad)


@pytest.mark.parametrize(("given", "named"), [
    ("/home/me/Zotero/zotero.sqlite", "zotero.sqlite"), ("~/lib.bib, zotero:web", "lib.bib, zotero:web"),
    ("zotero:sqlite:/home/me/Zotero/zotero.sqlite", "zotero:sqlite:zotero.sqlite"),
    ("arxiv:cs.LG,stat.ML", "arxiv:cs.LG,stat.ML"), ("feed:https://example.org/a/rss", "feed:https://example.org/a/rss"),
    ("/data/corpora/mine.jsonl, icml2025", "mine.jsonl, icml2025"), (r"C:\Users\me\Zotero\zotero.sqlite", "zotero.sqlite"),
])
def test_a_library_or_corpus_is_named_never_by_its_folder(given, named):
    from zotero_bridge.render.digest import library_name

    assert library_name(given) == named
