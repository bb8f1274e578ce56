"""The fate rules of zotero_bridge/feedback/fates.py, one case per rule and the order between them, and the
recommender's use of them (recommender/scoring/feedback.py)."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.items import Paper, Reason, Recommendation
from recommender.scoring.feedback import DENSE_LINEAR_WEIGHT, LINEAR_WEIGHT, Feedback, apply_feedback
from zotero_bridge.feedback.fates import LibraryView, fate_of, fingerprint, lift_children
from zotero_bridge.feedback.learn import feedback_for
from zotero_bridge.feedback.memory import RETIRED, Memory, Remembered

OURS, THESIS = "OURSCOLL", "THESIS01"
WRITTEN = {"key": "ITEM0001", "itemType": "conferencePaper", "title": "A paper", "abstractNote": "Text.",
           "creators": [{"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}],
           "tags": [{"tag": "zotrec"}], "collections": [OURS], "url": "https://x.org/1", "DOI": ""}
PAPER = Remembered("icml/1", "A paper", "ITEM0001", OURS, fingerprint(WRITTEN))
NOTE = {"key": "NOTE0001", "itemType": "note", "parentItem": "ITEM0001", "tags": [{"tag": "zotrec"}]}


def view(changes=None, children=(), deleted=(), drop=False):
    items = {} if drop else {"ITEM0001": {**WRITTEN, **(changes or {})}}
    return LibraryView(items, lift_children([NOTE, *children]), {OURS: "Recommended", THESIS: "Thesis/Ch 2"},
                       frozenset(deleted))


@pytest.mark.parametrize("changes,children,fate,why", [
    ({}, (), "untouched", ""),
    ({"deleted": 1}, (), "dismissed", "you moved it to the trash"),
    ({"deleted": 1, "tags": [{"tag": "zotrec"}, {"tag": "good"}]}, (), "dismissed", "you moved it to the trash"),
    ({"tags": [{"tag": "zotrec"}, {"tag": "to-read"}]}, (), "kept", "you tagged it 'to-read'"),
    ({"tags": [{"tag": "to-read"}], "collections": []}, (), "kept", "you tagged it 'to-read'"),
    ({"collections": [THESIS]}, (), "kept", "you filed it in 'Thesis/Ch 2'"),
    ({"collections": [OURS, THESIS]}, (), "kept", "you filed it in 'Thesis/Ch 2'"),
    ({}, ({"key": "N2", "itemType": "note", "parentItem": "ITEM0001", "tags": []},), "kept", "you added a note"),
    ({}, ({"key": "N2", "itemType": "note", "parentItem": "ITEM0001", "tags": [], "deleted": 1},), "untouched", ""),
    ({}, ({"key": "A1", "itemType": "attachment", "parentItem": "ITEM0001", "tags": []},
          {"key": "H1", "itemType": "annotation", "parentItem": "A1", "tags": []}),
     "kept", "you added an annotation and an attachment"),
    ({"title": "My better title"}, (), "kept", "you edited it"),
    ({"creators": []}, (), "kept", "you edited it"),
    ({"collections": []}, (), "dismissed", "you removed it from 'Recommended'"),
])
def test_each_rule(changes, children, fate, why):
    found = fate_of(PAPER, view(changes, children), "Recommended")
    assert (found.fate, found.why) == (fate, why)


def test_deleted_for_good_only_on_the_sources_word():
    assert fate_of(PAPER, view(drop=True, deleted={"ITEM0001"})).why == "you deleted it"
    kept = Remembered(**{**PAPER.__dict__, "fate": "kept", "why": "you tagged it 'x'"})
    assert fate_of(kept, view(drop=True)) == kept  # missing from one read (not synced, a short page): it stays
    assert fate_of(PAPER, view(drop=True, deleted={"OTHER001"})) == PAPER


def test_zotrec_taking_it_out_itself_is_not_a_dismissal():
    retired = Remembered(**{**PAPER.__dict__, "status": RETIRED})
    assert fate_of(retired, view({"collections": []})).fate == "untouched"


def test_a_child_seen_once_keeps_counting():
    """The Web API shows a new child only in the run after it was added; the memory remembers it."""
    seen = fate_of(PAPER, view({}, ({"key": "N2", "itemType": "note", "parentItem": "ITEM0001", "tags": []},)))
    assert fate_of(seen, view()).fate == "kept"


def test_feedback_lists_and_staleness():
    fates = {"a": Remembered("a", "A", "K1", OURS, "", fate="kept", why="you tagged it 'x'"),
             "b": Remembered("b", "B", "K2", OURS, "", fate="dismissed", why="you moved it to the trash"),
             "c": Remembered("c", "C", "K3", OURS, "", fate="dismissed", why="you removed it from 'R'"),
             "d": Remembered("d", "D", "K4", OURS, "", untouched_runs=3),
             "e": Remembered("e", "E", "K5", OURS, "", untouched_runs=2)}
    feedback = feedback_for(fates)
    assert feedback.kept == {"a"} and feedback.kept_items == {"K1"}
    assert feedback.dismissed == {"b": "trashed", "c": "removed"} and feedback.stale == {"d"}


def test_apply_feedback_drops_dismissed_and_learns():
    rng = np.random.default_rng(0)
    rows = rng.random((200, 16))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    papers = [Paper(f"p{i}", f"Paper {i}") for i in range(200)]
    recs = [Recommendation(p, float(rows[i] @ rows[0]), (Reason("K1", "Kept one", 0.5),), i + 1)
            for i, p in enumerate(papers)]
    feedback = Feedback(kept=frozenset({"p1"}), dismissed={"p2": "removed"}, stale=frozenset({"p3"}),
                        kept_items=frozenset({"K1"}), titles={"p2": "Paper 2"})
    out = apply_feedback(recs, [p.id for p in papers], rows, feedback, profile_rows=rows[[0, 1]], top_n=20)
    ids = [r.paper.id for r in out]
    assert {"p1", "p2", "p3"}.isdisjoint(ids) and len(ids) == 20 and [r.rank for r in out] == list(range(1, 21))
    assert all("like 'Kept one', which you kept" in r.feedback for r in out)
    everything = [r.paper.id for r in apply_feedback(recs, [p.id for p in papers], rows, feedback,
                                                     profile_rows=rows[[0, 1]], weight=LINEAR_WEIGHT)]
    near = [f"p{i}" for i in np.argsort(-(rows @ rows[2]))[4:24]]  # the dismissed paper's neighbours
    before = np.mean([[r.paper.id for r in recs if r.paper.id not in ("p1", "p2", "p3")].index(n) for n in near])
    assert np.mean([everything.index(n) for n in near]) > before  # ranked lower once it was dismissed
    assert apply_feedback(recs, [p.id for p in papers], rows, Feedback(), top_n=5) == recs[:5]
    lowered = [r for r in apply_feedback(recs, [p.id for p in papers], rows, feedback, profile_rows=rows[[0, 1]],
                                         weight=LINEAR_WEIGHT)
               if r.paper.id in near and any("less like 'Paper 2', which you removed" in n for n in r.feedback)]
    assert lowered  # the reasons name the dismissed paper that moved its neighbours down


def test_the_linear_models_weight_follows_the_features():
    """Dense rows (scored by the fused score) get the dense simulation's weight, tf-idf rows the tf-idf one."""
    from scipy import sparse

    rng = np.random.default_rng(1)
    rows = rng.random((150, 12))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    papers = [Paper(f"p{i}", f"Paper {i}") for i in range(150)]
    recs = [Recommendation(p, float(rows[i] @ rows[0]), (), i + 1) for i, p in enumerate(papers)]
    feedback = Feedback(kept=frozenset({"p1"}), dismissed={"p2": "removed", "p5": "trashed"})
    ids = [p.id for p in papers]

    def scores(features, **weight):
        out = apply_feedback(recs, ids, features, feedback, profile_rows=features[[0, 1]], **weight)
        return [round(r.score, 9) for r in out]

    assert scores(rows) == scores(rows, weight=DENSE_LINEAR_WEIGHT) != scores(rows, weight=LINEAR_WEIGHT)
    sparse_rows = sparse.csr_matrix(rows)
    assert scores(sparse_rows) == scores(sparse_rows, weight=LINEAR_WEIGHT) != scores(sparse_rows,
                                                                                      weight=DENSE_LINEAR_WEIGHT)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_a_liked_papers_twins_are_never_its_negatives(kind, monkeypatch):
    """The same paper listed twice (p11: the liked p10's title, its row at cosine ~0.8; p12: another title, a
    near-identical row) is kept out of the linear model's random negatives, which would cancel the like
    (docs/evaluation-history.md, issue 39 round 8); so liking p10 moves both up, with every seed."""
    from scipy import sparse

    from recommender.scoring import feedback as module
    from recommender.scoring.owned import CorpusKeys

    rng = np.random.default_rng(3)
    rows = rng.random((60, 16))
    rows[11] = rows[10] + 0.45 * rng.standard_normal(16)
    rows[12] = rows[10] + 0.02 * rng.standard_normal(16)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    assert 0.7 < rows[10] @ rows[11] < module.TWIN_COSINE < rows[10] @ rows[12]
    papers = [Paper(f"p{i}", "Twins listed twice" if i in (10, 11) else f"Paper {i}") for i in range(60)]
    features = rows if kind == "dense" else sparse.csr_matrix(rows)
    scores = rows @ rows[[0, 1]].mean(axis=0)
    order = np.argsort(-scores, kind="stable")
    recs = [Recommendation(papers[i], float(scores[i]), (), rank) for rank, i in enumerate(order, start=1)]
    drawn, sample = [], module.negative_sample
    monkeypatch.setattr(module, "negative_sample", lambda *args: drawn.append(sample(*args)) or drawn[-1])
    ids = [p.id for p in papers]
    before = [r.paper.id for r in recs if r.paper.id != "p10"]
    for seed in range(8):
        after = [r.paper.id for r in apply_feedback(recs, ids, features, Feedback(liked=frozenset({"p10"})),
                                                    profile_rows=features[[0, 1]], seed=seed,
                                                    corpus_keys=CorpusKeys(papers))]
        assert not {11, 12} & set(drawn[-1].tolist())
        assert after.index("p11") < before.index("p11") and after.index("p12") < before.index("p12")


