"""The fixed library and corpus behind tests/test_golden_outputs.py, and the outputs it compares
(stored in tests/data/; it needs ../shared for the CiteULike titles of the library).

Regenerate the golden file (only when an output change is intended, and say so in the commit):
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD python -m tests.golden_outputs
"""

from __future__ import annotations

import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
GOLDEN = REPO / "tests" / "data" / "reading_lists.json"
LIBRARY_SIZE = 300
CORPUS_SIZE = 300
# (features, aggregation, top_n): API-level outputs for each (floats stored in hex, compared up to float noise)
API_VARIANTS = [
    ("dense", "top5", 20), ("dense", "max", 20), ("dense", "mean", 20), ("dense", "top3", 20),
    ("dense", "top10", 0), ("tfidf", "top5", 20), ("tfidf", "mean", 0), ("hybrid", "top5", 20),
]
# tf-idf on a larger library whose repeated titles (2,030-2,059) tie with earlier rows
BIG_VARIANTS = [("tfidf", "top5", 0), ("tfidf", "mean", 30), ("tfidf", "max", 30)]
BIG_LIBRARY_SIZE = 2600
# whole `zotrec reading-list` commands whose printed text must not change (numbers: beyond rounding)
CLI_VARIANTS = [
    ("dense", "top5", "20", "jsonl"), ("dense", "max", "0", "csv"), ("tfidf", "top3", "15", "markdown"),
]


def _titles() -> list[str]:
    return [line.strip() for line in (SHARED / "data" / "citeulike-a" / "titles.txt")
            .read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_library(path: Path, titles: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for number, title in enumerate(titles):
            handle.write(json.dumps({"key": f"G{number:05d}", "title": title}) + "\n")
    return path


def write_big_library(folder: Path) -> Path:
    titles = _titles()
    return _write_library(folder / "big-library.jsonl", titles[:BIG_LIBRARY_SIZE] + titles[2030:2060])


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """A library of real CiteULike-a titles (with exact duplicates, so similarity ties occur, and two
    ICML papers the user already owns) and the first ICML 2025 papers as the corpus."""
    titles = _titles()
    papers = [json.loads(line) for line in (SHARED / "data" / "icml2025" / "papers.jsonl")
              .read_text(encoding="utf-8").splitlines()[:CORPUS_SIZE]]
    chosen = titles[: LIBRARY_SIZE - 12] + titles[:10] + [papers[5]["title"], papers[77]["title"]]
    library = _write_library(folder / "library.jsonl", chosen)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(paper) + "\n" for paper in papers), encoding="utf-8")
    return library, corpus


def api_outputs(library: Path, corpus: Path, variants=API_VARIANTS, prefix: str = "") -> dict[str, list[str]]:
    """Each API variant's ranking: one line per paper, rank, id, score and reasons (floats in hex)."""
    from recommender.corpus.readers import load_corpus
    from recommender.scoring.ranking import Recommender
    from zotero_bridge.sources.files import read_library_file

    items, _ = read_library_file(library)
    papers = load_corpus([corpus]).papers
    outputs = {}
    for features, aggregation, top_n in variants:
        recs = Recommender(papers, representation=features, aggregation=aggregation).recommend(items, top_n=top_n)
        outputs[f"{prefix}{features}/{aggregation}/{top_n}"] = [
            " ".join([str(rec.rank), rec.paper.id, float(rec.score).hex()]
                     + [f"{r.item_key}:{float(r.similarity).hex()}" for r in rec.reasons])
            for rec in recs
        ]
    return outputs


def cli_outputs(library: Path, corpus: Path) -> dict[str, str]:
    """stdout of each CLI variant."""
    from click.testing import CliRunner

    from zotero_bridge.cli.main import cli

    outputs = {}
    for features, aggregation, top_n, fmt in CLI_VARIANTS:
        args = ["-q", "reading-list", "--library", str(library), "--corpus", str(corpus), "--features", features,
                "--aggregation", aggregation, "-n", top_n, "--format", fmt]
        # content only: the shipped collaborative part (the default since #16) is pinned by tests/test_fusion.py
        result = CliRunner().invoke(cli, [*args, "--model", "none"])
        assert result.exit_code == 0, result.output
        outputs[" ".join(args[2:]).replace(str(library), "LIB").replace(str(corpus), "CORPUS")] = result.stdout
    return outputs


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        os.environ["ZOTREC_CACHE_DIR"] = str(Path(folder) / "cache")
        library, corpus = write_inputs(Path(folder))
        api = api_outputs(library, corpus)
        api.update(api_outputs(write_big_library(Path(folder)), corpus, BIG_VARIANTS, "big/"))
        golden = {"api": api, "cli": cli_outputs(library, corpus)}
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
