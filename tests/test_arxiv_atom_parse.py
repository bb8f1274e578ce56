"""arXiv answers read by expat (recommender/corpus/arxiv_expat.py) against feedparser's reading, the way every
answer was read before (`feedparser_parse_answer`, the module's feedparser path): rows, skipped entries and
errors equal on every saved XML answer, the arXiv double's answers and faults (tests/fake_arxiv.py), and
hypothesis's answers of tricky text, dates, ids and shapes. Plain answers must take the expat path (else the
comparison would set feedparser against itself), and a reader that drops any one field must be caught."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recommender.corpus import arxiv_atom, arxiv_expat
from recommender.corpus.arxiv_atom import parse_answer
from recommender.corpus.stream import AnswerError, StreamPage
from recommender.corpus.stream_rows import flat
from tests.fake_arxiv import ARXIV, ATOM, OPENSEARCH, FakeArxiv, Version, paper

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:feedparser")  # the old reader's warning
DATA = Path(__file__).parent / "data"
NOW = datetime(2025, 1, 20, 6, 0, tzinfo=UTC)


def feedparser_parse_answer(body: bytes, where: str) -> StreamPage:
    """parse_answer as it was before expat read any answer: feedparser's reading of every one (the module's
    own fallback, which bounds the markup first through parse_xml_feed as the old reader did)."""
    return arxiv_atom._page(arxiv_atom._feedparser_answer(body, where), where)


def outcome(parse, body: bytes) -> tuple:
    """What a reader gives: the page (rows, skips, result-set numbers) or the error and its message."""
    try:
        page = parse(body, "answer.xml")
    except AnswerError as error:
        return "error", str(error), error.complete
    except Exception as error:  # noqa: BLE001 — a crash must be the same crash
        return "raised", type(error).__name__, str(error)
    return "page", page.total, page.start, page.rows, page.skipped


def assert_same(body: bytes, *, plain: bool | None = None) -> tuple:
    """Both readers agree on `body`; `plain`: expat must (True) or must not (False) read it itself."""
    if plain is not None:
        assert (arxiv_expat.read(body) is not None) == plain, body[:600]
    new, old = outcome(parse_answer, body), outcome(feedparser_parse_answer, body)
    assert new == old, body[:2000]
    return new


# ---- Saved answers and the double's ------------------------------------------------------------------------

def double_answers() -> dict[str, bytes]:
    """The double's answers: a day of papers with a DOI, old and odd ids, dates beyond a datetime; faults."""
    fake = FakeArxiv()
    day = NOW - timedelta(days=1)
    fake.add(*[paper(n, day, categories=("cs.LG", "stat.ML") if n % 3 else ("stat.ML",), hour=n)
               for n in range(1, 9)])
    doi = paper(20, day, title="Caf\u00e9 &amp; <b>na\u00efve</b> \u201cquotes\u201d \u2014 \U0001d4d0",
                abstract="  tab\tand\n\n lines ")
    doi.doi, doi.authors = "10.1000/x&y", ("Ren\u00e9 \u00c5ngstr\u00f6m", "  ", "\u674e\u96f7")
    far = paper(21, day)
    far.updated, far.published = datetime(9999, 12, 31, 23, tzinfo=UTC), datetime(1, 1, 1, 1, tzinfo=UTC)
    old = Version("hep-ex/0307015", "An old id", "Its abstract.", ("hep-ex",), day, day, version=3)
    fake.add(doi, far, old)
    query = {"search_query": ["cat:cs.LG OR cat:stat.ML OR cat:hep-ex"], "max_results": ["50"]}
    answers = {"day": fake.answer(query)[2], "second page": fake.answer({**query, "start": ["3"]})[2]}
    for name, fault in {"error": ("error", "start must be an integer"), "html": ("html",), "cut": ("cut",),
                        "empty": ("empty",)}.items():
        fake.faults[len(fake.requests) + 1] = fault
        answers[name] = fake.answer(query)[2]
    answers["refused"] = fake.answer({**query, "max_results": ["40000"]})[2]
    answers["lying"] = FakeArxiv(lying=2).answer(query)[2]
    return answers


