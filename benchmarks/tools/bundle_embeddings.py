"""Regenerate recommender/data/embeddings/: the MiniLM vectors of the texts zotrec ships (the bundled ICML
2025 list and the example library, examples/library.bib) and the shipped model's factors of them, manifests too.

Run after a change to the bundled list (recommender/data/icml2025.jsonl, icml2025_seeds/), to the example
library, to how a paper's or an item's text is made, or to the encoder (recommender/features/bundled.py says
how they are used):
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/tools/bundle_embeddings.py [--factors-only]

`--factors-only` rewrites only the shipped collaborative model's factors of those texts (after a new model).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from recommender.corpus.readers import load_corpus  # noqa: E402
from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.corpus.default import default_corpus  # noqa: E402
from recommender.features.bundled import (  # noqa: E402
    FACTORS_MANIFEST,
    MANIFEST,
    file_sha256,
    shipped_bundle,
    shipped_factors,
)
from recommender.features.cache import text_hash  # noqa: E402
from recommender.features.dense import (  # noqa: E402
    DIMENSION,
    MODEL_ID,
    ONNX_SHA256,
    DenseRepresentation,
    MiniLMEncoder,
)

DATA = REPO / "recommender" / "data"
EXAMPLE = REPO / "examples" / "library.bib"


def bundled_texts() -> list[str]:
    """The texts the default corpus embeds: each paper's text, once, in a fixed order (by hash)."""
    files = [DATA / "icml2025.jsonl", *sorted((DATA / "icml2025_seeds").glob("*.txt"))]
    texts = {text_hash(paper.text): paper.text for paper in load_corpus(files).papers}
    return [texts[key] for key in sorted(texts)]


def main() -> None:
    texts = bundled_texts()
    vectors = MiniLMEncoder().encode(texts)
    keys = np.frombuffer(b"".join(text_hash(text) for text in texts), dtype=np.uint8).reshape(-1, 16)
    array = MANIFEST.with_suffix(".npz")
    array.parent.mkdir(parents=True, exist_ok=True)
    # float32: float16 moves similarities by ~1e-4, beyond the 1e-5 the golden rankings allow
    np.savez(array, keys=keys, vectors=vectors.astype("<f4"))
    manifest = {"model_id": MODEL_ID, "onnx_sha256": ONNX_SHA256, "dimension": DIMENSION, "rows": len(texts),
                "array": array.name, "array_sha256": file_sha256(array)}
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(texts)} vectors, {array.stat().st_size / 1e6:.1f} MB → {array}")
    bundle_factors()
    add_example_library()


def bundle_factors() -> None:
    """The shipped collaborative model's factors of the default corpus's texts, computed as a first run does
    (every paper in corpus order, the kNN in its 64-row blocks, a later duplicate text winning), so the bundle
    holds that run's very values; rerun after the vectors or the shipped model change."""
    shipped_bundle.cache_clear()
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    papers = load_corpus(default_corpus().files).papers
    texts = [paper.text for paper in papers]
    vectors = DenseRepresentation(use_cache=False).transform(texts)  # the bundled vectors, as a first run has
    factors = {text_hash(text): row for text, row in zip(texts, model.factors_for_vectors(vectors))}
    keys = sorted(factors)
    array = FACTORS_MANIFEST.with_suffix(".npz")
    np.savez(array, keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16),
             vectors=np.vstack([factors[key] for key in keys]).astype("<f4"))
    manifest = {"model_id": model.cache_id, "onnx_sha256": ONNX_SHA256, "dimension": len(model.item_gram),
                "rows": len(keys), "array": array.name, "array_sha256": file_sha256(array)}
    FACTORS_MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(keys)} factor rows, {array.stat().st_size / 1e6:.1f} MB → {array}")


def add_example_library() -> None:
    """The example library's vectors and factors, added to both bundles as the README's first command computes
    them: that command runs on a throwaway cache with the corpus-only bundles just written, and its cache is
    read back, so a first run with the bundle ranks with the very values a run without it computes."""
    import os
    import tempfile

    from recommender.features.cache import EmbeddingCache
    from zotero_bridge.cli import cli
    from zotero_bridge.sources.files import read_library_file

    texts = sorted({item.text for item in read_library_file(EXAMPLE)[0] if item.text.strip()})
    with tempfile.TemporaryDirectory() as folder:
        os.environ["ZOTREC_CACHE_DIR"], os.environ["ZOTREC_DATA_DIR"] = f"{folder}/cache", f"{folder}/data"
        shipped_bundle.cache_clear()
        shipped_factors.cache_clear()
        argv = ["-q", "reading-list", "--library", str(EXAMPLE), "-o", f"{folder}/list.txt"]
        cli.main(argv, standalone_mode=False)
        cache = EmbeddingCache(Path(folder) / "cache" / "embeddings.sqlite3")
        keys = [text_hash(text) for text in texts]
        model = DenseCollaborativeModel.load(SHIPPED_MODEL)
        for manifest_path, model_id, dimension in ((MANIFEST, MODEL_ID, DIMENSION),
                                                   (FACTORS_MANIFEST, model.cache_id, len(model.item_gram))):
            held = _held(manifest_path)
            needed = [key for key in keys if key not in held]
            found = cache.lookup(model_id, needed, dimension)
            if len(found) != len(needed):
                raise SystemExit(f"the first run stored {len(found)} of {len(needed)} example rows ({model_id})")
            _append(manifest_path, {key: found[key] for key in needed})
    print(f"{len(texts)} example library texts added to both bundles")


def _held(manifest_path: Path) -> set[bytes]:
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    with np.load(manifest_path.with_name(manifest["array"]), allow_pickle=False) as data:
        return {bytes(key) for key in data["keys"]}


def _append(manifest_path: Path, rows: dict[bytes, np.ndarray]) -> None:
    """Add rows for texts a bundle does not hold yet and rewrite its manifest."""
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    array = manifest_path.with_name(manifest["array"])
    with np.load(array, allow_pickle=False) as data:
        held, vectors = data["keys"], data["vectors"]
    if rows:
        added = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(-1, 16)
        vectors = np.vstack([vectors, *rows.values()]).astype("<f4")
        np.savez(array, keys=np.vstack([held, added]), vectors=vectors)
    manifest.update(rows=len(held) + len(rows), array_sha256=file_sha256(array))
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--factors-only"]:
        bundle_factors()
        add_example_library()
    else:
        main()
