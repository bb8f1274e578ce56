"""Every writer emits what its format allows (issue 42, "Invalid XML written", "Terminal"): one hostile text
table, drawn by hypothesis into every field a corpus or a library feeds (title, abstract, authors, id, url,
venue, categories, reasons, interests, feedback, the list's title), rendered in every output format, and each
output parsed strictly: Atom by expat (xml.etree), HTML by html.parser, Markdown by markdown-it, JSON and JSON
Lines by json, CSV by csv (strict), the e-mail by the email package with every defect raised, BibTeX by
bibtexparser, RIS by rispy, CSL-JSON by json; the terminal table with and without its OSC 8 links.

The table holds what attacks used: C0 and C1 controls (0x9b is a terminal's CSI, 0x9d its OSC), lone surrogates
(a `\\ud800` escape in a JSON corpus), U+FFFE/U+FFFF (XML 1.0 forbids them: a feed with one is "not well-formed
(invalid token)"), bidi overrides, line separators, markup of each format, spreadsheet formulas, header
injection. XML 1.0's Char production (https://www.w3.org/TR/xml/#charsets) is the strictest rule here.
"""

from __future__ import annotations

import csv
import email
import io
import json
import re
import xml.etree.ElementTree as ET
from email import policy
from html.parser import HTMLParser

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recommender.items import AuthorReason, Creator, LibraryItem, Paper, Reason, Recommendation, Skipped, SteerReason

HOSTILE = [
    "\x1b[31m", "\x1b]8;;https://evil.example/\x1b\\", "\x07", "\x00", "\x08", "\x0b", "\x0c", "\r", "\r\n", "\t",
    "\x7f", "\x85", "\x9b2J", "\x9c", "\x9d0;title\x07", "\x90", "\x9f",  # C1: CSI, ST, OSC, DCS, APC
    "\ud800", "\udfff", "\udc9b",  # lone surrogates (a JSON escape; a file name's undecodable byte)
    "\ufffe", "\uffff", "\ufdd0", "\U0010ffff",  # non-characters: U+FFFE/U+FFFF are not XML, all are HTML errors
    "\u202e", "\u2066", "\u200f", "\u2028", "\u2029", "\ufeff", "\u200b",
    "]]>", "<script>alert(1)</script>", "&amp;", "&#0;", "<!--", '"', "'", "<a href=javascript:x>",
    "*_`[x](javascript:y)", "# ", "- ", "1. ", "|", "=HYPERLINK(\"http://evil\")", "+1", "@SUM(A1)", "-2+3",
    "{", "}", "\\", "@comment{", "%", "ER  - ", "\nTY  - JOUR", "\r\nBcc: victim@example.org",
    "😀", "e\u0301", "ﬁ", "x" * 120,
]
TEXT = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6)), min_size=1, max_size=5).map("".join)

# What no output may hold raw: C0 but tab/newline, DEL, C1, surrogates, U+FFFE/U+FFFF, bidi controls.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")
TERMINAL_CODES = re.compile(r"\x1b\]8;[^\x1b\x07]*\x1b\\|\x1b\[[0-9;]*m")  # rich's OSC 8 links and styles only


def _clean(text: str, what: str) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, f"{what}: {found.group()!r} at {found.start()}: {text[max(0, found.start() - 40):found.end() + 40]!r}"


def _recommendations(texts: list[str], url_tail: str) -> list[Recommendation]:
    recs = []
    for rank, text in enumerate(texts[:2], start=1):
        other = texts[-rank]
        paper = Paper(id=f"arxiv:2501.0000{rank}{other}", title=f"Flows {text}", abstract=f"We {other} study {text}.",
                      authors=(f"Jane {text} Doe", other or "Ann Lee"), url=f"https://example.org/{rank}{url_tail}",
                      doi=f"10.1000/{other}", year=2025, venue=f"ICML {text}",
                      metadata={"categories": ["cs.LG", text], "pdf_url": f"https://example.org/{text}.pdf",
                                "updated": "2025-01-02T03:04:05+00:00"})
        recs.append(Recommendation(
            paper=paper, score=0.5 / rank, rank=rank, match=70, interest=text,
            reasons=(Reason(f"K{other}", f"Saved {text}", 0.61), Reason("K2", other, 0.4)),
            feedback=(f"like '{text}', which you kept",),
            author_reasons=(AuthorReason(f"Jane {text} Doe", 3),), steer_reasons=(SteerReason(other, 0.62),)))
    return recs


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags, self.hrefs, self.text = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.hrefs += [value for name, value in attrs if name in ("href", "src")]

    def handle_data(self, data):
        self.text.append(data)


NON_CHARACTERS = re.compile("[\ufdd0-\ufdef\ufffe\uffff\U0001fffe\U0001ffff\U0010fffe\U0010ffff]")


def _check_html(document: str, what: str) -> None:
    _clean(document, what)
    assert not NON_CHARACTERS.search(document), what  # "noncharacter-in-input-stream" (HTML's parsing rules)
    parser = _Tags()
    parser.feed(document)
    parser.close()
    assert not parser.tags & {"script", "iframe", "object", "embed"}, (what, parser.tags)
    assert all(re.match(r"(https?://|#|data:image/svg\+xml)", href) for href in parser.hrefs), parser.hrefs
    _clean("".join(parser.text), what + " text")