SAVED = sorted(DATA.rglob("*.xml"))
DOUBLE = double_answers()


@pytest.mark.parametrize("path", SAVED, ids=lambda path: path.name)
def test_every_saved_answer_reads_the_same(path):
    assert_same(path.read_bytes(), plain=path.parent.name == "arxiv")


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_every_answer_of_the_double_reads_the_same(name):
    result = assert_same(DOUBLE[name], plain=name not in ("html", "cut"))
    assert result[0] == ("page" if name in ("day", "second page", "empty", "lying") else "error"), result


def test_the_days_answer_holds_what_the_comparison_needs():
    """The double's day gives rows to compare, its DOI and its old id among them."""
    kind, total, start, rows, skipped = assert_same(DOUBLE["day"])
    assert kind == "page" and total == 11 and start == 0 and len(rows) >= 10
    assert any(row["doi"] for row in rows) and any(row["id"] == "arxiv:hep-ex/0307015" for row in rows)


# ---- A hand-made answer holding every field; odd answers -------------------------------------------------

def answer(entries: str, *, head: str = '<?xml version="1.0" encoding="UTF-8"?>\n',
           root: str = f'<feed xmlns="{ATOM}" xmlns:arxiv="{ARXIV}">', total: str = "3") -> bytes:
    return (f'{head}{root}\n  <title type="html">ArXiv Query: x&amp;y</title>\n'
            f'  <id>http://arxiv.org/api/x</id>\n'
            f'  <opensearch:totalResults xmlns:opensearch="{OPENSEARCH}">{total}</opensearch:totalResults>\n'
            f'  <opensearch:startIndex xmlns:opensearch="{OPENSEARCH}"> 2 </opensearch:startIndex>\n'
            f'{entries}</feed>\n').encode("utf-8")


EVERY_FIELD = answer("""  <entry>
    <id>http://arxiv.org/abs/2501.00001v2</id>
    <updated>2025-01-19T23:30:00-05:00</updated>
    <published>2025-01-18T01:02:03+05:30</published>
    <title type="html">A &lt;i onclick="x()"&gt;title&lt;/i&gt;&lt;script&gt;x()&lt;/script&gt; &amp;amp;
      <![CDATA[<b>CDATA</b> & more]]>\n  broken</title>
    <summary>  An abstract\n with &#233; and \u00c3\u00a9 and &#x93;quotes&#x94; </summary>
    <author><name> Ann  Lee </name><arxiv:affiliation>MIT</arxiv:affiliation></author>
    <author><name>Bo Chen</name><email>bo@example.org</email></author>
    <author><arxiv:affiliation>Nobody named</arxiv:affiliation></author>
    <arxiv:doi>10.1000/abc</arxiv:doi>
    <arxiv:comment> 12 pages,\n 3 figures </arxiv:comment>
    <arxiv:journal_ref>J. Stuff 1 (2025)</arxiv:journal_ref>
    <link href="http://arxiv.org/abs/2501.00001v2" rel="alternate" type="text/html"/>
    <link href="http://arxiv.org/pdf/2501.00001v2" rel="related" type="APPLICATION/PDF"/>
    <arxiv:primary_category term="stat.ML" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
    <category term="stat.ML" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
    <category scheme="x">math.OC</category>
  </entry>
  <entry>
    <id>  http:///arxiv.org/abs/hep-th/9901001v1 </id>
    <updated>2025-01-20</updated>
    <title/>
    <title type="xhtml">An xhtml &lt;title&gt; in text</title>
    <title>Not this one</title>
    <link title="pdf" url="http://arxiv.org/pdf/hep-th/9901001v1"/>
    <category term="hep-th"/>
  </entry>
  <entry>
    <id isPermaLink="false">http://arxiv.org/abs/2501.00003</id>
    <published>Mon, 20 Jan 2025 06:00:00 GMT</published>
    <title type="text">  Only\u00a0published </title>
    <arxiv:primary_category term=""/>
  </entry>
  <entry>
    <id isPermaLink="false">http:///arxiv.org/abs/2501.00004v1</id>
    <updated>2025-01-20T06:00:00Z</updated>
    <title>Its id is not joined</title>
  </entry>
""")


