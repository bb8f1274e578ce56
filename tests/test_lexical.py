"""zotrec's one tf-idf (recommender.features.lexical) and the per-user linear model without scikit-learn:
the same rows, values and decision scores as scikit-learn's on real titles and abstracts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recommender.features.lexical import ENGLISH_STOP_WORDS, LexicalIndex, words
from recommender.scripts import CJK_RUN
from recommender.features.tfidf import TfidfRepresentation
from recommender.scoring.aggregation import sparse_top_values, top_values
from tests.conftest import SEEDS


def _texts(shared, n_titles: int = 4000, *, cjk: bool = True):
    """Real titles and abstracts; `cjk` False leaves out those with Han, kana or Hangul, which zotrec splits into
    character pairs where scikit-learn keeps whole runs (test_cjk_runs_become_character_pairs)."""
    corpus = [json.loads(line)["title"] for line in
              (shared / "data" / "icml2025" / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus += [path.read_text(encoding="utf-8") for path in SEEDS]
    titles = (shared / "data" / "citeulike-a" / "titles.txt").read_text(encoding="utf-8").splitlines()[:n_titles]
    library = titles + ["Ünïcödé naïve façade — Schrödinger", "", "a b", "数据 挖掘 of the graph", "Graph graph GRAPH"]
    if not cjk:
        corpus, library = ([text for text in texts if not CJK_RUN.search(text)] for texts in (corpus, library))
    return corpus, library


def _scikit_learn(n_features: int, ngram_range: tuple[int, int]):
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

    hasher = HashingVectorizer(n_features=n_features, alternate_sign=False, norm=None, stop_words="english",
                               ngram_range=ngram_range, strip_accents="unicode", dtype=np.float32)
    return hasher, TfidfTransformer(sublinear_tf=True, norm="l2")


def _assert_same_rows(got, want) -> None:
    for field in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field


@pytest.mark.parametrize(("n_features", "ngram_range"), [(1 << 20, (1, 2)), (1 << 16, (1, 1)), (1 << 18, (1, 3))])
def test_tfidf_rows_equal_scikit_learns_array_for_array(shared, n_features, ngram_range):
    corpus, library = _texts(shared, cjk=False)
    hasher, transformer = _scikit_learn(n_features, ngram_range)
    transformer.fit(hasher.transform(corpus))
    mine = TfidfRepresentation(n_features, ngram_range).fit(corpus)
    assert np.array_equal(mine.idf, transformer.idf_) and mine.idf.dtype == transformer.idf_.dtype
    for texts in (corpus, library):
        _assert_same_rows(mine.transform(texts), transformer.transform(hasher.transform(texts)))
    stored = LexicalIndex.from_arrays(mine.index.to_arrays(), n_features=n_features)
    assert np.array_equal(stored.idf, mine.idf)


def test_a_float64_idf_of_an_older_model_file_gives_scikit_learns_rows(shared):
    """Model files written with an older scikit-learn keep a float64 idf; the rows stay the ones it gave."""
    corpus, library = _texts(shared, 500, cjk=False)
    hasher, transformer = _scikit_learn(1 << 16, (1, 2))
    transformer.fit(hasher.transform(corpus))
    transformer.idf_ = transformer.idf_.astype(np.float64) * (1 + 1e-9)  # not float32-representable
    restored = TfidfRepresentation(1 << 16, (1, 2), idf=transformer.idf_)
    _assert_same_rows(restored.transform(library), transformer.transform(hasher.transform(library)))


def test_cjk_runs_become_character_pairs_and_the_rest_scikit_learns_words(shared):
    """Han, kana and Hangul runs → overlapping character pairs (Hangul recomposed after the accent strip); the
    words around them are scikit-learn's, and a text without such runs is analysed as scikit-learn does."""
    from sklearn.feature_extraction.text import HashingVectorizer

    analyse = HashingVectorizer(stop_words="english", strip_accents="unicode").build_analyzer()
    assert words("基于BERT的文本分类") == ["基于", "bert", "的文", "文本", "本分", "分类"]
    assert words("数据 挖掘 of the graph") == ["数据", "挖掘", "graph"]
    assert words("한국어 처리") == ["한국", "국어", "처리"]
    assert words("ディープラーニング") == ["ディ", "ィー", "ープ", "プラ", "ラー", "ーニ", "ニン", "ング"]
    assert words("图 and a graph") == ["图", "graph"]  # a lone character stays a token
    assert words("Обучение с подкреплением") == analyse("Обучение с подкреплением")  # spaced scripts: words
    corpus, _ = _texts(shared, 0, cjk=False)
    assert all(words(text) == analyse(text) for text in corpus[:2000])


def test_the_stop_words_are_scikit_learns():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SKLEARN

    assert ENGLISH_STOP_WORDS == SKLEARN


