"""The default corpus (issue 23): the bundled ICML 2025 list, one entry per paper, the 31 seeds on their
titled papers, and a fetched icml2025 that enriches it by id instead of replacing it, with a way back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.corpus.default import default_corpus, enrich_by_id
from recommender.corpus.enrich import enrich_untitled
from recommender.corpus.fetch import FetchSettings, fetch_corpus
from recommender.corpus.readers import _read_seed, load_corpus
from recommender.corpus.venues import BUNDLED_SEEDS, seed_matches
from recommender.formats.bibtex import parse_bibtex
from recommender.items import Paper
from recommender.text import clean_text, title_key
from zotero_bridge.cli.main import cli
from zotero_bridge.render.html_page import presentation

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SAMPLE = SHARED / "fixtures" / "pmlr-v267" / "icml25-sample.bib"
SEED_TRUTH = SHARED / "data" / "icml2025" / "seed_matches.json"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    return tmp_path / "zotrec-data"


@pytest.fixture(scope="module")
def sample_entries() -> list[dict]:
    if not SAMPLE.is_file():
        pytest.skip("../shared/fixtures/pmlr-v267/icml25-sample.bib is not present")
    entries, _ = parse_bibtex(SAMPLE.read_text(encoding="utf-8"), SAMPLE)
    return [entry for entry in entries if entry["ENTRYTYPE"] == "inproceedings"]


def default_papers():
    corpus = default_corpus()
    return load_corpus(corpus.files, enrich_with=corpus.fetched)


def fetch_sample():
    return fetch_corpus("icml2025", [str(SAMPLE)], FetchSettings(sleep=lambda seconds: None))


def seed_ids() -> set[str]:
    """The papers the 31 seed abstracts are, by the shipped match."""
    return set(seed_matches().values())


def test_the_default_list_has_every_paper_once_and_no_untitled_row():
    loaded = default_papers()
    papers = loaded.papers
    assert len(papers) == 3330
    assert sum(p.title_derived for p in papers) == 0
    assert len({p.id for p in papers}) == 3330 and len({title_key(p.title) for p in papers}) == 3330
    assert loaded.enriched == 31 and len(seed_ids()) == 31
    with_abstract = {p.id for p in papers if p.abstract}
    assert with_abstract == seed_ids()
    assert {p.venue for p in papers} == {"ICML 2025"}  # no seed file header ("ICML 2025 论文列表") as a venue


def test_the_shipped_seed_match_is_the_shared_one_paragraph_by_paragraph():
    if not SEED_TRUTH.is_file():
        pytest.skip("../shared/data/icml2025/seed_matches.json is not present")
    truth = json.loads(SEED_TRUTH.read_text(encoding="utf-8"))
    paragraphs = {path.name: _read_seed(path.read_text(encoding="utf-8"), path)[0]
                  for path in sorted(BUNDLED_SEEDS.glob("*.txt"))}
    assert len(truth) == sum(len(p) for p in paragraphs.values()) == 38
    by_id = {p.id: p for p in default_papers().papers}
    for row in truth:
        seed = paragraphs[row["seed_file"]][row["seed_index"]]
        assert seed_matches()[seed.id] == row["paper_id"]
        paper = by_id[row["paper_id"]]
        assert paper.abstract == seed.abstract and title_key(paper.title) == title_key(row["title"])


def test_a_fetch_of_49_papers_enriches_the_list_and_never_shrinks_it(sample_entries):
    report = fetch_sample()
    assert report.papers == 49
    loaded = default_papers()
    papers = {p.id: p for p in loaded.papers}
    assert len(loaded.papers) == 3330 and sum(p.title_derived for p in loaded.papers) == 0
    assert (loaded.fetched, loaded.fetched_enriched, loaded.fetched_added) == (49, 49, 0)
    fetched = {entry["openreview"]: clean_text(entry["abstract"]) for entry in sample_entries}
    assert len(fetched) == 49 and set(fetched) <= set(papers)
    for forum, abstract in fetched.items():
        assert papers[forum].abstract == abstract
        assert papers[forum].metadata["openreview_url"] == f"https://openreview.net/forum?id={forum}"
        assert papers[forum].metadata["pmlr_url"].startswith("https://proceedings.mlr.press/v267/")  # the list's
    assert {p for p, paper in papers.items() if paper.abstract} == set(fetched) | seed_ids()


def test_corpus_info_counts_abstracts_and_what_the_fetch_did():
    runner = CliRunner()
    before = runner.invoke(cli, ["corpus", "info", "--format", "json"])
    assert before.exit_code == 0, before.output
    info = json.loads(before.stdout)[0]
    assert (info["papers"], info["with_abstracts"], info["untitled_matched"]) == (3330, 31, 31)
    assert (info["enriched_by_fetch"], info["added_by_fetch"]) == (0, 0)
    if not SAMPLE.is_file():
        pytest.skip("../shared/fixtures/pmlr-v267/icml25-sample.bib is not present")
    fetched = runner.invoke(cli, ["corpus", "fetch", "icml2025", "--from", str(SAMPLE)])
    assert fetched.exit_code == 0, fetched.output
    assert "The default corpus (the bundled ICML 2025 list with it): 3,330 papers" in fetched.output
    assert "49 enriched by this fetch." in fetched.output
    shown = runner.invoke(cli, ["corpus", "info"])
    assert "papers: 3330\n" in shown.stdout and "enriched by fetch: 49\n" in shown.stdout
    assert "added by fetch: 0\n" in shown.stdout
    with_abstracts = int(shown.stdout.split("with abstracts: ")[1].split("\n")[0])
    assert with_abstracts == len(seed_ids() | {e for e in _sample_forums()})
    stored = runner.invoke(cli, ["corpus", "info", "icml2025"])
    assert "papers: 49\n" in stored.stdout and "enriched by fetch" not in stored.stdout


def _sample_forums() -> set[str]:
    entries, _ = parse_bibtex(SAMPLE.read_text(encoding="utf-8"), SAMPLE)
    return {entry["openreview"] for entry in entries if entry["ENTRYTYPE"] == "inproceedings"}


def test_a_fetched_paper_the_list_lacks_is_added_and_counted(tmp_path):
    rows = [{"id": "zL6ljQvPzZ", "title": "Lightweight Protocols for Distributed Private Quantile Estimation",
             "abstract": "We study quantiles under local privacy.", "openreview_id": "zL6ljQvPzZ"},
            {"id": "new-paper-1", "title": "A Paper Published After the List Was Made",
             "abstract": "Nothing in the bundled list.", "authors": ["A. Person"]}]
    extra = tmp_path / "papers.jsonl"
    extra.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    fetch_corpus("icml2025", [str(extra)], FetchSettings(sleep=lambda seconds: None))
    loaded = default_papers()
    assert len(loaded.papers) == 3331 and (loaded.fetched_enriched, loaded.fetched_added) == (1, 1)
    added = loaded.papers[-1]
    assert added.id == "new-paper-1" and added.abstract == "Nothing in the bundled list."
    info = json.loads(CliRunner().invoke(cli, ["corpus", "info", "--format", "json"]).stdout)[0]
    assert (info["papers"], info["enriched_by_fetch"], info["added_by_fetch"]) == (3331, 1, 1)


def test_corpus_remove_goes_back_to_the_bundled_list(data_dir, tmp_path):
    extra = tmp_path / "papers.jsonl"
    extra.write_text(json.dumps({"id": "zL6ljQvPzZ", "title": "Lightweight Protocols for Distributed Private "
                                 "Quantile Estimation", "abstract": "We study quantiles."}) + "\n", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["corpus", "fetch", "icml2025", "--from", str(extra)]).exit_code == 0
    assert default_corpus().fetched
    removed = runner.invoke(cli, ["corpus", "remove", "icml2025"])
    assert removed.exit_code == 0, removed.output
    assert "Removed the stored corpus 'icml2025' (1 paper, fetched " in removed.output
    assert "ranks the bundled ICML 2025 list alone again" in removed.output
    assert default_corpus().fetched == () and not list((data_dir / "corpora").glob("*.json"))
    loaded = default_papers()
    assert len(loaded.papers) == 3330 and sum(p.abstract is not None for p in loaded.papers) == 31
    again = runner.invoke(cli, ["corpus", "remove", "icml2025"])
    assert again.exit_code == 1 and again.output.startswith("Error: no stored corpus 'icml2025'")
    assert len(again.output.splitlines()) == 1


def test_reading_list_ranks_the_enriched_list(tmp_path):
    extra = tmp_path / "papers.jsonl"
    extra.write_text(json.dumps({"id": "zL6ljQvPzZ", "title": "Lightweight Protocols for Distributed Private "
                                 "Quantile Estimation", "abstract": "Quantile estimation under local "
                                 "differential privacy with lightweight protocols."}) + "\n", encoding="utf-8")
    fetch_corpus("icml2025", [str(extra)], FetchSettings(sleep=lambda seconds: None))
    result = _every_paper_for_a_quantile_library(tmp_path)
    rows = json.loads(result.stdout)
    assert len(rows) == 3330 and len({row["id"] for row in rows}) == 3330
    assert rows[0]["id"] == "zL6ljQvPzZ" and rows[0]["abstract"].startswith("Quantile estimation")
    assert sum(row["abstract"] is not None for row in rows) == 32
    assert "corpus: the bundled ICML 2025 list, 1 paper enriched by the fetched icml2025" in result.stderr
    named = _every_paper_for_a_quantile_library(tmp_path, "--corpus", "icml2025")
    assert json.loads(named.stdout) == rows  # the name is the enriched default, never the 1-paper fetch alone


def test_the_name_icml2025_ranks_the_bundled_list_before_any_fetch(tmp_path):
    result = _every_paper_for_a_quantile_library(tmp_path, "--corpus", "icml2025")
    assert len(json.loads(result.stdout)) == 3330


def _every_paper_for_a_quantile_library(folder, *options):
    """`reading-list -n 0 --format json` (tf-idf, content only) for a 1-item library on private quantiles."""
    library = folder / "library.bib"
    library.write_text("@article{a, title={Private quantile estimation with local differential privacy}}\n",
                       encoding="utf-8")
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(library), "--features", "tfidf",
                                      "--model", "none", "--format", "json", "-n", "0", *options])
    assert result.exit_code == 0, result.output
    return result


def test_a_seed_file_the_match_does_not_know_is_matched_by_its_text_or_kept(tmp_path):
    seed = tmp_path / "my-seeds.txt"
    seed.write_text("My ICML notes\n\nWe present FedECADO, a dynamical system model of federated learning that "
                    "treats the clients' updates as a continuous-time system.\n\n"
                    "Gothic cathedrals and their flying buttresses, a study of medieval masonry.\n",
                    encoding="utf-8")
    corpus = default_corpus()
    loaded = load_corpus([*corpus.files, seed])
    by_title = {p.title: p for p in loaded.papers}
    fed = by_title["FedECADO: A Dynamical System Model of Federated Learning"]
    assert fed.abstract.startswith("We present FedECADO") and fed.metadata["matched_by"] != "known match"
    untitled = [p for p in loaded.papers if p.title_derived]
    assert len(loaded.papers) == 3331 and len(untitled) == 1 and "cathedrals" in untitled[0].abstract
    assert untitled[0].venue == "My ICML notes"


def test_a_known_match_needs_no_text_evidence():
    seed = Paper(id="abs-known", title="Graph", abstract="Molecules as graphs.", title_derived=True)
    listed = Paper(id="p1", title="Graph Neural Networks for Molecules")
    papers, merged = enrich_untitled([seed, listed], known={"abs-known": "p1"})
    assert merged == 1 and papers == [Paper(id="p1", title="Graph Neural Networks for Molecules",
                                            abstract="Molecules as graphs.")]
    assert papers[0].metadata["matched_by"] == "known match"
    assert enrich_untitled([seed, listed], known={}) == ([seed, listed], 0)  # too few titles to guess


def test_enrich_by_id_matches_by_id_openreview_pmlr_id_then_title_and_keeps_the_lists_values():
    listed = [Paper(id="or1", title="First", url="https://openreview.net/forum?id=or1",
                    metadata={"openreview_id": "or1", "pmlr_id": "a25a", "pdf_url": "https://x/a25a.pdf"}),
              Paper(id="pmlr-v267-b25a", title="Second Paper", metadata={"pmlr_id": "b25a"}),
              Paper(id="or3", title="Third $n^{1.5}$ Paper", authors=("C. D",))]
    fetched = [Paper(id="or1", title="First (renamed)", abstract="A1",
                     metadata={"pdf_url": "https://other/a.pdf", "presentation": "oral", "sources": ["bibtex"]}),
               Paper(id="pmlr-v267-b25", title="Second paper", abstract="A2", metadata={"pmlr_id": "b25a"}),
               Paper(id="x9", title="Third n^1.5 Paper", abstract="A3", authors=("Someone Else",)),
               Paper(id="or1-copy", title="First", abstract="again", metadata={"openreview_id": "or1"}),
               Paper(id="new", title="Not Listed", abstract="A4")]
    result = enrich_by_id(listed, fetched)
    assert (result.enriched, result.added, result.repeated) == (3, 1, 1)
    first, second, third, new = result.papers
    assert (first.title, first.abstract, first.metadata["pdf_url"]) == ("First", "A1", "https://x/a25a.pdf")
    assert first.metadata["presentation"] == "oral" and "sources" not in first.metadata
    assert (second.id, second.abstract) == ("pmlr-v267-b25a", "A2")
    assert (third.abstract, third.authors) == ("A3", ("C. D",))
    assert new.id == "new"


def test_badges_come_only_from_data_that_says_so():
    link_only = {"icml_virtual_url": "https://icml.cc/virtual/2025/poster/44298"}
    assert presentation(Paper(id="a", title="A", metadata=link_only)) == ""
    assert presentation(Paper(id="b", title="B", metadata={**link_only, "presentation": "oral"})) == "Oral"
    assert presentation(Paper(id="c", title="C", metadata={"status": "Spotlight"})) == "Spotlight"
    assert presentation(Paper(id="d", title="D", metadata={"presentation": "position"})) == "Position"
    assert all(presentation(p) == "" for p in default_papers().papers)  # the bundled list says nothing of it


def test_presentation_types_from_openreview_reach_the_default_lists_badges(sample_entries):
    from recommender.corpus.fetch import OpenReviewLogin
    from recommender.items import Recommendation
    from tests.fake_openreview import FakeConference
    from tests.test_corpus_real import notes_for, settings
    from zotero_bridge.render.reading_list import render_recommendations

    notes = notes_for(sample_entries)
    with FakeConference(notes, SAMPLE.read_bytes(), accounts={"me@example.org": "secret"}) as server:
        fetch_corpus("icml2025", [f"{server.url}/icml25.bib", server.url], settings(server),
                     login=OpenReviewLogin("me@example.org", "secret"))
    papers = {p.id: p for p in default_papers().papers}
    typed = {i: p.metadata["presentation"] for i, p in papers.items() if p.metadata.get("presentation")}
    assert len(typed) == 49 and typed[notes[6]["id"]] == "oral"
    oral = papers[notes[6]["id"]]
    untyped = next(p for p in papers.values() if "presentation" not in p.metadata and p.metadata.get("icml_virtual_url"))
    page = render_recommendations([Recommendation(oral, 1.0, (), 1), Recommendation(untyped, 0.5, (), 2)], "html")
    assert page.count('<span class="tag">Oral</span>') == 1 and '<span class="tag">Poster</span>' not in page


def test_a_damaged_fetch_is_one_line_that_names_the_way_back(data_dir, tmp_path):
    (data_dir / "corpora").mkdir(parents=True)
    (data_dir / "corpora" / "icml2025.json").write_text('{"format": "zotrec-cor', encoding="utf-8")
    library = tmp_path / "library.bib"
    library.write_text("@article{a, title={Graph networks for molecules}}\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["reading-list", "--library", str(library), "--features", "tfidf"])
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1
    assert "icml2025.json:1: not valid JSON" in result.output
    assert "`zotrec corpus remove icml2025` goes back to the bundled list" in result.output
    assert runner.invoke(cli, ["corpus", "remove", "icml2025"]).exit_code == 0
    assert runner.invoke(cli, ["reading-list", "--library", str(library), "--features", "tfidf"]).exit_code == 0