def test_an_answer_with_every_field_reads_the_same_by_expat():
    kind, total, start, rows, skipped = assert_same(EVERY_FIELD, plain=True)
    assert (kind, total, start, [skip.where for skip in skipped]) == ("page", 3, 2, ["answer.xml entry 4"])
    first, second, third = rows
    assert first["authors"] == ["Ann Lee", "Bo Chen"] and first["comment"] == "12 pages, 3 figures"
    assert first["categories"] == ["cs.LG", "stat.ML", "math.OC"] and first["primary_category"] == "stat.ML"
    assert first["pdf_url"].endswith("2501.00001v2") and first["doi"] == "10.1000/abc"
    assert second["title"].startswith("An xhtml")
    assert second["pdf_url"] == "https://arxiv.org/pdf/hep-th/9901001v1"
    assert third["updated"] == "2025-01-20T06:00:00+00:00" and third["primary_category"] is None


def raw_entry(number: int, updated: str = "2025-01-01T00:00:00Z", *more: str) -> str:
    return (f"  <entry>\n    <id>http://arxiv.org/abs/2501.{number:05d}v1</id>\n"
            f"    <updated>{updated}</updated>\n"
            f"    <title>Paper {number}</title>\n    <summary>About paper {number}.</summary>\n"
            f'    <category term="cs.LG"/>\n{"".join(more)}  </entry>\n')


ODD = [  # (answer, whether expat reads it)
    (answer(raw_entry(1, "9999-12-31T23:00:00-05:00") + raw_entry(2, "0001-01-01T00:30:00+01:00")
            + raw_entry(3, "3000-01-01T00:00:00Z") + raw_entry(4, "2025-02-30T00:00:00Z")), True),
    (answer(raw_entry(1).replace("<summary>", "<summary>" + "<a/>" * 450_000)), False),
    (b'<?xml version="1.0" encoding="UTF\x00-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"></feed>', False),
    (b"", False), (b"<html><body>not a feed", False),
    (b"<html><head><title>arXiv</title></head></html>", False),
    (answer(raw_entry(1), head='<?xml version="1.0" encoding="ISO-8859-1"?>\n'), True),
    (answer(raw_entry(1), head="\ufeff"), True),
    (answer(raw_entry(1), head="<!DOCTYPE feed [<!ENTITY x 'y'>]>\n"), False),
    (answer(raw_entry(1).replace("Paper 1", "Paper &nbsp;1")), False),
    (answer(raw_entry(1), root=f'<feed xmlns="{ATOM}" xml:base="http://arxiv.org/">'), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", f'<comment xmlns="{ARXIV}">x</comment>')), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", f'<ax:comment xmlns:ax="{ARXIV}">x</ax:comment>'),
            root=f'<feed xmlns="{ATOM}">'), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", "<arxiv:comment>x</arxiv:comment>"),
            root=f'<feed xmlns="{ATOM}" xmlns:ax="{ARXIV}" xmlns:arxiv="{ARXIV}">'), False),
    (answer(raw_entry(1), total="1", root=f'<feed xmlns="{ATOM}" xmlns:opensearch="x">'), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", "<author><email>a@b.org</email></author>")), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", "<summary>twice</summary>")), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", "<arxiv:primary_category>cs.LG</arxiv:primary_category>")),
     False),
    (answer(raw_entry(1).replace("<title>", '<title type="html">a <b>b</b> ')), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", '<arxiv:doi a="b">10.1/x</arxiv:doi>')), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", '<arxiv:comment a="b">c</arxiv:comment>')), False),
    (answer(raw_entry(1).replace("<entry>", '<entry lastmod="2024-01-01T00:00:00Z">')), False),
    (answer(raw_entry(1).replace("<entry>", '<entry href="http://arxiv.org/abs/x">')), False),
    (answer("", total="caf\u00e9").replace("caf\u00e9".encode(), b"caf\xe9"), False),  # "UTF-8", a latin-1 byte
    (answer(raw_entry(1, "2025-01-01T00:00:00Z",
                      "<author><arxiv:affiliation>MIT</arxiv:affiliation>Bob</author>")), False),  # named Bob
    (answer(raw_entry(1, "2025-01-01T00:00:00Z",
                      '<author><arxiv:affiliation a="b">Bob</arxiv:affiliation></author>')), False),
    (answer(raw_entry(1, "2025-01-01T00:00:00Z", "<author>Bob Text</author>")), False),  # named Bob Text
    (answer('<link href="x">' + raw_entry(2) + "</link>" + raw_entry(1)), False),  # feedparser: two entries
    (answer(raw_entry(1) + raw_entry(2).replace("entry>", "item>")), False),  # an RSS item is an entry too
    (answer(raw_entry(1)).replace(b"</feed>", f'<opensearch:totalResults xmlns:opensearch="{OPENSEARCH}" '
                                              f'a="b">7</opensearch:totalResults></feed>'.encode()), True),
]