@pytest.mark.parametrize("kind", ["dense", "tfidf"])
def test_a_liked_papers_nearest_papers_are_never_its_negatives(kind, monkeypatch):
    """The papers most like a liked one are what "More like this" asks for: none of its NEAREST_KEPT_OUT
    nearest is drawn as a random negative (drawn, they cancelled the like on a small corpus), with every seed."""
    from scipy import sparse

    from recommender.scoring import feedback as module

    rng = np.random.default_rng(5)
    rows = rng.random((60, 16))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    papers = [Paper(f"p{i}", f"Paper {i}") for i in range(60)]
    features = rows if kind == "dense" else sparse.csr_matrix(rows)
    scores = rows @ rows[[0, 1]].mean(axis=0)
    order = np.argsort(-scores, kind="stable")
    recs = [Recommendation(papers[i], float(scores[i]), (), rank) for rank, i in enumerate(order, start=1)]
    nearest = set(np.argsort(-(rows @ rows[10]), kind="stable")[1: module.NEAREST_KEPT_OUT + 1].tolist())
    drawn, sample = [], module.negative_sample
    monkeypatch.setattr(module, "negative_sample", lambda *args: drawn.append(sample(*args)) or drawn[-1])
    for seed in range(8):
        apply_feedback(recs, [p.id for p in papers], features, Feedback(liked=frozenset({"p10"})),
                       profile_rows=features[[0, 1]], seed=seed)
        assert len(drawn[-1]) and not nearest & set(drawn[-1].tolist())


def test_the_memory_file_is_private_and_atomic(tmp_path):
    with Memory(tmp_path / "h.sqlite") as memory:
        run = memory.record_run("user:1", "R", OURS, 5, [], [PAPER], [])
        assert memory.papers("user:1")["icml/1"] == PAPER and memory.runs("user:1")[0][0] == run
        assert (tmp_path / "h.sqlite").stat().st_mode & 0o777 == 0o600
        with pytest.raises(Exception):
            memory.record_run("user:1", "R", OURS, 6, [], [PAPER, None], [])  # fails half way
        assert len(memory.runs("user:1")) == 1  # nothing of the failed run was kept


def test_a_damaged_memory_is_one_clear_line(tmp_path):
    from zotero_bridge.errors import BridgeError

    (tmp_path / "h.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x01" * 200)
    with pytest.raises(BridgeError, match="history is damaged.*move it away"):
        Memory(tmp_path / "h.sqlite")
