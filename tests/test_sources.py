"""`zotrec sources`: what a library already reads, as ready-to-paste `--corpus` options with their counts
(recommender/corpus/suggest.py), and `daily --corpus auto`, which follows the top of that list.

The item shapes are Zotero's own: the arXiv.org translator (zotero/translators arXiv.org.js, its test cases)
writes Extra 'arXiv:1402.1516 [math.SG]', archiveID 'arXiv:1402.1516', DOI 10.48550/arXiv.1402.1516 and tags
the primary category; published arXiv papers keep publicationTitle and ISSN ('0004-637X, 1538-4357', or
'00358711' without the hyphen) beside 'arXiv:astro-ph/0603274' in Extra.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from recommender.corpus.suggest import SourceSuggestion, arxiv_categories, auto_corpora, issns, suggest_sources
from recommender.items import LibraryItem
from tests.fake_arxiv import FakeArxiv, paper
from tests.zotero_db import ZoteroDatabase
from zotero_bridge.cli.main import cli


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    monkeypatch.setenv("ZOTREC_ARXIV_PAUSE_S", "0")
    return tmp_path / "zotrec-data"


def item(key: str, **fields) -> LibraryItem:
    return LibraryItem(key=key, title=fields.pop("title", f"Paper {key}"), **fields)


def test_journals_are_grouped_by_issn_and_title_with_their_counts():
    items = [item("n1", publication="Nature", issn="0028-0836"), item("n2", publication="Nature", issn="1476-4687"),
             item("n3", publication="Nature"),  # no ISSN on this one: the title finds the journal
             *[item(f"r{n}", publication="Radiology", issn="0033-8419, 1527-1315") for n in range(4)],
             item("m1", publication="Monthly Notices of the Royal Astronomical Society", issn="00358711"),
             item("x1", publication="A Local Newsletter"), item("x2", publication="a local newsletter"),
             item("s1", publication="Science")]  # no ISSN, but a journal whose feed zotrec knows by name
    found = suggest_sources(items)
    assert [(s.option, s.count) for s in found] == [
        ("openalex:issn:0033-8419", 4), ("feed:https://www.nature.com/nature.rss", 3),
        ("", 2), ("openalex:issn:0035-8711", 1),
        ("feed:https://www.science.org/action/showFeed?type=etoc&feed=rss&jc=science", 1)]
    assert found[0].label == "Radiology (ISSN 0033-8419)" and found[0].kind == "journal"
    assert found[2].label == "A Local Newsletter (no ISSN in the library)"
    assert issns("0004-637X, 1538-4357") == ["0004-637X", "1538-4357"] and issns("") == []


def test_arxiv_categories_as_zotero_s_translator_writes_them():
    new = item("a1", extra="arXiv:1402.1516 [math.SG]", url="http://arxiv.org/abs/1402.1516",
               doi="10.48550/arXiv.1402.1516", tags=("math.SG", "Mathematical Physics"))
    old = item("a2", extra="arXiv:astro-ph/0603274", url="http://arxiv.org/abs/astro-ph/0603274",
               publication="The Astrophysical Journal", issn="0004-637X, 1538-4357")
    tagged = item("a3", url="https://arxiv.org/abs/2501.00001", tags=("cs.LG", "stat.ML", "Machine learning"))
    not_arxiv = item("j1", tags=("cs.LG",), publication="Journal of Things", issn="1234-5678")
    assert arxiv_categories(new) == {"math.SG"}
    assert arxiv_categories(old) == {"astro-ph"}
    assert arxiv_categories(tagged) == {"cs.LG", "stat.ML"}
    assert arxiv_categories(not_arxiv) == set()
    options = {s.option: s.count for s in suggest_sources([new, old, tagged, not_arxiv])}
    assert options == {"arxiv:math.SG": 1, "arxiv:astro-ph": 1, "arxiv:cs.LG": 1, "arxiv:stat.ML": 1,
                       "openalex:issn:0004-637X": 1, "openalex:issn:1234-5678": 1}


def test_preprint_servers_by_subject_and_never_as_journals():
    items = [item("b1", url="https://www.biorxiv.org/content/10.1101/2024.01.01.123456v1", publication="bioRxiv",
                  tags=("Neuroscience",)),
             item("b2", url="https://www.biorxiv.org/content/10.1101/2024.02.02.654321v2", tags=("neuroscience",)),
             item("m1", url="https://www.medrxiv.org/content/10.1101/2024.03.03.24303333v1", publication="medRxiv",
                  tags=("Radiology and Imaging",)),
             item("p1", publication="arXiv:2101.00001 [cs]")]
    assert [(s.option, s.label, s.count) for s in suggest_sources(items)] == [
        ("biorxiv:neuroscience", "bioRxiv Neuroscience", 2),
        ("medrxiv:radiology-and-imaging", "medRxiv Radiology and Imaging", 1)]


def test_auto_follows_the_top_suggestions_of_the_kinds_it_can_fetch():
    found = [SourceSuggestion("openalex:issn:1", "J", 9, "journal"), SourceSuggestion("arxiv:cs.LG", "a", 5, "arxiv"),
             SourceSuggestion("arxiv:stat.ML", "b", 2, "arxiv"), SourceSuggestion("arxiv:cs.CL", "c", 1, "arxiv")]
    def only(*prefixes):
        return lambda option: option.startswith(prefixes)

    assert auto_corpora(found, only("arxiv:"), top=2) == ["arxiv:cs.LG,stat.ML"]
    assert auto_corpora(found, only("arxiv:", "openalex:"), top=2) == ["openalex:issn:1", "arxiv:cs.LG"]
    assert auto_corpora(found, only("arxiv:", "openalex:"), top=3) == ["openalex:issn:1", "arxiv:cs.LG,stat.ML"]
    assert auto_corpora(found, only("biorxiv:")) == []


def library(path):
    """A zotero.sqlite whose items come from three journals (5, 3 and 2 items), two arXiv categories and a
    journal without an ISSN."""
    db = ZoteroDatabase(path, seed=38)
    for journal, issn, count in (("Radiology", "0033-8419", 5), ("European Radiology", "0938-7994", 3),
                                 ("Nature", "1476-4687", 2)):
        for number in range(count):
            db.add_item("journalArticle", {"title": f"{journal} finding {number}", "publicationTitle": journal,
                                           "ISSN": issn, "abstractNote": "Imaging of the chest."})
    db.add_item("conferencePaper", {"title": "Proceedings paper", "proceedingsTitle": "Radiology",
                                    "ISSN": "0033-8419"})
    for number, category in enumerate(["cs.CV", "cs.CV", "eess.IV"]):
        arxiv_id = f"2501.0000{number}"
        db.add_item("preprint", {"title": f"Segmentation preprint {number}", "repository": "arXiv",
                                 "archiveID": f"arXiv:{arxiv_id}", "url": f"http://arxiv.org/abs/{arxiv_id}",
                                 "extra": f"arXiv:{arxiv_id} [{category}]", "DOI": f"10.48550/arXiv.{arxiv_id}"})
    db.add_item("journalArticle", {"title": "A hospital bulletin note", "publicationTitle": "Hospital Bulletin"})
    db.close()
    return path


def test_the_command_proposes_the_library_s_journals_with_the_right_counts(tmp_path):
    database = library(tmp_path / "zotero.sqlite")
    result = CliRunner().invoke(cli, ["sources", "--library", str(database)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("# What 15 library items come from")
    body = [" ".join(line.split()) for line in lines[1:]]
    assert body == [
        "--corpus openalex:issn:0033-8419 # Radiology (ISSN 0033-8419): 6 items",
        "--corpus openalex:issn:0938-7994 # European Radiology (ISSN 0938-7994): 3 items",
        "--corpus arxiv:cs.CV # arXiv cs.CV: 2 items",
        "--corpus https://www.nature.com/nature.rss # Nature (ISSN 1476-4687): 2 items".replace(
            "--corpus https", "--corpus feed:https"),
        "--corpus arxiv:eess.IV # arXiv eess.IV: 1 item",
        "# Hospital Bulletin (no ISSN in the library): 1 item (add its ISSN to an item to follow it)"]
    rows = json.loads(CliRunner().invoke(cli, ["sources", "--library", str(database), "--format", "json",
                                               "-n", "2"]).stdout)
    assert rows == [{"option": "openalex:issn:0033-8419", "label": "Radiology (ISSN 0033-8419)", "count": 6,
                     "kind": "journal"},
                    {"option": "openalex:issn:0938-7994", "label": "European Radiology (ISSN 0938-7994)",
                     "count": 3, "kind": "journal"}]


def test_every_option_pastes_back_into_the_shell_as_one_word(tmp_path):
    import shlex

    database = library(tmp_path / "zotero.sqlite")
    out = CliRunner().invoke(cli, ["sources", "--library", str(database)]).stdout
    for line in out.splitlines():
        if line.startswith("--corpus"):
            words = shlex.split(line, comments=True)
            assert words[0] == "--corpus" and len(words) == 2


def test_daily_corpus_auto_follows_the_library_s_arxiv_categories(tmp_path):
    fake = FakeArxiv()
    url = fake.start()
    try:
        now = datetime.now(UTC)
        fake.add(*[paper(n, now - timedelta(hours=2 + n % 10), categories=("cs.CV",),
                         title=f"Chest image segmentation study {n}", abstract=f"Segmentation of chest images, {n}.")
                   for n in range(11, 16)])
        db = ZoteroDatabase(tmp_path / "zotero.sqlite", seed=39)  # an arXiv reader: only arXiv items
        for number, category in enumerate(["cs.CV", "cs.CV", "eess.IV"]):
            db.add_item("preprint", {"title": f"Segmentation preprint {number}", "repository": "arXiv",
                                     "extra": f"arXiv:2501.0000{number} [{category}]"})
        db.close()
        database = tmp_path / "zotero.sqlite"
        result = CliRunner().invoke(cli, ["daily", "--library", str(database), "--corpus", "auto", "--from", url,
                                          "--features", "tfidf", "-n", "3", "--atom", str(tmp_path / "day.xml")])
        assert result.exit_code == 0, result.output
        assert "--corpus auto: arxiv:cs.CV,eess.IV" in result.output
        assert {term for request in fake.requests for term in
                str(request.get("search_query", "")).split(" OR ")} >= {"cat:cs.CV"}
        assert (tmp_path / "day.xml").read_text(encoding="utf-8").count("<entry>") == 3
    finally:
        fake.stop()


def test_export_files_keep_the_journal_and_issn_sources_needs(tmp_path):
    from zotero_bridge.sources.files import read_library_file
    from zotero_bridge.sources.zotero_json import item_from_zotero_json

    bib = tmp_path / "lib.bib"
    bib.write_text("@article{a, title={Chest CT}, journal={Radiology}, issn={0033-8419}}\n", encoding="utf-8")
    ris = tmp_path / "lib.ris"
    ris.write_text("TY  - JOUR\nTI  - Chest CT\nJO  - Radiology\nSN  - 0033-8419\nER  - \n", encoding="utf-8")
    csl = tmp_path / "lib.json"
    csl.write_text(json.dumps([{"id": "c", "type": "article-journal", "title": "Chest CT",
                                "container-title": "Radiology", "ISSN": "0033-8419"}]), encoding="utf-8")
    for path in (bib, ris, csl):
        [found], _ = read_library_file(path)
        assert (found.publication, found.issn) == ("Radiology", "0033-8419"), path.suffix
    web = item_from_zotero_json({"key": "K", "itemType": "conferencePaper", "title": "T",
                                 "proceedingsTitle": "Proceedings of MICCAI", "ISSN": "0302-9743"}, where="api")
    assert (web.publication, web.issn) == ("Proceedings of MICCAI", "0302-9743")