@pytest.mark.parametrize("body, plain", ODD)
def test_odd_answers_read_the_same(body, plain):
    assert_same(body, plain=plain)


# ---- hypothesis: plain answers of tricky text (expat reads them), and odd ones (either may) ----------------

def mostly(common, rare, tenths: int = 8):
    """`common` in `tenths` of ten draws, `rare` in the others (one_of alone would draw them evenly)."""
    return st.integers(0, 9).flatmap(lambda n: common if n < tenths else rare)


XML_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufffe\uffff"),
                   max_size=8).map(lambda text: escape(re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "", text)))
PIECES = ["word", " ", "  ", "\n", "\t", "\r\n", "&amp;", "&lt;b&gt;bold&lt;/b&gt;",
          "&lt;script&gt;x&lt;/script&gt;",
          "&#233;", "&#x2019;", "&#x80;", "&#x9d;", "&#133;", "&quot;", "'", "\u00e9", "\u4e2d\u6587", "\u00a0",
          "\u2028", "\x85", "\x93", "\u00c3\u00a9", "\u00c3", "<![CDATA[<b>raw & cdata</b>]]>", "<!-- note -->",
          "<?pi x?>", "$\\alpha$", "&lt;a href=&quot;/rel&quot;&gt;link&lt;/a&gt;", "Error", "\U0001f600",
          "\x7f",
          "&lt;![CDATA[x]]&gt;", "&lt;img src=x onerror=&quot;y()&quot;&gt;", "&lt;style&gt;s&lt;/style&gt;",
          "QUJD", "w6k="]  # the last two are base64
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), XML_TEXT), max_size=6).map("".join)
WORDS = st.lists(st.one_of(st.sampled_from(PIECES), XML_TEXT), min_size=1, max_size=6).map(
    lambda pieces: "Word " + "".join(pieces))
STAMP = st.builds(lambda when, offset: f"{when.year:04d}-{when:%m-%dT%H:%M:%S}{offset}",
                  st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59)),
                  st.sampled_from(["Z", "+00:00", "-05:00", "+05:30", "-23:59", "+14:00"]))
DATES = mostly(STAMP, st.sampled_from([
    "", "  2025-01-20T06:00:00Z\n", "2025-01-20t06:00:00z", "2025-01-20T06:00Z", "2025-01-20", "2025-01",
    "2025-01-20T06:00:00.123Z", "2025-01-20 06:00:00", "Mon, 20 Jan 2025 06:00:00 GMT", "garbage",
    "9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+01:00", "0000-01-01T00:00:00Z", "2025-13-01T00:00:00Z",
    "2025-01-20T24:00:00Z", "2025-01-20T06:00:60Z", "2025-01-20T06:00:00+0500", "2025-01-20T06:00:00+05",
    "\u0662\u0660\u0662\u0665-01-20T06:00:00Z", "2025-01-20T06:00:00EST", "1970-01-01T00:00:00Z",
    "2025-01-20T06:00:00+24:00", "2025-01-20T06:00:00-99:99", "0001-01-01T00:00:00-00:00"]), 6)