def _check_atom(document: str) -> None:
    _clean(document, "atom")
    root = ET.fromstring(document.encode("utf-8"))  # expat: not well-formed → ParseError
    ns = "{http://www.w3.org/2005/Atom}"
    entries = root.findall(f"{ns}entry")
    assert len(entries) == 2
    for entry in entries:
        for link in entry.findall(f"{ns}link"):
            assert re.match(r"https?://", link.get("href")), link.get("href")
        _check_html(entry.find(f"{ns}content").text, "atom content")


def _check_markdown(document: str) -> None:
    from markdown_it import MarkdownIt

    _clean(document, "markdown")
    tokens = MarkdownIt("commonmark").parse(document)
    inline = [child for token in tokens for child in (token.children or [])]
    assert not [t for t in tokens + inline if t.type in ("html_inline", "html_block")], "raw HTML in Markdown"
    for token in inline:
        if token.type == "link_open":
            assert re.match(r"https?://", token.attrs["href"]), token.attrs


def _check_csv(document: str, rows: int) -> None:
    parsed = list(csv.reader(io.StringIO(document, newline=""), strict=True))
    assert len(parsed) == rows + 1 and {len(row) for row in parsed} == {len(parsed[0])}, parsed
    for row in parsed[1:]:
        for cell in row:
            _clean(cell, "csv cell")
            assert not cell.startswith(("=", "+", "@", "\t", "\r")) or re.fullmatch(r"[-+]?[\d.]+", cell), cell


def _check_json(document: str, lines: bool) -> None:
    _clean(document, "json")
    values = [json.loads(line) for line in document.splitlines()] if lines else [json.loads(document)]
    assert values


def _check_mail(subject: str, text: str, html: str) -> None:
    from zotero_bridge.deliver.mail import MailSettings, build_message

    settings_ = MailSettings(host="127.0.0.1", sender="zotrec@example.org", to=("me@example.org",))
    raw = build_message(subject, text, html, settings_).as_bytes()
    message = email.message_from_bytes(raw, policy=policy.strict)  # raise_on_defect
    assert message["To"] == "me@example.org" and message["Bcc"] is None
    _clean(str(message["Subject"]), "mail subject")
    for part in ("plain", "html"):
        _clean(message.get_body((part,)).get_content(), f"mail {part}")


def _check_terminal(document: str, what: str) -> None:
    _clean(TERMINAL_CODES.sub("", document).replace("\x1b", "ESC!"), what)
    assert "\x1b" not in TERMINAL_CODES.sub("", document), what


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(TEXT, min_size=2, max_size=3), url_tail=st.sampled_from(["", *HOSTILE[:20]]))
@example(texts=["\ufffe \uffff", "\x9b31m \x9d0;x\x07 \ud800"], url_tail="\x9b")  # the attacks' own text
def test_every_writer_emits_what_its_format_allows(texts, url_tail):
    import bibtexparser
    import rispy

    from recommender.batch.output import render_user_block
    from zotero_bridge.render.atom import render_atom
    from zotero_bridge.render.digest import digest_text
    from zotero_bridge.render.export import render_export
    from zotero_bridge.render.html_page import ListContext
    from zotero_bridge.render.reading_list import render_recommendations

    recs = _recommendations(texts, url_tail)
    title = f"Reading list {texts[0]}"
    context = ListContext(library=texts[1], corpus=texts[0], prefer=(texts[1],), interests=(texts[0],))
    for fmt in ("table", "markdown", "html", "json", "jsonl", "csv"):
        document = render_recommendations(recs, fmt, title=title, context=context, width=100)
        {"table": lambda d: _check_terminal(d, "table"), "markdown": _check_markdown,
         "html": lambda d: _check_html(d, "html"), "json": lambda d: _check_json(d, False),
         "jsonl": lambda d: _check_json(d, True), "csv": lambda d: _check_csv(d, len(recs))}[fmt](document)
    _check_terminal(render_recommendations(recs, "table", title=title, context=context, width=100, hyperlinks=True),
                    "table with links")
    _check_atom(render_atom(recs, title=title, library=texts[1], corpus=texts[0]))
    text = digest_text(recs, title, [("Library", texts[1])])
    _clean(text, "digest")
    _check_mail(f"{title} · 2025-01-02", text, render_recommendations(recs, "html", title=title, context=context))
    bibtex = render_export(recs, "bibtex")
    _clean(bibtex, "bibtex")
    assert len(bibtexparser.loads(bibtex).entries) == len(recs)
    ris = render_export(recs, "ris")
    _clean(ris, "ris")
    assert [record["type_of_reference"] for record in rispy.loads(ris)] == ["CPAPER"] * len(recs) or \
        len(rispy.loads(ris)) == len(recs)
    _check_json(render_export(recs, "csljson"), False)
    _check_json(render_user_block(texts[0], recs, "jsonl"), True)
    score_rows = render_user_block(texts[0], recs, "csv")
    for row in csv.reader(io.StringIO(score_rows, newline=""), strict=True):
        for cell in row:
            _clean(cell, "score csv")


@settings(max_examples=25, deadline=None)
@given(texts=st.lists(TEXT, min_size=2, max_size=3))
def test_the_library_view_emits_what_its_format_allows(texts):
    from zotero_bridge.render.reading_list import render_library

    items = [LibraryItem(key=f"K{n}{text}", title=f"Item {text}", creators=(Creator(text, "Ann"),),
                         url=f"https://x.org/{text}", tags=(text,), collections=(f"C/{text}",), year=2020)
             for n, text in enumerate(texts)]
    skipped = [Skipped(f"lib.bib:{n} {text}", f"note {text}") for n, text in enumerate(texts)]
    _check_terminal(render_library(items, skipped, "table", width=120), "library table")
    _check_json(render_library(items, skipped, "json"), False)
