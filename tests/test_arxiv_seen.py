"""The issue's two days of arXiv through the command line: day 1 fetch → list; day 2 with new entries, a v2 of a
day-1 paper and a cross-list → only the new ids stored and embedded, no paper twice, the day-1 papers shown
before left out (and counted), the v2 with its new abstract."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fake_arxiv import paper, private_data
from zotero_bridge.cli.main import cli

LIBRARY = str(Path(__file__).resolve().parents[1] / "examples" / "library.bib")
TOPICS = ["Transformers for time series forecasting", "Reward models from human preferences",
          "Normalizing flows as generative models", "Graph neural networks for molecules"]


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    return private_data(tmp_path, monkeypatch, pause="0")


def topical(number: int, when: datetime, **kw):
    title = f"{TOPICS[number % 4]}, study {number}"
    return paper(number, when, title=title, abstract=f"{title}: we propose method {number} and evaluate it.", **kw)


def run(*args: str, stdout: bool = False) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout if stdout else result.output


def listed(*extra: str) -> list[dict]:
    out = run("reading-list", "--library", LIBRARY, "--corpus", "arxiv:cs.LG", "-n", "4", "--format", "json",
              *extra, stdout=True)
    return json.loads(out)


def next_day(data_dir: Path) -> None:
    """A day passes for the seen memory: every paper shown so far was shown yesterday."""
    with sqlite3.connect(data_dir / "seen.sqlite") as db:
        db.execute("UPDATE seen SET first_day = ?", ((date.today() - timedelta(days=1)).isoformat(),))


def embedded() -> int:
    """Texts MiniLM has embedded so far (the cache also holds the collaborative model's factors: not counted)."""
    from recommender.features.cache import EmbeddingCache
    from recommender.features.dense import MODEL_ID

    cache = EmbeddingCache()
    try:
        return cache.count(MODEL_ID)
    finally:
        cache.close()


def test_two_days_of_arxiv(arxiv, data_dir):
    now = datetime.now(UTC)
    arxiv.add(*[topical(n, now - timedelta(days=1, hours=n)) for n in range(1, 9)])
    assert "8 new" in run("corpus", "fetch", "arxiv:cs.LG", "--from", arxiv.url)
    day1 = listed("--features", "dense")
    assert len(day1) == 4 and len({row["id"] for row in day1}) == 4
    before = embedded()
    # day 2: two new papers (one cross-listed from stat.ML), and a second version of a day-1 paper
    arxiv.add(topical(9, now - timedelta(hours=3)), topical(10, now - timedelta(hours=2), categories=("stat.ML", "cs.LG")))
    revised = day1[0]["id"].removeprefix("arxiv:")
    arxiv.revise(revised, now - timedelta(hours=1), "A new abstract of version two about forecasting time series.")
    out = run("corpus", "fetch", "arxiv:cs.LG", "--from", arxiv.url)
    assert "2 new, 1 new version" in out and "Saved 10 papers" in out
    next_day(data_dir)
    day2 = listed("--features", "dense")
    assert embedded() - before == 3  # the two new papers and the new version's text, nothing else
    ids = [row["id"] for row in day2]
    assert len(ids) == len(set(ids)) == 4
    assert not set(ids) & {row["id"] for row in day1}  # shown yesterday: left out
    out = run("reading-list", "--library", LIBRARY, "--corpus", "arxiv:cs.LG", "-n", "4", "--format", "markdown",
              "--features", "dense")
    assert "4 papers shown on an earlier day left out (--include-seen shows them)" in out
    again = listed("--features", "dense", "--include-seen")
    assert {row["id"] for row in day1} & {row["id"] for row in again}
    stored = {row["id"]: row for row in json.loads((data_dir / "corpora" / "arxiv-cs.lg.json").read_text())["papers"]}
    assert stored[f"arxiv:{revised}"]["abstract"] == "A new abstract of version two about forecasting time series."
    assert len(stored) == 10


def test_the_same_day_gives_the_same_list(arxiv):
    now = datetime.now(UTC)
    arxiv.add(*[topical(n, now - timedelta(hours=n)) for n in range(1, 9)])
    run("corpus", "fetch", "arxiv:cs.LG", "--from", arxiv.url)
    first = listed("--features", "tfidf")
    assert listed("--features", "tfidf") == first


def test_conference_papers_are_not_hidden(data_dir):
    from zotero_bridge.feedback.seen import SeenMemory

    with SeenMemory() as memory:
        assert memory.remember("lib", ["icml:abc", "arxiv:2501.00001"], date(2025, 1, 1), "list") == 1
        assert memory.first_days("lib") == {"arxiv:2501.00001": "2025-01-01"}
    assert oct((data_dir / "seen.sqlite").stat().st_mode & 0o777) == "0o600"


def test_a_conference_list_never_opens_the_seen_memory(data_dir, tmp_path):
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"icml2025/{n}", "title": f"{TOPICS[n % 4]} {n}",
                                          "abstract": f"{TOPICS[n % 4]}: method {n}."}) + "\n" for n in range(8)))
    run("reading-list", "--library", LIBRARY, "--corpus", str(corpus), "-n", "3", "--features", "tfidf")
    assert not (data_dir / "seen.sqlite").exists()