GOOD_IDS = st.builds("http://arxiv.org/abs/2501.{:05d}v{}".format, st.integers(0, 99999), st.integers(1, 12))
IDS = mostly(GOOD_IDS, st.one_of(TEXT, st.sampled_from([
    "http://arxiv.org/abs/2501.00001", "https://arxiv.org/abs/2501.12345v12", "2501.00001v3", "urn:x", "",
    "http://export.arxiv.org/abs/2501.00001v2", "http://arxiv.org/abs/hep-ex/0307015v1",
    "http://arxiv.org/abs/math.GT/0309136v1", "  http://arxiv.org/abs/2501.00001v1\n",
    "http:///arxiv.org/abs/2501.00002", "http://arxiv.org/api/errors#bad_id",
    "http://arxiv.org/abs/2501.00001v99999",
    "http://arxiv.org/abs/2501.0001v1", "http://arxiv.org/abs/\uff12\uff15\uff10\uff11.00001v1",
    "http://arxiv.org/abs/2501.00001v1&#x85;"])))
TERMS = st.sampled_from(["cs.LG", "stat.ML", "", " cs.LG", "math.OC", "\u00e9t\u00e9", "a&amp;b"])
HREFS = st.sampled_from(["http://arxiv.org/pdf/2501.00001v1", "https://arxiv.org/pdf/x", "http://e.org/x.pdf",
                         "ftp://x", "", "http:///arxiv.org/pdf/x", "/relative.pdf", " http://arxiv.org/pdf/y "])
KINDS = st.sampled_from([None, "text", "html", "xhtml", "TEXT", "text/html", "application/xhtml+xml",
                         "text/plain", "foo", "application/xml"])
LINKS = st.tuples(st.sampled_from([None, "pdf", "PDF", "doi"]),
                  st.sampled_from([None, "application/pdf", "APPLICATION/PDF", "text/html"]),
                  st.sampled_from([None, "alternate", "related", "self"]))
CATEGORIES = st.tuples(st.one_of(st.none(), TERMS), st.sampled_from([None, ARXIV, ""]),
                       st.sampled_from([None, "Label"]), st.sampled_from(["", "", "cs.AI", " "]))
ODD_IN_ENTRY = [
    "<foo>x</foo>", "<content>x</content>", "<source><title>s</title></source>", "<arxiv:foo>x</arxiv:foo>",
    '<dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">z</dc:creator>', '<link href="x"><b/></link>',
    "<arxiv:primary_category>cs.AI</arxiv:primary_category>", '<arxiv:doi a="b">10.1/x</arxiv:doi>',
    "<title>a <b>b</b></title>", '<link rel="alternate">http://arxiv.org/pdf/z</link>',
    "<issued>2025-01-01</issued>",
    '<summary xml:lang="en">x</summary>', '<title base="http://evil.org/">t</title>', "<Title>Case</Title>"]
ODD_IN_FEED = [
    "<subtitle>x</subtitle>", "<generator>g</generator>", '<link href="x"><entry><id>a</id></entry></link>',
    "<item><title>An RSS item</title></item>", "<image><title>i</title></image>",
    '<title type="xhtml"><div>t</div></title>',
    f'<opensearch:totalResults xmlns:opensearch="{OPENSEARCH}" a="b">7</opensearch:totalResults>']


def attrs(**values) -> str:
    return "".join(f" {name}={quoteattr(value)}" for name, value in values.items() if value is not None)


@st.composite
def text_element(draw, tag: str) -> str:
    mode = draw(st.sampled_from([None, None, "base64", "xml"]))
    return f"<{tag}{attrs(type=draw(KINDS), mode=mode)}>{draw(mostly(WORDS, TEXT, 7))}</{tag}>"


@st.composite
def author(draw, plain: bool) -> str:
    parts = [f"<name>{draw(TEXT)}</name>"] if plain or draw(st.booleans()) else []
    parts += draw(st.lists(st.sampled_from(["<email>a@b.org</email>", "<uri>http://x.org/</uri>",
                                            f"<arxiv:affiliation>{draw(TEXT)}</arxiv:affiliation>",
                                            f"<name>{draw(TEXT)}</name>"]), max_size=3))
    if plain:
        return "<author>\n      " + "\n      ".join(parts) + "</author>"
    inside = draw(st.sampled_from(["", "\n  ", " ", "Some Text"]))
    return f"<author>{inside}{inside.join(draw(st.permutations(parts)))}</author>"


