"""arXiv papers land in Zotero as preprints (issue 38): item type `preprint`, repository "arXiv", archive ID
`arXiv:ID`, the full date, the DOI where given — every field one Zotero's schema.json (../shared) gives the
preprint type; and zotrec's own earlier conference-paper items of an arXiv corpus, untouched since, are made
preprints, as the plan says (`sync --dry-run`), while one the user changed stays as it is."""

from __future__ import annotations

import json

from recommender.corpus.stream import fetch_stream
from recommender.corpus.http import FetchSettings
from recommender.items import Paper, Recommendation
from recommender.corpus.readers import load_corpus
from recommender.retry import RetryPolicy
from recommender.scoring.ranking import Recommender
from tests.conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from tests.fake_arxiv import FakeArxiv
from tests.test_arxiv_rolling import SPEC, START, corpus_id, data_dir, day_papers, members, sync  # noqa: F401
from zotero_bridge.sources import SourceOptions
from zotero_bridge.sync.run import SyncRequest, render_sync_report, run_sync
from zotero_bridge.zotero_api import writer
from zotero_bridge.zotero_api.writeback import TO_PREPRINT, paper_item

ALWAYS = {"key", "itemType", "creators", "tags", "collections", "relations"}


def schema_fields(shared, item_type: str) -> set[str]:
    schema = json.loads((shared / "fixtures" / "zotero-schema" / "schema.json").read_text(encoding="utf-8"))
    [found] = [t for t in schema["itemTypes"] if t["itemType"] == item_type]
    return {f["field"] for f in found["fields"]}


def arxiv_rec(doi=None) -> Recommendation:
    paper = Paper(id="arxiv:2501.00042", title="A preprint", abstract="Text.", authors=["Jane Doe"],
                  url="https://arxiv.org/abs/2501.00042", doi=doi, year=2025, venue="arXiv cs.LG",
                  metadata={"arxiv_id": "2501.00042", "published": "2025-01-02T03:04:05+00:00"})
    return Recommendation(paper=paper, score=0.5, rank=1)


def test_an_arxiv_paper_is_a_preprint_with_zoteros_fields(shared):
    item = paper_item(arxiv_rec(doi="10.1000/j.x.2025.1"), "COLL0001", "ABCD2345")
    assert item["itemType"] == "preprint" and item["repository"] == "arXiv"
    assert item["archiveID"] == "arXiv:2501.00042" and item["date"] == "2025-01-02"
    assert item["DOI"] == "10.1000/j.x.2025.1" and item["extra"].startswith("zotrec: arxiv:2501.00042")
    assert set(item) - ALWAYS <= schema_fields(shared, "preprint")
    assert "conferenceName" not in item and "proceedingsTitle" not in item
    assert paper_item(arxiv_rec(), "COLL0001", "ABCD2345")["DOI"] == ""  # only where given


def test_a_conference_paper_stays_one(shared):
    paper = Paper(id="icml2025:abc", title="An ICML paper", abstract="", authors=["A B"], venue="ICML 2025")
    item = paper_item(Recommendation(paper=paper, score=0.1, rank=1), "COLL0001", "ABCD2345")
    assert item["itemType"] == "conferencePaper" and set(item) - ALWAYS <= schema_fields(shared, "conferencePaper")


def as_before(rec, collection_key, key):
    """The item an earlier zotrec wrote for an arXiv paper: a conference paper of 'arXiv cs.LG', dated by year."""
    item = paper_item(rec, collection_key, key)
    for name in ("repository", "archiveID", "libraryCatalog"):
        item.pop(name)
    return {**item, "itemType": "conferencePaper", "conferenceName": rec.paper.venue, "proceedingsTitle": "",
            "date": str(rec.paper.year)}


def test_zotrecs_own_conference_papers_of_arxiv_become_preprints(zotero_server, data_dir, monkeypatch):  # noqa: F811
    arxiv = FakeArxiv()
    url = arxiv.start()
    try:
        arxiv.add(*day_papers(0))
        fetch_stream(SPEC, [url], FetchSettings(sleep=lambda s: None, page_size=50), days=2, now=START)
        with monkeypatch.context() as old:
            old.setattr(writer, "paper_item", as_before)
            sync(zotero_server)
        before = members(zotero_server)
        assert {d["itemType"] for d in before.values()} == {"conferencePaper"}
        library = zotero_server.library("user", ZOTERO_USER_ID)
        touched, data = next(iter(before.items()))  # the user tags one: it is theirs now
        zotero_server.edit_item(library, touched, tags=[*data["tags"], {"tag": "mine"}])
        options = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY,
                                endpoint=zotero_server.url,
                                extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
        planned = run_sync(SyncRequest(Recommender(load_corpus(["arxiv:cs.LG"]).papers), options,
                                       "Recommended · arXiv cs.LG", top_n=4, dry_run=True))
        text = render_sync_report(planned, "table")
        retyped = text.count(TO_PREPRINT)  # the earlier picks still in the list, the user's tagged one apart
        assert retyped >= 2 and f"{retyped} made preprints" in text, text
        assert members(zotero_server) == before | {touched: members(zotero_server)[touched]}  # dry run: unchanged
        report = sync(zotero_server)
        assert report.result.retyped == retyped
        after = members(zotero_server)
        assert after[touched]["itemType"] == "conferencePaper"  # the user's now: left as it is
        for key, item in after.items():
            if key == touched:
                continue
            assert item["itemType"] == "preprint" and item["repository"] == "arXiv"
            assert item["archiveID"] == "arXiv:" + corpus_id(item).removeprefix("arxiv:")
            assert len(item["date"]) == 10 and "conferenceName" not in item and "proceedingsTitle" not in item
        assert not sync(zotero_server).plan.needs_writes  # fixed once: the next run has nothing to do
    finally:
        arxiv.stop()
