"""Safe renderers and the reading-list page: http(s) links only, everything escaped, CSV neutralised,
a self-contained HTML page with a header, and a table that fits the terminal."""

from __future__ import annotations

import csv
import io
import re

from click.testing import CliRunner

from recommender.batch.output import csv_header, render_table, render_user_block, scan_existing
from recommender.items import Paper, Reason, Recommendation
from zotero_bridge.cli.main import cli
from zotero_bridge.render.html_page import ListContext
from zotero_bridge.render.reading_list import render_recommendations
from zotero_bridge.render.safe import markdown_link, safe_url

from .conftest import REPO

EVIL = Paper(id="=cmd|' /C calc'!A0", title='<script>alert(1)</script> [x](javascript:alert(2)) =HYPERLINK("http://e")',
             abstract="<img src=x onerror=alert(3)> & more", authors=("-Bob", "@Ann"), url="javascript:alert(4)",
             metadata={"pdf_url": "data:text/html,<script>alert(5)</script>", "openreview_url": "vbscript:x"})
GOOD = Paper(id="abc", title="Flows for density estimation", abstract="We study flows.", authors=("A. B",),
             url="https://proceedings.mlr.press/v267/x.html", venue="ICML 2025", year=2025,
             metadata={"pdf_url": "https://example.org/x.pdf", "openreview_url": "https://openreview.net/forum?id=abc",
                       "icml_virtual_url": "https://icml.cc/virtual/2025/oral/1", "presentation": "oral"})
RECS = [Recommendation(GOOD, 0.6, (Reason("K1", "Variational inference with normalizing flows", 0.5),), 1),
        Recommendation(EVIL, 0.3, (Reason("K2", "=SUM(1+1) <b>bold</b>", 0.2),), 2)]


def test_only_http_links_survive():
    assert safe_url("https://a.org/x") == "https://a.org/x"
    for bad in ("javascript:alert(1)", "JaVaScRiPt:alert(1)", " data:text/html,x", "vbscript:x", "file:///etc/passwd",
                "http://", "https://a.org/x y", "https://a.org/\x00", "//a.org", 42, None):
        assert safe_url(bad) is None, bad


def test_html_escapes_everything_and_links_only_http():
    page = render_recommendations(RECS, "html")
    assert "<script" not in page and "<img" not in page and "&lt;img src=x onerror=alert(3)&gt;" in page
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith("https://") for h in hrefs)
    assert "javascript:" not in " ".join(hrefs) and "data:" not in " ".join(hrefs)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_markdown_escapes_html_and_links():
    text = render_recommendations(RECS, "markdown")
    assert not re.search(r"(?<!\\)<(script|b)>", text) and not re.search(r"(?<!\\)\]\(javascript", text)
    assert r"\<script\>" in text
    assert "[Flows for density estimation](https://proceedings.mlr.press/v267/x.html)" in text
    assert markdown_link("a)b", "https://x.org/a b)") == r"a)b"  # a space: not a usable link
    assert markdown_link("t", "https://x.org/(a)") == "[t](https://x.org/%28a%29)"


def _cells(text):
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_csv_cells_a_spreadsheet_would_evaluate_are_neutralised():
    for text in (render_recommendations(RECS, "csv"), render_user_block("=user", RECS, "csv"),
                 render_table([{"title": "+1", "users": 3, "id": "@x", "score": -0.5}], "csv")):
        for cell in _cells(text):
            assert not cell.startswith(("=", "+", "@", "\t", "\r")) and not re.match(r"-[^0-9]", cell), (cell, text)
    assert "'=HYPERLINK" not in render_recommendations(RECS, "csv")  # inside a cell it is harmless, left as is
    assert "'=cmd" in render_recommendations(RECS, "csv")


def test_a_neutralised_user_id_resumes(tmp_path):
    out = tmp_path / "s.csv"
    out.write_text(csv_header() + render_user_block("=user", RECS, "csv")
                   + render_user_block("next", RECS, "csv"))
    assert scan_existing(out, "csv").done == ["=user"]


