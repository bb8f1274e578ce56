"""The MiniLM vectors of the texts zotrec ships: the bundled ICML 2025 list, so that a first run embeds only
the library, and the example library (examples/library.bib), so that the README's first command embeds nothing.

`recommender/data/embeddings/` holds one uncompressed .npz (the 16-byte text hashes of
recommender.features.cache and their float32 vectors) and a JSON manifest naming the encoder's model id,
the ONNX file's sha256 and the .npz's sha256. A vector is used only for the exact text it was made from
and only by the encoder it was made with; a file that does not match its manifest is refused in one
warning, and the texts are embedded as before. The same form holds the shipped collaborative model's
predicted factors of those texts (icml2025-factors.*, its model id the model's factor cache id), so a first
run maps only the library through the model's kNN (the example's rows are the ones its first run computed).
`benchmarks/tools/bundle_embeddings.py` regenerates the files.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

BUNDLE_DIR = Path(__file__).resolve().parents[1] / "data" / "embeddings"
MANIFEST = BUNDLE_DIR / "icml2025-minilm.json"
# The shipped collaborative model's predicted factors of the same texts (its kNN over 16,980 training items
# cost a first run about 2 s of CPU); the model id is the model's factor cache id, so another model misses.
FACTORS_MANIFEST = BUNDLE_DIR / "icml2025-factors.json"


class BundledVectors:
    """Vectors by text hash, for one encoder (model id) only."""

    def __init__(self, model_id: str, keys: np.ndarray, vectors: np.ndarray) -> None:
        self.model_id = model_id
        self.vectors = vectors
        self._rows = {bytes(key): row for row, key in enumerate(keys)}

    def __len__(self) -> int:
        return len(self._rows)

    def fill(self, model_id: str, hashes: Sequence[bytes], out: np.ndarray) -> np.ndarray:
        """Write the bundled vectors of `hashes` into the rows of `out`; returns which rows were found."""
        found = np.zeros(len(hashes), dtype=bool)
        if model_id != self.model_id or out.shape[1] != self.vectors.shape[1]:
            return found
        positions, rows = [], []
        for position, key in enumerate(hashes):
            row = self._rows.get(key)
            if row is not None:
                positions.append(position)
                rows.append(row)
        if positions:
            out[positions] = self.vectors[rows]
            found[positions] = True
        return found


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_bundle(manifest_path: Path, onnx_sha256: str) -> BundledVectors | None:
    """The bundle a manifest describes, or None (with one warning) when it is missing a file, was made
    with another model file, or its array's bytes differ from the manifest's sha256."""
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("onnx_sha256") != onnx_sha256:
            return None  # made for another model file: its vectors would be wrong, not damaged
        array_path = manifest_path.with_name(manifest["array"])
        if file_sha256(array_path) != manifest["array_sha256"]:
            log.warning("%s does not match the sha256 in its manifest: the corpus texts are embedded instead",
                        array_path)
            return None
        with np.load(array_path, allow_pickle=False) as data:
            keys, vectors = data["keys"], data["vectors"].astype(np.float32)
        if keys.shape != (len(vectors), 16) or vectors.shape[1:] != (manifest["dimension"],):
            raise ValueError(f"arrays of shape {keys.shape} and {vectors.shape}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        log.warning("bundled embeddings %s cannot be read (%s): the corpus texts are embedded instead",
                    manifest_path.parent, error)
        return None
    return BundledVectors(manifest["model_id"], keys, vectors)


@functools.lru_cache(maxsize=None)
def shipped_bundle(onnx_sha256: str) -> BundledVectors | None:
    """The package's bundle, read and verified once per process."""
    return load_bundle(MANIFEST, onnx_sha256)


@functools.lru_cache(maxsize=None)
def shipped_factors(onnx_sha256: str) -> BundledVectors | None:
    """The shipped model's factors of the bundled texts, read and verified once per process (None without)."""
    return load_bundle(FACTORS_MANIFEST, onnx_sha256) if FACTORS_MANIFEST.exists() else None
