"""The 0–100 match beside the reasons in every format, and the one warning for a tiny or off-topic library."""

from __future__ import annotations

import csv
import io
import json

from click.testing import CliRunner

from recommender.items import Paper, Reason, Recommendation
from recommender.scoring.match import CALIBRATIONS, match_percent, weak_library_warning, with_match
from zotero_bridge.render.export import reasons_note
from zotero_bridge.render.reading_list import render_recommendations

DENSE = CALIBRATIONS["dense"]


def _recs() -> list[Recommendation]:
    close = Recommendation(Paper(id="p1", title="Close paper", url="https://example.org/p1"), 3.75,
                           (Reason("K1", "Saved one", 0.5), Reason("K2", "Saved two", 0.80)), 1)
    far = Recommendation(Paper(id="p2", title="Far paper"), 5.14, (Reason("K3", "Saved three", 0.25),), 2)
    bare = Recommendation(Paper(id="p3", title="No reasons"), 1.0, (), 3)
    return with_match([close, far, bare], "dense")


def test_the_match_is_the_best_similarity_calibrated_to_0_100():
    assert match_percent(DENSE.off_topic, DENSE) == 0 and match_percent(-0.3, DENSE) == 0
    assert match_percent(DENSE.same_topic, DENSE) == 100 and match_percent(0.99, DENSE) == 100
    assert match_percent((DENSE.off_topic + DENSE.same_topic) / 2, DENSE) == 50
    assert match_percent(0.4, DENSE) < match_percent(0.6, DENSE)
    close, far, bare = _recs()
    assert close.match == 100  # from the best reason, not the first one
    assert far.match == round(100 * (0.25 - DENSE.off_topic) / (DENSE.same_topic - DENSE.off_topic))
    assert far.match < close.match  # though its raw score is higher
    assert bare.match is None
    fresh = Recommendation(far.paper, far.score, far.reasons, far.rank)
    assert with_match([fresh], "tfidf")[0].match == 100  # 0.25 is as high as the on-topic example reaches on tf-idf
    assert with_match([fresh], "hybrid")[0].match == round(100 * (0.25 - 0.10) / (0.47 - 0.10))
    assert with_match([fresh], "bm25")[0].match is None  # no measured end points: no number made up


def test_every_format_shows_the_match_and_keeps_the_raw_score():
    recs = _recs()
    far = recs[1].match
    rows = json.loads(render_recommendations(recs, "json"))
    assert [row["match"] for row in rows] == [100, far, None]
    assert [row["score"] for row in rows] == [3.75, 5.14, 1.0]
    lines = render_recommendations(recs, "jsonl").splitlines()
    assert [json.loads(line)["match"] for line in lines] == [100, far, None]
    table = list(csv.DictReader(io.StringIO(render_recommendations(recs, "csv"))))
    assert [row["match"] for row in table] == ["100", str(far), ""]
    assert [row["score"] for row in table] == ["3.75", "5.14", "1.0"]
    markdown = render_recommendations(recs, "markdown")
    assert "— 100% match · score 3.750" in markdown and f"— {far}% match (weak) · score 5.140" in markdown
    assert "**No reasons** — score 1.000" in markdown
    html = render_recommendations(recs, "html")
    assert html.count("% match</b> · because you saved:") == 1 and "100% match" in html
    assert html.count("% match (weak)</b> · because you saved:") == 1
    text = render_recommendations(recs, "table", width=100)
    assert "match" in text and "100%" in text and f"{far}%" in text
    assert "rank 1, score 3.7500. 100% match. Because you saved" in reasons_note(recs[0])
    assert "match" not in reasons_note(recs[2])


def test_without_a_match_the_csv_keeps_its_columns():
    plain = [Recommendation(Paper(id="p1", title="T"), 1.0, (Reason("K", "S", 0.5),), 1)]
    header = render_recommendations(plain, "csv").splitlines()[0]
    assert header == "rank,id,title,score,authors,year,url,reasons"


def test_a_tiny_or_off_topic_library_gets_one_warning():
    close, far, _ = _recs()
    assert weak_library_warning([close], 12, "dense") is None
    few = weak_library_warning([close], 4, "dense")
    assert few and "4 items" in few and "similarity" not in few
    one = weak_library_warning([far], 1, "dense")
    assert "1 item with" in one and "0.25" in one and f"{DENSE.low_best:.2f}" in one and "\n" not in one
    fresh = Recommendation(far.paper, far.score, far.reasons, far.rank)
    assert weak_library_warning(with_match([fresh], "tfidf"), 12, "tfidf") is None  # 0.25 is high on tf-idf's scale


def test_the_cli_warns_once_for_an_off_topic_library(tmp_path):
    from zotero_bridge.cli.main import cli

    library = tmp_path / "library.jsonl"
    library.write_text('{"key": "A", "title": "Gothic cathedrals of northern France: masons and stained glass"}\n')
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(library), "--features", "tfidf",
                                      "-n", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("Weak match") == 1 and "1 item with a title or abstract" in result.stderr
    rows = json.loads(result.stdout)
    assert all(row["match"] is not None and 0 <= row["match"] <= 20 for row in rows if row["reasons"])


def test_hybrid_features_run_with_the_default_model_and_show_a_match(tmp_path):
    """Hybrid rows are sparse, so the shipped collaborative part (dense only) is left out, not an error."""
    from zotero_bridge.cli.main import cli

    library = tmp_path / "library.jsonl"
    library.write_text('{"key": "A", "title": "Normalizing flows for variational inference"}\n'
                       '{"key": "B", "title": "Score-based diffusion models for image generation"}\n')
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(library), "--features", "hybrid",
                                      "-n", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 3 and all(row["match"] is not None for row in rows)
    refused = CliRunner().invoke(cli, ["reading-list", "--library", str(library), "--features", "hybrid",
                                       "--model", "recommender/data/collaborative-dense.npz", "-n", "3"])
    assert refused.exit_code == 1 and "needs --features dense" in refused.output


def test_batch_score_lines_carry_the_match():
    from recommender.batch.output import render_user_block

    rows = [json.loads(line) for line in render_user_block("u1", _recs(), "jsonl").splitlines()]
    assert [row.get("match") for row in rows] == [100, _recs()[1].match, None]
    assert [row["score"] for row in rows] == [3.75, 5.14, 1.0]
