"""Libraries in a script MiniLM cannot read (issue 33): one warning naming how many items, every Chinese corpus
paper kept, and Chinese items matched on their character pairs (recommender/scoring/unread.py), not on rows of
[UNK]. The library is the reported one's shape: a zotero.sqlite with 8 of 12 titles in Chinese."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import sparse

from recommender.scoring.aggregation import block_values, reasons_for
from recommender.scoring.match import CALIBRATIONS, match_percent
from recommender.scoring.unread import Unread, on_dense_scale
from recommender.text import title_key
from tests import zotero_db
from tests.test_scripts import chinese_papers

ICML = Path(__file__).resolve().parents[1] / "recommender" / "data" / "icml2025.jsonl"


def _old_title_key(title: str) -> str:
    """title_key before issue 33: ASCII letters and digits only."""
    from recommender.text import clean_text

    folded = unicodedata.normalize("NFKD", clean_text(title)).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]+", "", folded.lower())


def test_title_keys_keep_chinese_and_cyrillic_letters_and_leave_latin_titles_alone():
    titles = [paper["title_zh"] for paper in chinese_papers()]
    assert len({title_key(title) for title in titles}) == len(titles)  # before: most were the one key ""
    assert title_key("Обучение с подкреплением") == "обучениесподкреплением"
    for title in ("Søren's naïve façade: $O(n^{1.5})$ α-divergence bounds", "Attention Is All You Need",
                  "Ünïcödé — Schrödinger's β-VAE", "{B}ayesian \\emph{deep} learning"):
        assert title_key(title) == _old_title_key(title)


def test_the_dense_stand_in_of_a_tfidf_similarity_gives_its_match():
    lexical, dense = CALIBRATIONS["tfidf"], CALIBRATIONS["dense"]
    similarities = np.array([0.0, lexical.off_topic, 0.12, lexical.same_topic, 0.9])
    mapped = on_dense_scale(similarities)
    assert [match_percent(float(s), dense) for s in mapped] == [match_percent(float(s), lexical) for s in similarities]
    assert mapped.min() >= 0 and mapped.max() <= 1


@pytest.mark.parametrize("aggregation", ["top5", "max", "mean", "top10"])
def test_values_and_reasons_are_those_of_the_mixed_similarity_matrix(aggregation):
    """Dense cosines where item and paper are both read, mapped tf-idf cosines where either is not: the same
    values and reasons as the whole (items × papers) matrix built by hand, with and without recency weights (the
    reasons with and without the books' evidence weights)."""
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(9, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    corpus = rng.normal(size=(40, 16)).astype(np.float32)
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    items = np.array([0, 1, 0, 0, 1, 1, 0, 1, 0], dtype=bool)
    papers = np.zeros(40, dtype=bool)
    papers[[2, 17, 30]] = True
    lexical = sparse.random(9, 50, density=0.3, random_state=4, format="csr", dtype=np.float32)
    corpus_lexical = sparse.random(40, 50, density=0.3, random_state=5, format="csr", dtype=np.float32)
    whole = rows @ corpus.T
    mapped = on_dense_scale((lexical @ corpus_lexical.T).toarray())
    whole[items], whole[:, papers] = mapped[items], mapped[:, papers]
    for item_mask, paper_mask in ((items, papers), (items, ~papers & False), (items & False, papers)):
        unread = Unread(item_mask, paper_mask, lexical, corpus_lexical)
        want_matrix = rows @ corpus.T
        want_matrix[item_mask], want_matrix[:, paper_mask] = mapped[item_mask], mapped[:, paper_mask]
        for weights in (None, rng.uniform(0.2, 1.0, size=9).astype(np.float32)):
            scaled = want_matrix if weights is None else want_matrix * weights[:, None]
            want = block_values(scaled, aggregation)
            got = unread.values(rows, corpus, aggregation, weights)
            assert np.allclose(got.scores(aggregation), want.scores(aggregation), atol=1e-6)
    unread = Unread(items, papers, lexical, corpus_lexical)
    shown = np.array([3, 0, 17, 39, 2])
    reason_rows, reason_sims = unread.reasons(rows, corpus, shown)
    for place, paper in enumerate(shown):
        best = sorted(range(9), key=lambda item: (-whole[item, paper], item))[:3]
        assert list(reason_rows[place]) == best
        assert np.allclose(reason_sims[place], whole[best, paper], atol=1e-6)
    evidence = np.where(np.arange(9) % 2 == 0, 0.5, 1.0).astype(np.float32)  # books' weight (evidence.py)
    weighted = whole * evidence[:, None]
    reason_rows, reason_sims = unread.reasons(rows, corpus, shown, evidence)
    for place, paper in enumerate(shown):
        best = sorted(range(9), key=lambda item: (-weighted[item, paper], item))[:3]
        assert list(reason_rows[place]) == best
        assert np.allclose(reason_sims[place], weighted[best, paper], atol=1e-6)
    nothing = Unread(np.zeros(9, dtype=bool), np.zeros(40, dtype=bool), lexical, corpus_lexical)
    assert np.array_equal(nothing.reasons(rows, corpus, shown)[0], reasons_for(rows, corpus, shown)[0])


def _reported_library(path: Path, chinese: list[dict]) -> list[str]:
    """A zotero.sqlite of 4 English ICML 2025 papers and 8 Chinese journal articles (titles only)."""
    db = zotero_db.ZoteroDatabase(path)
    with open(ICML, encoding="utf-8") as handle:
        english = [json.loads(line)["title"] for line in handle][:4]
    for title in english:
        db.add_item("conferencePaper", {"title": title})
    for paper in chinese:
        db.add_item("journalArticle", {"title": paper["title_zh"], "DOI": paper["doi"]})
    db.commit()
    db.close()
    return english


def test_a_chinese_library_gets_one_warning_and_chinese_papers_matched_on_their_characters(tmp_path):
    if not zotero_db.schema_available():
        pytest.skip("needs ../shared/fixtures/zotero-schema")
    pytest.importorskip("onnxruntime")
    from zotero_bridge.cli.main import cli

    papers = chinese_papers()
    library_zh = [paper for paper in papers if paper["topic"] in ("vision", "security")][::2][:8]
    corpus_zh = [paper for paper in papers if paper not in library_zh]
    _reported_library(tmp_path / "zotero.sqlite", library_zh)
    with open(ICML, encoding="utf-8") as handle:
        english = [json.loads(line) for line in handle][4:64]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in
                              [{"id": paper["id"], "title": paper["title"]} for paper in english]
                              + [{"id": paper["doi"], "title": paper["title_zh"]} for paper in corpus_zh]),
                      encoding="utf-8")
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(tmp_path / "zotero.sqlite"), "--corpus",
                                      str(corpus), "-n", "0", "--format", "json", "--features", "dense"])
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "cannot read" in line]
    assert said == [line for line in said if line.startswith("Warning: 8 of 12 library items are in Han")]
    assert len(said) == 1
    rows = json.loads(result.stdout)
    rows = rows["recommendations"] if isinstance(rows, dict) else rows
    listed = {row["id"]: row for row in rows}
    assert all(paper["doi"] in listed for paper in corpus_zh)  # before: one paper per key "" survived
    library_titles = {paper["title_zh"] for paper in library_zh}
    from recommender.features.lexical import LexicalIndex

    from recommender.corpus.readers import load_corpus
    from recommender.pipeline.build import bundled_background
    from recommender.scoring.background import beside
    from recommender.scoring.owned import CorpusKeys

    # tf-idf is fitted on what is scored: the small corpus and the bundled list beside it (scoring/background.py)
    papers = load_corpus([corpus]).papers
    index = LexicalIndex.fit([paper.text for paper in papers + beside(papers, CorpusKeys(papers), bundled_background())])
    items = index.transform(sorted(library_titles))
    for paper in corpus_zh:
        row = listed[paper["doi"]]
        lexical = (index.transform([paper["title_zh"]]) @ items.T).toarray()[0]
        chinese_reasons = [reason for reason in row["reasons"] if reason["title"] in library_titles]
        if lexical.max() == 0:  # shares no character pair with a Chinese item: no Chinese item explains it
            assert chinese_reasons == []
        else:  # its closest Chinese item by character pairs, at that similarity's match
            assert chinese_reasons and chinese_reasons[0]["title"] == sorted(library_titles)[int(lexical.argmax())]
            assert np.isclose(chinese_reasons[0]["similarity"], on_dense_scale(lexical.max()), atol=2e-4)


def test_chinese_interests_are_named_by_character_pairs_never_particles_or_generic_words():
    from recommender.scoring.interest_names import GENERIC_WORDS, cluster_names

    papers = chinese_papers()
    titles = [paper["title_zh"] for paper in papers]
    labels = np.array([("vision", "text", "security").index(paper["topic"]) for paper in papers])
    names = cluster_names(titles, labels)
    assert len(names) == 3 and not any(name in titles for name in names)  # before: one raw title each
    for name in names:
        terms = name.split(", ")
        assert all("的" not in term and term not in GENERIC_WORDS for term in terms), name
        assert not any(a in b for a in terms for b in terms if a != b), name  # 检测 and 检测算: one term
