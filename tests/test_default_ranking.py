"""The default scoring (dense features, `--aggregation learned`, the shipped collaborative part) must
rank exactly as it did before its speed work: the same papers in the same order with the same
reasons (exact similarities) on fixed real libraries; the fused scores may differ only in float noise.

The golden file was made by the code before the speed-ups. Regenerate it only for an intended change:
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD python -m tests.test_default_ranking
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
GOLDEN = REPO / "tests" / "golden" / "default_ranking.json"
CORPUS_SIZE = 300
SCORE_TOLERANCE = 1e-6  # z-scored sums: float noise only

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared is not present")


def _inputs(folder: Path) -> tuple[dict[str, Path], list[Path]]:
    """Two real libraries (the example BibTeX library; 300 CiteULike-a titles with duplicates and two
    ICML papers the user owns) and a corpus of real ICML 2025 titles plus the seed abstracts."""
    from tests import golden_outputs

    library, _ = golden_outputs.write_inputs(folder)
    lines = (SHARED / "data" / "icml2025" / "papers.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = folder / "icml.jsonl"
    corpus.write_text("\n".join(lines[:CORPUS_SIZE]) + "\n", encoding="utf-8")
    seeds = sorted((REPO / "recommender" / "data" / "icml2025_seeds").glob("*.txt"))
    return {"example": REPO / "examples" / "library.bib", "citeulike": library}, [corpus, *seeds]


def default_rankings(libraries: dict[str, Path], corpus: list[Path]) -> dict[str, list[list]]:
    """Each library's whole ranking as the CLI's default scoring makes it: [rank, id, score, reasons]."""
    from zotero_bridge.cli.common import DEFAULT_AGGREGATION, build_recommender, load_model, scoring
    from zotero_bridge.sources.files import read_library_file

    model = load_model(None, "dense")
    aggregation, model = scoring(DEFAULT_AGGREGATION, model)
    recommender = build_recommender([str(path) for path in corpus], features="dense", aggregation=aggregation,
                                    model=model)
    outputs = {}
    for name, path in libraries.items():
        items, _ = read_library_file(path)
        outputs[name] = [[rec.rank, rec.paper.id, rec.score,
                          [f"{reason.item_key}:{float(reason.similarity).hex()}" for reason in rec.reasons]]
                         for rec in recommender.recommend(items, top_n=0)]
    return outputs


def test_the_default_ranks_and_explains_as_before(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    libraries, corpus = _inputs(tmp_path)
    for run in range(2):  # the second run reads what the first cached (prepared corpus, library state)
        got = default_rankings(libraries, corpus)
        assert got.keys() == expected.keys()
        for name, ranking in got.items():
            want = expected[name]
            assert [row[1] for row in ranking] == [row[1] for row in want], f"run {run}, {name}: order"
            assert [row[3] for row in ranking] == [row[3] for row in want], f"run {run}, {name}: reasons"
            assert [row[2] for row in ranking] == pytest.approx([row[2] for row in want], abs=SCORE_TOLERANCE)


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        os.environ["ZOTREC_CACHE_DIR"] = str(Path(folder) / "cache")
        rankings = default_rankings(*_inputs(Path(folder)))
    GOLDEN.write_text(json.dumps(rankings, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