def test_tfidf_features_and_seed_matching_never_import_scikit_learn():
    """Importing scikit-learn costs more CPU than a warm content score: the tf-idf path must not need it."""
    probe = """
import sys
from recommender.corpus.enrich import match_untitled
from recommender.features import make_representation
from recommender.items import Paper
papers = [Paper(id=str(i), title=f"Graph networks number {i} for molecules") for i in range(30)]
seed = Paper(id="s", title="x", abstract="We study graph networks number 7 for molecules.", title_derived=True)
match_untitled([seed], papers)
make_representation("tfidf").fit([p.title for p in papers]).transform(["graph networks"])
print("sklearn" in sys.modules)
"""
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


@pytest.mark.parametrize("aggregation", ["top5", "max", "top3", "top10", "mean"])
def test_sparse_top_values_are_top_values_bit_for_bit(shared, aggregation, monkeypatch):
    from recommender.scoring import aggregation as module

    corpus, library = _texts(shared, 2500)  # more than one 2,048-row chunk
    index = LexicalIndex.fit(corpus)
    corpus_rows, library_rows = index.transform(corpus), index.transform(library)
    want = top_values(library_rows, corpus_rows, aggregation)
    for block in (module._SPARSE_CHUNK_ITEMS, 700):  # one product, then blocks of items merged
        monkeypatch.setattr(module, "_SPARSE_CHUNK_ITEMS", block)
        got = sparse_top_values(library_rows, corpus_rows, aggregation)
        assert np.array_equal(got.best, want.best)
        assert np.array_equal(got.scores(aggregation), want.scores(aggregation))
    few = sparse_top_values(library_rows[:2], corpus_rows, aggregation)  # fewer items than K
    assert np.array_equal(few.scores(aggregation), top_values(library_rows[:2], corpus_rows, aggregation).scores(aggregation))


def test_the_logistic_fit_gives_scikit_learns_scores_on_real_embeddings(shared):
    pytest.importorskip("onnxruntime")
    from sklearn.linear_model import LogisticRegression

    from recommender.features import make_representation
    from recommender.scoring.learned import fit_logistic

    corpus, library = _texts(shared, 400)
    encoder = make_representation("dense")
    corpus_rows = np.asarray(encoder.transform(corpus[:600]))
    for positives in (library[:30], library[:400]):
        rows = np.asarray(encoder.transform(positives))
        rng = np.random.default_rng(0)
        negatives = corpus_rows[rng.choice(len(corpus_rows), size=min(max(200, 10 * len(rows)), 600), replace=False)]
        x = np.vstack([rows, negatives]).astype(np.float64)
        y = np.r_[np.ones(len(rows)), np.zeros(len(negatives))]
        reference = LogisticRegression(C=1.0, class_weight="balanced", max_iter=200).fit(x, y).coef_.ravel()
        mine = fit_logistic(x, y)
        assert np.abs(mine - reference).max() < 1e-8
        scores = corpus_rows.astype(np.float64)
        assert np.array_equal(np.argsort(-(scores @ mine), kind="stable"),
                              np.argsort(-(scores @ reference), kind="stable"))


def test_a_library_over_the_cap_trains_on_a_sample_that_ranks_like_the_whole(shared, monkeypatch):
    """Beyond MAX_POSITIVES items the linear model sees a seeded sample: at most that many rows (the
    fit's memory), the same scores run to run, and nearly the same order as all items (real titles)."""
    pytest.importorskip("onnxruntime")
    from scipy.stats import spearmanr

    from recommender.features import make_representation
    from recommender.scoring import learned

    corpus, library = _texts(shared, 800)
    encoder = make_representation("dense")
    corpus_rows = np.asarray(encoder.transform(corpus[:1000]))
    rows = np.asarray(encoder.transform(library[:800]))
    whole = learned.linear_user_scores(rows, corpus_rows, corpus_rows)
    seen = []
    real_fit = learned.fit_logistic
    monkeypatch.setattr(learned, "fit_logistic", lambda x, y: seen.append(int(y.sum())) or real_fit(x, y))
    monkeypatch.setattr(learned, "MAX_POSITIVES", 400)
    sampled = learned.linear_user_scores(rows, corpus_rows, corpus_rows)
    assert seen == [400]
    assert np.array_equal(sampled, learned.linear_user_scores(rows, corpus_rows, corpus_rows))
    assert not np.array_equal(sampled, whole)
    assert spearmanr(sampled, whole).statistic > 0.95


def test_fit_transform_is_fit_then_transform_bit_for_bit():
    """The corpus side analyses each text once (corpus_side.lexical_corpus): the two-pass rows and idf."""
    from recommender.corpus.readers import load_corpus
    from tests.conftest import REPO

    papers = load_corpus([REPO / "recommender" / "data" / "icml2025.jsonl"]).papers
    texts = [paper.text for paper in papers][:800]
    texts += ["Deep learning für Bilder", "深度学习的图像", "", "the and of"]  # accents, a CJK run, nothing left
    index, rows = LexicalIndex.fit_transform(texts)
    reference = LexicalIndex.fit(texts)
    expected = reference.transform(texts)
    assert np.array_equal(index.idf, reference.idf)
    assert (rows != expected).nnz == 0 and np.array_equal(rows.indptr, expected.indptr)
    assert np.array_equal(rows.data, expected.data) and rows.nnz > 1000