def test_the_page_is_self_contained_with_header_abstract_links_and_picture():
    context = ListContext(library="my.bib", corpus="icml2025", features="tfidf", model="m.npz", library_items=12)
    page = render_recommendations(RECS[:1], "html", title="Reading list", context=context)
    assert not re.search(r'<(script|link|img|iframe)\b', page)
    assert not re.search(r'src=|url\(', page)  # no external assets
    for text in ("my.bib (12 items)", "icml2025", "tfidf", "m.npz", "<details><summary>Abstract</summary>",
                 'href="https://example.org/x.pdf"', ">OpenReview<", ">Oral<", "ICML 2025", "A. B",
                 "Variational inference with normalizing flows", 'class="topics"', 'class="fill"'):
        assert text in page, text


def test_a_bundled_paper_links_its_pmlr_page_and_the_pdf_on_pmlr_not_a_raw_github_file():
    import json

    row = json.loads((REPO / "recommender" / "data" / "icml2025.jsonl").read_text(encoding="utf-8").splitlines()[1])
    from recommender.corpus.readers import load_corpus

    path = REPO / "recommender" / "data" / "icml2025.jsonl"
    paper = next(p for p in load_corpus([path]).papers if p.id == row["id"])
    page = render_recommendations([Recommendation(paper, 0.5, (Reason("K", "Quantiles", 0.4),), 1)], "html")
    assert f'href="{row["pmlr_url"]}"' in page and ">PMLR<" in page
    pmlr_id = row["pmlr_id"]
    assert f'href="https://proceedings.mlr.press/v267/{pmlr_id}/{pmlr_id}.pdf"' in page
    assert "raw.githubusercontent.com" not in page


def test_the_table_fits_the_terminal(monkeypatch):
    long = Paper(id="l", title="A very long title " * 8, authors=tuple(f"Author {i}" for i in range(9)))
    recs = [Recommendation(long, 0.5, (Reason("K", "An item with a long title " * 5, 0.4),), 1)]
    for width in (60, 80, 120):
        monkeypatch.setenv("COLUMNS", str(width))
        lines = render_recommendations(recs, "table").splitlines()
        assert lines and max(len(line) for line in lines) <= width


def test_terminal_escape_sequences_never_reach_the_table():
    bad = Paper(id="b", title="Title \x1b]0;pwned\x07 [red]markup[/red]")
    text = render_recommendations([Recommendation(bad, 0.5, (), 1)], "table", width=100)
    assert "\x1b" not in text and "\x07" not in text and "[red]markup[/red]" in text


def test_notices_are_one_a_line_and_silent_with_q(tmp_path):
    args = ["reading-list", "--library", str(REPO / "examples" / "library.bib"), "--features", "tfidf", "-n", "2",
            "--format", "csv", "-o", str(tmp_path / "out.csv")]
    quiet = CliRunner().invoke(cli, args)
    assert quiet.exit_code == 0, quiet.output
    lines = quiet.stderr.splitlines()  # one notice a line, each once (a joined line wraps mid-word)
    assert " · " not in quiet.stderr and len(lines) == len(set(lines)) >= 2 and lines[-1].startswith("wrote")
    verbose = CliRunner().invoke(cli, ["-v", *args])
    assert verbose.stderr.strip().count("\n") >= 2
    silent = CliRunner().invoke(cli, ["-q", *args])
    assert silent.stderr == ""


def test_the_page_header_says_what_was_ranked_and_how():
    library = str(REPO / "examples" / "library.bib")
    shipped = CliRunner().invoke(cli, ["-q", "reading-list", "--library", library, "-n", 2, "--format", "html"])
    assert shipped.exit_code == 0, shipped.output
    assert "the bundled ICML 2025 list with the seed abstracts" in shipped.stdout
    assert re.search(r"Model: <b>dense top5 fused with [^<]*collaborative part \(trained on citeulike-a\)",
                     shipped.stdout)
    plain = CliRunner().invoke(cli, ["-q", "reading-list", "--library", library, "-n", 2, "--format", "html",
                                     "--model", "none", "--aggregation", "top5"])
    assert plain.exit_code == 0 and "Model: <b>content only</b>" in plain.stdout