@st.composite
def entry(draw, plain: bool) -> str:
    children = [f"<id{attrs(isPermaLink=draw(st.sampled_from([None, 'false', 'true'])))}>{draw(IDS)}</id>"]
    dates = st.lists(st.sampled_from(["updated", "published"]), max_size=3)
    dated = draw(mostly(st.just(["updated"]), dates, 6))
    children += [f"<{tag}>{draw(DATES)}</{tag}>" for tag in dated]
    children += draw(st.lists(text_element("title"), min_size=draw(st.sampled_from([0, 1, 1, 1])), max_size=2))
    children += draw(st.lists(text_element("summary"), max_size=1 if plain else 2))
    children += draw(st.lists(author(plain), max_size=3))
    children += [f"<link{attrs(href=draw(HREFS), title=title, type=kind, rel=rel)}/>"
                 for title, kind, rel in draw(st.lists(LINKS, max_size=3))]
    children += [f"<category{attrs(term=term, scheme=scheme, label=label)}>{text}</category>"
                 for term, scheme, label, text in draw(st.lists(CATEGORIES, max_size=4))]
    children += [f"<arxiv:primary_category{attrs(term=term, scheme=ARXIV)}/>"
                 for term in draw(st.lists(TERMS, max_size=2))]
    children += [f"<arxiv:{tag}>{draw(TEXT)}</arxiv:{tag}>"
                 for tag in draw(st.lists(st.sampled_from(["doi", "comment", "journal_ref"]), max_size=3))]
    if not plain:
        children += draw(st.lists(st.sampled_from(ODD_IN_ENTRY), max_size=2))
    return "<entry>" + "\n    ".join(draw(st.permutations(children))) + "</entry>\n"


@st.composite
def arxiv_answer(draw, plain: bool) -> bytes:
    entries = "".join(draw(st.lists(entry(plain), min_size=1, max_size=3)))
    roots = [f'<feed xmlns="{ATOM}" xmlns:arxiv="{ARXIV}">',
             f'<feed xmlns="{ATOM}" xmlns:arxiv="{ARXIV}" xmlns:atom="{ATOM}">',
             f'<a:feed xmlns:a="{ATOM}" xmlns="{ATOM}" xmlns:arxiv="{ARXIV}">']
    if not plain:
        odd = draw(st.lists(st.sampled_from(ODD_IN_FEED), max_size=2))
        entries = "".join(draw(st.permutations([entries, *odd])))
        roots += [f'<feed xmlns="{ATOM}" xmlns:ax="{ARXIV}" xmlns:arxiv="{ARXIV}">', f'<feed xmlns="{ATOM}">',
                  f'<feed xmlns="{ATOM}" xmlns:arxiv="{ARXIV}" xml:base="http://arxiv.org/">',
                  f'<feed xmlns="{ATOM}" xmlns:arxiv="{ARXIV}" xml:lang="en">']
    root = draw(st.sampled_from(roots))
    head = draw(st.sampled_from(['<?xml version="1.0" encoding="UTF-8"?>\n', "", "\ufeff",
                                 "<?xml version='1.0'?>"]))
    total = draw(st.sampled_from(["1", " 12 ", "", "x", "1_000", "\u0661\u0662", "3"]))
    body = answer(entries, head=head, root=root, total=total)
    if root.startswith("<a:feed"):
        body = body.replace(b"</feed>", b"</a:feed>")
    change = "" if plain else draw(st.sampled_from(["", "", "utf-16", "windows-1252", "cut"]))
    text = body.decode("utf-8").removeprefix(head)
    if change == "utf-16":
        body = ('<?xml version="1.0" encoding="utf-16"?>\n' + text).encode("utf-16")
    elif change == "windows-1252":  # declared so, but latin-1 bytes
        body = b'<?xml version="1.0" encoding="windows-1252"?>\n' + text.encode("latin-1", "xmlcharrefreplace")
    elif change == "cut":
        body = body[:draw(st.integers(0, len(body)))]
    return body


