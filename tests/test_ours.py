"""One rule for "is this zotrec's item" (zotero_bridge/zotero_api/ours.py): the zotrec tag and the Extra line
`zotrec: <corpus id>`. The sync's library read, the planner, the fates and reading-list all use it, so a paper the
user tagged 'zotrec' themselves is theirs everywhere: it is in the profile sync learns from, as in reading-list."""

from __future__ import annotations

import pytest

from recommender.items import LibraryItem
from recommender.retry import RetryPolicy
from recommender.scoring.ranking import Recommender
from zotero_bridge.sources import SourceOptions
from zotero_bridge.sync.run import SyncRequest, local_transport, run_sync
from zotero_bridge.zotero_api.ours import corpus_id_of, is_our_note, is_ours, is_ours_item

from .test_local_sync import NAME, seeded
from .test_sync import corpus_file, corpus_rows, papers  # noqa: F401 (the corpus fixtures)

TAG, EXTRA = [{"tag": "zotrec"}], "zotrec: icml2025/007 score=0.5000"


@pytest.mark.parametrize("data,ours", [
    ({"tags": TAG, "extra": EXTRA}, True),
    ({"tags": [*TAG, {"tag": "to-read"}], "extra": "DOI: x\n" + EXTRA}, True),
    ({"tags": TAG, "extra": ""}, False),  # the user's own tag
    ({"tags": [], "extra": EXTRA}, False),  # a pasted Extra line
    ({"tags": ["zotrec"], "extra": EXTRA}, True),  # tags as plain names
])
def test_the_rule(data, ours):
    assert is_ours(data) is ours
    item = LibraryItem(key="K", title="T", tags=tuple(t if isinstance(t, str) else t["tag"] for t in data["tags"]),
                       extra=data["extra"])
    assert is_ours_item(item) is ours


def test_the_corpus_id_and_the_note():
    assert corpus_id_of({"extra": EXTRA}) == "icml2025/007" and corpus_id_of({"extra": "zotrec"}) == ""
    assert is_our_note({"itemType": "note", "tags": TAG}) and not is_our_note({"itemType": "note", "tags": []})


def test_a_paper_the_user_tagged_zotrec_is_in_the_profile_sync_learns_from(monkeypatch, papers):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    desktop = seeded()
    try:
        title = corpus_rows()[5]["title"].split(" (")[0] + ", a survey"  # close to the corpus: it gives reasons
        desktop.add_item(desktop.library(), title=title, abstractNote=corpus_rows()[5]["abstract"], tags=TAG)
        options = SourceOptions(extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
        report = run_sync(SyncRequest(Recommender(papers), options, NAME, top_n=10, dry_run=True,
                                      transport=local_transport(desktop.url)))
    finally:
        desktop.stop()
    reasons = {reason.item_title for rec in report.recommendations for reason in rec.reasons}
    assert title in reasons
