"""The item-cold protocol: folds, metrics, the no-leakage check, peers' rules, the library hold-out, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from recommender.collaborative.datasets import InteractionData, load_dataset
from recommender.collaborative.model import ALSSettings
from recommender.evaluation import peers
from recommender.evaluation.holdout import evaluate_library_holdout
from recommender.evaluation.folds import item_cold_folds, random_floor, ranking_metrics, without_items
from recommender.evaluation.protocol import evaluate_citeulike
from recommender.evaluation.splits import prepare_fold
from recommender.items import LibraryItem, Paper
from recommender.scoring.aggregation import aggregate
from zotero_bridge.cli.main import cli

from .conftest import SEEDS

FAST = ALSSettings(factors=16, iterations=6, n_features=1 << 18, random_state=1)


def _slice(n_users: int) -> InteractionData:
    """The first `n_users` users of citeulike-a and every item they saved (a real slice, renumbered)."""
    from tests.conftest import SHARED

    folder = SHARED / "data" / "citeulike-a"
    if not folder.is_dir():
        pytest.skip("../shared/data/citeulike-a is not present")
    full = load_dataset(f"citeulike-a:{folder}")
    users = full.interactions[:n_users]
    items = np.unique(users.indices)
    return InteractionData("citeulike-a", users[:, items].tocsr(), [full.texts[i] for i in items], True, "slice")


@pytest.fixture(scope="module")
def citeulike_slice():
    return _slice(300)


def test_folds_partition_the_items():
    folds = item_cold_folds(16_980)
    assert [len(f) for f in folds] == [3396] * 5
    assert np.array_equal(np.sort(np.concatenate(folds)), np.arange(16_980))
    assert np.array_equal(item_cold_folds(16_980)[2], folds[2])  # fixed seed
    assert sum(len(f) for f in item_cold_folds(25_975)) == 25_975


def test_ranking_metrics_known_answer():
    scores = np.array([[0.9, 0.8, 0.1, 0.0], [0.0, 0.1, 0.2, 0.3]])
    relevant = np.array([[True, False, False, True], [True, False, False, False]])
    metrics = ranking_metrics(scores, relevant)
    # user 0: hits at ranks 1 and 4; user 1: its one relevant item is ranked last (4th)
    assert metrics["recall@20"].tolist() == [1.0, 1.0]
    discounts = 1 / np.log2(np.arange(2, 6))
    assert metrics["ndcg@50"][0] == pytest.approx((discounts[0] + discounts[3]) / (discounts[0] + discounts[1]))
    assert metrics["ndcg@50"][1] == pytest.approx(discounts[3])
    assert random_floor(3396)["recall@50"] == pytest.approx(50 / 3396)


def test_ranking_metrics_recall_uncapped():
    scores = np.tile(np.arange(400, 0, -1, dtype=float), (1, 1))
    relevant = np.zeros((1, 400), dtype=bool)
    relevant[0, :60] = True  # 60 relevant, all ranked first: recall@50 is 50/60 (no min(M, ·) cap)
    assert ranking_metrics(scores, relevant)["recall@50"][0] == pytest.approx(50 / 60)


def test_aggregation_matches_profile_module():
    rng = np.random.default_rng(0)
    library, corpus = rng.random((7, 5)), rng.random((9, 5))
    library /= np.linalg.norm(library, axis=1, keepdims=True)
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    for name in ("max", "mean", "top3", "top10"):
        expected = aggregate(library, corpus, name).scores
        np.testing.assert_allclose(peers.aggregate_similarities(library @ corpus.T, name), expected, rtol=1e-5)


def test_no_leakage_popularity_is_at_the_random_floor(citeulike_slice):
    data = citeulike_slice
    test_items = item_cold_folds(data.n_items)[0]
    context = prepare_fold(data, test_items, FAST)
    popularity = peers.popularity_scores(context)
    assert not popularity.any()  # no held-out item kept a single save in training
    floor = random_floor(len(test_items))["recall@100"]
    recall = ranking_metrics(popularity, context.relevant)["recall@100"].mean()
    assert abs(recall - floor) < 0.35 * floor
    # the check can fail: popularity computed with the held-out saves left in beats the floor by far
    leaky = np.asarray(data.interactions[:, test_items].sum(axis=0), dtype=np.float32)
    leaky_recall = ranking_metrics(np.broadcast_to(leaky, popularity.shape), context.relevant)["recall@100"]
    assert leaky_recall.mean() > 2 * floor
    assert without_items(data.interactions, test_items)[:, test_items].nnz == 0


def test_peers_beat_random_on_a_real_slice(citeulike_slice):
    report = evaluate_citeulike(citeulike_slice, folds=1, settings=FAST, svm_users=10)
    methods = report["methods"]
    floor = report["random_floor"]["recall@50"]
    for name in ("content max", "content top3", "logreg, sampled negatives", "content→ALS, ALS user",
                 "hybrid, text user"):
        assert methods[name]["recall@50"][0] > 3 * floor, name
    assert "linear SVM" in report["svm_sample"]["methods"]
    assert 0.0 <= report["per_fold"][0]["blend_weights"]["text user"] <= 1.0


def _items():
    topics = ["graph neural networks", "protein structure prediction", "graph community detection",
              "message passing graph networks", "spectral graph clustering"]
    return [LibraryItem(key=f"K{i}", title=f"{topic} study", date_added=f"2024-0{i + 1}-01 10:00:00")
            for i, topic in enumerate(topics)]


def test_library_holdout_ranks_the_newest_items():
    corpus = [Paper(id=f"c{i}", title=f"{word} analysis") for i, word in enumerate(
        ["soil erosion", "medieval poetry", "tax policy", "ocean currents", "bird migration", "graph theory"])]
    result = evaluate_library_holdout(_items(), corpus, holdout=1, aggregation="top3")
    assert result.candidates == 7
    assert [h.key for h in result.hidden] == ["K4"]  # the newest
    assert result.hidden[0].rank <= 2  # a graph paper among graph papers, not among poetry
    assert result.recall["recall@20"] == 1.0


def test_cli_train_then_reading_list_and_evaluate(tmp_path):
    small = _slice(60)
    folder = tmp_path / "cul"
    folder.mkdir()
    matrix = small.interactions
    (folder / "users.dat").write_text("".join(
        f"{len(row.indices)} {' '.join(map(str, row.indices))}\n" for row in matrix), encoding="utf-8")
    (folder / "titles.txt").write_text("\n".join(small.texts) + "\n", encoding="utf-8")
    runner = CliRunner()
    model = tmp_path / "model.npz"
    result = runner.invoke(cli, ["train", "--data", f"citeulike-a:{folder}", "-o", str(model), "--factors", "8"])
    assert result.exit_code == 0, result.output
    library = tmp_path / "library.json"
    library.write_text(json.dumps([{"id": "a", "type": "article-journal", "title": "Community structure in networks"}]))
    seeds = [part for seed in SEEDS for part in ("--corpus", str(seed))]  # the 31 seed papers: fast
    result = runner.invoke(cli, ["reading-list", "--library", str(library), "--model", str(model), "-n", "3",
                                 "--format", "json", *seeds])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["reading-list", "--library", str(library), "--model", str(tmp_path / "none.npz"),
                                 *seeds])
    assert result.exit_code == 1 and "Error:" in result.output
    result = runner.invoke(cli, ["evaluate", "citeulike", "--data", f"citeulike-a:{folder}", "--folds", "1",
                                 "--svm-users", "0", "--factors", "8", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["folds"] == 1 and "hybrid, text user" in report["methods"]
    bad = runner.invoke(cli, ["train", "--data", "movielens:/x", "-o", str(model)])
    assert bad.exit_code == 1 and "NAME:FOLDER" in bad.output


def test_cli_evaluate_library(tmp_path):
    library = tmp_path / "library.json"
    library.write_text(json.dumps([
        {"id": item.key, "type": "article-journal", "title": item.title} for item in _items()]))
    result = CliRunner().invoke(cli, ["evaluate", "library", "--library", str(library), "--holdout-newest", "1"])
    assert result.exit_code == 1 and "date added" in result.output  # CSL-JSON has no date added


def test_cli_evaluate_library_with_dates(tmp_path):
    library = tmp_path / "library.jsonl"
    library.write_text("".join(json.dumps({"key": item.key, "title": item.title, "date_added": item.date_added}) + "\n"
                               for item in _items()))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"c{i}", "title": f"{word} analysis"}) + "\n"
                              for i, word in enumerate(["soil erosion", "medieval poetry", "tax policy"])))
    result = CliRunner().invoke(cli, ["evaluate", "library", "--library", str(library), "--corpus", str(corpus),
                                      "--holdout-newest", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["candidates"] == 5
    assert sorted(h["key"] for h in report["hidden"]) == ["K3", "K4"]
    assert all(h["rank"] <= 3 for h in report["hidden"])  # graph papers rank above soil erosion and poetry


@pytest.mark.slow
def test_full_fold_zero_on_citeulike_a(shared):
    data = load_dataset(f"citeulike-a:{shared / 'data' / 'citeulike-a'}")
    report = evaluate_citeulike(data, folds=1, svm_users=50)
    methods = report["methods"]
    assert methods["hybrid, text user"]["recall@50"][0] > methods["content top3"]["recall@50"][0]
    assert methods["popularity (leak check)"]["recall@50"][0] < 2 * report["random_floor"]["recall@50"]


def _projected_vectors(data: InteractionData, dim: int = 96) -> np.ndarray:
    """Stand-in sentence embeddings with no model files: tf-idf rows under a fixed random projection."""
    from recommender.features.tfidf import TfidfRepresentation

    rows = TfidfRepresentation(n_features=1 << 16).fit(data.texts).transform(data.texts)
    projection = np.random.default_rng(0).normal(size=(rows.shape[1], dim)).astype(np.float32)
    vectors = np.asarray(rows @ projection, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def test_dense_protocol_every_rule_beats_random_and_weights_are_shares(citeulike_slice):
    from recommender.evaluation.folds import settings_for
    from recommender.evaluation.protocol import run_fold
    from recommender.evaluation.splits import DenseItems

    data = citeulike_slice
    test_items = item_cold_folds(data.n_items)[0]
    result = run_fold(data, 0, test_items, settings_for(data, FAST), "top5", svm_users=10,
                      items=DenseItems(_projected_vectors(data), "projected-tfidf"), adapter_beta=0.5,
                      full_adapter=True)
    floor = random_floor(len(test_items))["recall@50"]
    for name in ("dense top5", "logreg, sampled negatives (dense)", "zotrec linear model (dense)",
                 "dense→ALS, ALS user (CTR-like)", "dense→ALS, text user", "zotrec fused (shipped form)",
                 "adapted space top5", "zotrec linear model (adapted space)", "zotrec fused, adapted space",
                 "zotrec fused, plain linear model"):
        assert result.metrics[name]["recall@50"] > 2 * floor, name
    weights = dict(result.blend_weights)
    adapter, beta, plain = weights.pop("adapter"), weights.pop("adapter_beta"), weights.pop("plain")
    fine_order = weights.pop("fine")
    assert beta == 0.5
    for shares in (weights, adapter, plain):
        assert set(shares) == {"content", "lexical", "learned", "collaborative"}
        assert sum(shares.values()) == pytest.approx(1.0) and min(shares.values()) >= 0
    # the fine order's weights: shares of the fused signals and the nearest-items ones, chosen on validation
    assert set(fine_order) == {"nearest", "max", "content", "lexical", "learned", "collaborative"}
    assert sum(fine_order.values()) == pytest.approx(1.0) and min(fine_order.values()) >= 0
    # the cascade only reorders the fused top 50: recall@50 is the fused order's
    assert result.metrics["zotrec fused (shipped form)"]["recall@50"] == pytest.approx(
        result.metrics["zotrec fused, fused order"]["recall@50"])
    # every rule has a fine row, and the shipped scoring on each user's hard candidates alone has its own
    assert 0 < result.fine_users <= result.users
    assert set(result.metrics) < set(result.fine)
    for name in ("random", "zotrec fused (shipped form)", "zotrec fused (shipped form), in-area corpus"):
        assert set(result.fine[name]) == {"ndcg@10", "tau", "order loss"}
    assert result.fine["zotrec fused (shipped form)"]["ndcg@10"] > result.fine["random"]["ndcg@10"]
    # the order loss (issue 33): a random order puts half the pairs the wrong way round, the shipped form far fewer
    assert result.metrics["random"]["order loss"] == pytest.approx(0.5, abs=0.05)
    assert result.metrics["zotrec fused (shipped form)"]["order loss"] < 0.3
    assert result.fine["zotrec fused (shipped form)"]["order loss"] < result.fine["random"]["order loss"]
    assert "linear SVM (dense)" in result.svm_sample
    assert "zotrec fused, adapted space" in result.svm_sample  # every rule on the SVM's users too


def test_dense_protocol_sample_only_scores_the_svm_users_alone(citeulike_slice):
    from recommender.evaluation.folds import settings_for
    from recommender.evaluation.protocol import run_fold
    from recommender.evaluation.splits import DenseItems

    data = citeulike_slice
    test_items = item_cold_folds(data.n_items)[0]
    args = (data, 0, test_items, settings_for(data, FAST), "top5")
    items = DenseItems(_projected_vectors(data), "projected-tfidf")
    full = run_fold(*args, svm_users=12, items=items)
    sampled = run_fold(*args, svm_users=12, items=items, sample_only=True)
    assert sampled.users == 12 < full.users
    assert sampled.blend_weights == full.blend_weights  # weights come from the same validation split
    assert set(sampled.metrics) | {"linear SVM (dense)"} == set(sampled.svm_sample) == set(full.svm_sample)
    # the same users: the same figures for the rules without random negatives (those draw them per row)
    for name in ("dense top5", "tf-idf top5", "dense→ALS, ALS user (CTR-like)", "dense→ALS, text user"):
        assert sampled.metrics[name] == pytest.approx(full.svm_sample[name]), name
        assert sampled.svm_sample[name] == pytest.approx(sampled.metrics[name]), name


def test_adapter_space_adds_the_factor_cosine_to_the_content_cosine():
    from recommender.scoring.adapter import adapted

    rng = np.random.default_rng(3)
    vectors, factors = rng.normal(size=(6, 8)), rng.normal(size=(6, 4)) * 5
    unit = lambda rows: rows / np.linalg.norm(rows, axis=1, keepdims=True)  # noqa: E731
    space = adapted(vectors, factors, beta=0.5)
    assert space.shape == (6, 12) and np.allclose(np.linalg.norm(space, axis=1), 1.0)
    expected = (unit(vectors) @ unit(vectors).T + 0.25 * unit(factors) @ unit(factors).T) / 1.25
    assert np.allclose(space @ space.T, expected, atol=1e-6)
    # two papers with the same text but opposite factors (saved by different people) move apart
    twin = adapted(vectors[[0, 0]], np.vstack([factors[0], -factors[0]]), beta=1.0)
    assert twin[0] @ twin[1] == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError):
        adapted(vectors, factors[:3])


def test_adapted_representation_ranks_in_the_adapted_space():
    from experiments.full_adapter import AdaptedRepresentation
    from recommender.scoring.ranking import Recommender

    axis = {"flows": [1.0, 0.0], "series": [0.0, 1.0]}

    class Words:  # same text vector for both corpus papers; only their predicted factors differ
        name = "words"

        def fit(self, texts):
            return self

        def transform(self, texts):
            return np.array([axis[text.split()[0]] for text in texts], dtype=np.float32)

    class Factors:
        def item_factors(self, texts):
            return np.array([[1.0, 0.0] if "saved-together" in text else [0.0, 1.0] for text in texts])

    papers = [Paper(id=str(i), title=title) for i, title in enumerate(["flows other", "flows saved-together"])]
    library = [LibraryItem(key="K", title="flows saved-together mine")]
    representation = AdaptedRepresentation(Words(), Factors(), beta=1.0)
    assert representation.name == "words+adapter"
    ranked = Recommender(papers, representation=representation, aggregation="max").recommend(library, top_n=2)
    assert [rec.paper.id for rec in ranked] == ["1", "0"]  # the text ties; co-saving breaks the tie
    assert ranked[0].reasons[0].similarity == pytest.approx(1.0) and ranked[1].reasons[0].similarity == pytest.approx(0.5)


def test_dense_vectors_of_a_bag_of_words_are_weighted_word_embeddings():
    from recommender.collaborative.dense_model import dataset_vectors

    class Words:
        def transform(self, words):  # one axis per word: the item vector shows the words' weights
            rows = np.zeros((len(words), 3), dtype=np.float32)
            for row, word in enumerate(words):
                rows[row, ["alpha", "beta", "gamma"].index(word)] = 1.0
            return rows

    data = InteractionData("bag", None, ["alpha alpha beta", "gamma", "beta gamma gamma"], False, "test")
    vectors = dataset_vectors(data, Words())
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0, 0] > vectors[0, 1] > 0 and vectors[0, 2] == 0  # tf (sublinear) × idf
    assert vectors[1].tolist() == [0.0, 0.0, 1.0]


def test_dense_report_has_every_rule_and_formats_as_a_table(citeulike_slice):
    from recommender.evaluation.protocol import format_table

    vectors = _projected_vectors(citeulike_slice)
    index = {text: row for row, text in enumerate(citeulike_slice.texts)}

    class Projected:
        def transform(self, texts):
            return vectors[[index[text] for text in texts]]

    report = evaluate_citeulike(citeulike_slice, folds=1, settings=FAST, svm_users=5, representation=Projected(),
                                encoder_id="projected-tfidf")
    table = format_table(report)
    assert report["features"] == "dense (projected-tfidf)"
    for name in ("dense top5", "zotrec fused (shipped form)", "linear SVM (dense)"):
        assert name in table, name
    json.dumps(report)  # JSON-ready


@pytest.mark.slow
def test_dense_fold_zero_the_shipped_form_beats_every_peer_rule(shared):
    """The claim of docs/evaluation.md on real data: fold 0 of citeulike-a, MiniLM features (embeds the titles once)."""
    from recommender.evaluation.folds import settings_for
    from recommender.evaluation.protocol import dense_report_rows, run_fold
    from recommender.evaluation.splits import DenseItems
    from recommender.features.dense import MODEL_ID, DenseRepresentation, dense_available

    if not dense_available():
        pytest.skip("the dense packages are not installed")
    data = load_dataset(f"citeulike-a:{shared / 'data' / 'citeulike-a'}")
    vectors = dense_report_rows(data, DenseRepresentation())
    result = run_fold(data, 0, item_cold_folds(data.n_items)[0], settings_for(data), "top5", svm_users=0,
                      items=DenseItems(vectors, MODEL_ID))
    recall = {name: values["recall@50"] for name, values in result.metrics.items()}
    ours = recall.pop("zotrec fused (shipped form)")
    peers = [value for name, value in recall.items() if not name.startswith(("zotrec", "adapted"))]
    assert ours > max(peers)
    assert ours > recall["zotrec fused, plain linear model"]  # the adapter's linear model earns its place


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_trained_dense_model_records_the_adapter_its_weights_were_chosen_with(citeulike_slice, beta):
    from recommender.evaluation.folds import settings_for
    from recommender.evaluation.protocol import train_model
    from recommender.scoring.adapter import adapter_beta
    from recommender.scoring.fusion import default_weights

    model = train_model(citeulike_slice, _projected_vectors(citeulike_slice), settings_for(citeulike_slice, FAST),
                        "projected-tfidf", "top5", adapter_beta=beta)
    assert adapter_beta(model) == beta  # what the Recommender reads at run time
    weights = default_weights(model)
    assert 0 <= weights.lexical + weights.learned + weights.collaborative <= 1
    assert not hasattr(model, "blend_weight")  # the dense model keeps its weights in the provenance only


def test_the_full_adapter_runs_only_when_asked_and_changes_no_shipped_figure(citeulike_slice):
    """The default dense run keeps the shipped form's rows and figures and leaves out the full adapter's
    (experiments/full_adapter.py asks for them)."""
    from recommender.evaluation.folds import settings_for
    from recommender.evaluation.protocol import run_fold
    from recommender.evaluation.splits import DenseItems

    data = citeulike_slice
    args = (data, 0, item_cold_folds(data.n_items)[0], settings_for(data, FAST), "top5")
    items = DenseItems(_projected_vectors(data), "projected-tfidf")
    default = run_fold(*args, svm_users=0, items=items)
    full = run_fold(*args, svm_users=0, items=items, full_adapter=True)
    research = {"adapted space top5", "zotrec fused, adapted space"}
    assert set(full.metrics) - set(default.metrics) == research
    assert "adapter" not in default.blend_weights and "adapter" in full.blend_weights
    for name, values in default.metrics.items():
        assert values == pytest.approx(full.metrics[name]), name


def test_evaluation_has_one_logistic_regression_and_never_imports_experiments():
    """Peers and simulations fit scoring/learned.py's regression (no scikit-learn LogisticRegression), and the
    recommender never reaches into experiments/."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for path in (root / "recommender" / "evaluation").glob("*.py"):
        names = {alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert "LogisticRegression" not in names, path
    for path in (root / "recommender").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(module.split(".")[0] == "experiments" for module in modules), path


def test_train_makes_only_the_dense_model():
    result = CliRunner().invoke(cli, ["train", "--data", "citeulike-a:/nowhere", "-o", "m.npz", "--features", "tfidf"])
    assert result.exit_code == 2 and "tfidf" in result.output  # the choice is gone: a usage error, no training
    assert "--features [dense]" in CliRunner().invoke(cli, ["train", "--help"]).output