@settings(max_examples=250, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(arxiv_answer(plain=True))
def test_plain_answers_of_tricky_text_are_read_by_expat_and_the_same(body):
    assert_same(body, plain=True)


@settings(max_examples=250, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(arxiv_answer(plain=False))
def test_odd_answers_read_the_same_whichever_reader_reads_them(body):
    assert_same(body)


@settings(max_examples=400, deadline=None, database=None)
@given(st.tuples(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
                 st.integers(0, 60), st.integers(0, 61), st.sampled_from(["Z", "+", "-"]), st.integers(0, 30),
                 st.integers(0, 99)))
def test_arxivs_date_form_reads_as_feedparsers_date_reader_reads_it(parts):
    from feedparser.datetimes import _parse_date

    *stamp, sign, hours, minutes = parts
    text = "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}".format(*stamp) + (
        "Z" if sign == "Z" else f"{sign}{hours:02d}:{minutes:02d}")
    assert arxiv_expat._date(text) == _parse_date(text)


# ---- The comparison can fail -------------------------------------------------------------------------------

CORPUS = [path.read_bytes() for path in SAVED] + list(DOUBLE.values()) + [EVERY_FIELD]
DROPPABLE = ["id", "title", "summary", "authors", "links", "tags", "arxiv_primary_category", "arxiv_doi",
             "arxiv_comment", "updated_parsed", "published_parsed"]


@pytest.mark.parametrize("field", DROPPABLE)
def test_a_reader_that_drops_a_field_is_caught(field, monkeypatch):
    """The answers above tell a reader that loses any one field from the right one."""
    real = arxiv_expat._entry

    def dropping(element):
        read = real(element)
        if read is not None:
            read.pop(field, None)
        return read

    monkeypatch.setattr(arxiv_expat, "_entry", dropping)
    assert any(outcome(parse_answer, body) != outcome(feedparser_parse_answer, body) for body in CORPUS)


def test_a_reader_that_drops_the_result_sets_numbers_is_caught(monkeypatch):
    real = arxiv_expat._read
    monkeypatch.setattr(arxiv_expat, "_read", lambda body: (lambda read: read and ({}, read[1]))(real(body)))
    assert outcome(parse_answer, EVERY_FIELD) != outcome(feedparser_parse_answer, EVERY_FIELD)


def test_markup_arxiv_does_not_send_stops_the_expat_reader_where_it_stands(monkeypatch):
    """An answer of empty tags (the markup bound lets 200 an entry through) is never built as a whole tree: its
    first element arXiv does not send hands the answer to feedparser before any entry is read."""
    read = []
    real = arxiv_expat._entry
    monkeypatch.setattr(arxiv_expat, "_entry", lambda element: read.append(element) or real(element))
    body = answer(raw_entry(1).replace("<summary>", "<summary>" + "<a/>" * 190)
                  + "".join(raw_entry(n) for n in range(2, 2001)))
    assert arxiv_expat.read(body) is None and read == []
    assert arxiv_expat.read(answer("".join(raw_entry(n) for n in range(1, 2001)))) is not None
    assert len(read) == 2000


def test_an_answer_expat_leaves_is_read_by_the_modules_feedparser_path():
    body = answer(raw_entry(1, "2025-01-01T00:00:00Z", "<foo>x</foo>"))
    assert arxiv_expat.read(body) is None
    assert outcome(lambda b, w: arxiv_atom._page(arxiv_atom._feedparser_answer(b, w), w), body) == \
        outcome(feedparser_parse_answer, body)


def test_flat_folds_the_whitespace_the_regex_folded():
    """stream_rows.flat splits on str.split's whitespace: every code point the regex \\s matched, no other."""
    every = "".join(map(chr, range(0x110000)))
    assert re.findall(r"\s", every) == [char for char in every if char.isspace()]
    for text in (every, " a\u2028b\x1c c\xa0\u3000 ", "", "\n\t", "one", None, 12):
        assert flat(text) == re.sub(r"\s+", " ", str(text or "")).strip()
