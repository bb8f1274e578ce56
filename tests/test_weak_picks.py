"""Issue 39: a pick whose best reason is below the weak bar is flagged, in place (the list is not reordered):
the JSON row says "weak": true, the header and the warning name the picks; an on-topic list is not flagged."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recommender.items import Paper, Reason, Recommendation
from recommender.scoring.match import (CALIBRATIONS, match_percent, ranges, weak_library_warning, weak_picks_line,
                                       with_match)
from zotero_bridge.cli.main import cli

REPO = Path(__file__).resolve().parents[1]
DENSE = CALIBRATIONS["dense"]

CONTROL = ["Contraction metrics for nonlinear feedback control design",
           "Distributed nonlinear control using separable control contraction metrics",
           "Robust model predictive control of constrained linear systems",
           "Lyapunov functions for stability of nonlinear control systems",
           "Decentralized feedback controller synthesis for networked systems",
           "Sum-of-squares certificates for nonlinear system stability"]
CLOSE = ["Learning contraction metrics for nonlinear feedback controllers",
         "Neural Lyapunov functions for stable nonlinear control"]
FAR = ["A millimetre-wave voltage-controlled oscillator in 28 nm CMOS",
       "Gothic cathedrals of northern France: masons and stained glass",
       "Protein crystallography of membrane transporters",
       "Sourdough fermentation and the microbiology of bread",
       "Medieval Latin manuscripts of the Carolingian period",
       "Tang dynasty poetry and its English translations"]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    library = tmp_path / "library.jsonl"
    library.write_text("".join(json.dumps({"key": f"L{i}", "title": t}) + "\n" for i, t in enumerate(CONTROL)))
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"id": f"close{i}", "title": t} for i, t in enumerate(CLOSE)]
    rows += [{"id": f"far{i}", "title": t} for i, t in enumerate(FAR)]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return library, corpus


def _run(*args: str):
    result = CliRunner().invoke(cli, ["reading-list", *args])
    assert result.exit_code == 0, result.output
    return result


def test_the_one_rule_marks_picks_below_the_bar_and_names_them():
    recs = [Recommendation(Paper(id=f"p{rank}", title="T"), 10.0 - rank, (Reason("K", "S", similarity),), rank)
            for rank, similarity in enumerate([0.70, 0.30, 0.60, 0.20, 0.34], 1)]
    marked = with_match(recs, "dense")
    assert [rec.paper.id for rec in marked] == [rec.paper.id for rec in recs]  # flagged in place, never moved
    assert [rec.weak for rec in marked] == [False, True, False, True, True]
    assert all(rec.match < match_percent(DENSE.low_best, DENSE) for rec in marked if rec.weak)
    line = weak_picks_line(marked, "dense")
    assert line.startswith("picks 2, 4–5 are below a 31 % match") and "0.35" in line
    assert weak_library_warning(marked, 12, "dense") == f"Weak match: {line}."
    assert ranges([1, 2, 3, 7, 9, 10]) == "1–3, 7, 9–10"
    assert weak_picks_line(marked[1:], "dense", numbered=True).startswith("picks 1, 3–4 are")  # as a digest numbers
    assert weak_picks_line(marked[:1], "dense") == "" and weak_library_warning(marked[:1], 12, "dense") is None
    assert not any(rec.weak for rec in with_match(recs, "bm25"))  # no calibration: no bar made up


def test_a_corpus_with_only_a_few_close_papers_gets_its_far_picks_flagged(tmp_path):
    library, corpus = _files(tmp_path)
    common = ["--library", str(library), "--corpus", str(corpus), "--model", "none", "-n", "8"]
    json_run = _run(*common, "--format", "json")
    rows = json.loads(json_run.stdout)
    assert {row["id"] for row in rows} == {f"close{i}" for i in range(2)} | {f"far{i}" for i in range(6)}
    weak = [row["rank"] for row in rows if row.get("weak")]
    assert {row["id"] for row in rows if row.get("weak")} == {f"far{i}" for i in range(6)}
    assert all(row["weak"] is True and row["match"] < 31 for row in rows if row.get("weak"))
    assert all("weak" not in row and row["match"] >= 31 for row in rows if row["id"].startswith("close"))
    assert json_run.stderr.count("Weak match") == 1 and f"picks {ranges(weak)} are below a 31 % match" in json_run.stderr
    markdown = _run(*common, "--format", "markdown").stdout
    header = [line for line in markdown.splitlines() if line.startswith("- Weak match: ")]
    assert len(header) == 1 and f"picks {ranges(weak)} are below a 31 % match" in header[0]
    assert markdown.count("% match (weak) · score") == len(weak)
    html = _run(*common, "--format", "html").stdout
    assert html.count('class="match weak"') == len(weak) and "Weak match" in html
    table = _run(*common, "--format", "table").stdout
    assert "Weak match: picks" in table and table.count("%*") == len(weak)


def test_the_on_topic_example_list_is_not_flagged():
    result = _run("--library", str(REPO / "examples" / "library.bib"), "-n", "20", "--format", "json")
    rows = json.loads(result.stdout)
    assert len(rows) == 20 and not any(row.get("weak") for row in rows)
    assert min(row["match"] for row in rows) >= 31 and "Weak match" not in result.stderr
