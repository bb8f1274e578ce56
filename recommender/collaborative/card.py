"""A collaborative model's card: what scoring reads from it (the fused and fine weights, the adapter's β, the
encoder its map was fitted on, what it was trained on) and a digest of its content, read once when a model
loads instead of probed from its free-form provenance wherever a signal needs it.

The content digest names everything derived from the model (its predicted factors in the embedding cache,
beside a prepared corpus and in the kept library state): two models with the same provenance but other
arrays never share a cache entry (issue 32), and one model keeps its entries however it is renamed.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recommender.errors import InputError


@dataclass(frozen=True)
class ModelCard:
    encoder_id: str
    content: str  # hex digest of the arrays (or the file) the predicted factors come from
    fusion_weights: Mapping[str, float] = field(default_factory=dict)  # {} : none stored (an older model)
    fine_weights: Mapping[str, float] | None = None  # None: the shipped defaults (fusion.FINE_WEIGHTS)
    adapter_beta: float = 0.0  # 0: no adapter (models made before it)
    data: str = ""  # the data it was trained on, for the list's header

    @classmethod
    def read(cls, provenance: Mapping, encoder_id: str, content: str, path=None) -> ModelCard:
        """The card of a model with this provenance; a weight that is not a number is a one-line error."""
        try:
            fusion = {str(name): float(value) for name, value in (provenance.get("fusion_weights") or {}).items()}
            fine = provenance.get("fine_weights")
            fine = None if fine is None else {str(name): float(value) for name, value in fine.items()}
            beta = float(provenance.get("adapter_beta", 0.0))
        except (TypeError, ValueError, AttributeError) as error:
            raise InputError(f"the model's provenance has a weight that is not a number ({error})", path=path) from None
        return cls(encoder_id=encoder_id, content=content, fusion_weights=fusion, fine_weights=fine,
                   adapter_beta=beta, data=str(provenance.get("data", "")))


MAX_FIELD_DEPTH = 100  # the settings and provenance nest 2 deep; any answer's JSON is bounded at 100 too


def model_json(text: str, name: str) -> dict:
    """A JSON field of a model file (settings, provenance) as an object; its depth is measured before it is
    parsed (a provenance of 100,000 `[` made the parser recurse into a traceback), as any answer's is."""
    from recommender.bounded_http import JsonDepth
    from recommender.errors import ServerLimitError

    try:
        JsonDepth(MAX_FIELD_DEPTH, name).feed(text.encode("utf-8", "surrogatepass"))
    except ServerLimitError:
        raise ValueError(f"field '{name}' is JSON nested more than {MAX_FIELD_DEPTH} deep") from None
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"field '{name}' is not a JSON object")
    return value


def file_content(path: Path) -> str:
    """The digest of a model file's arrays: every array's name, size and CRC-32 of its bytes as the .npz
    (a zip) records them, read from the archive's directory without decoding an array (hashing the 8 MB
    shipped file instead cost 7–20 ms of every run)."""
    with zipfile.ZipFile(path) as archive:
        members = sorted((info.filename, info.file_size, info.CRC) for info in archive.infolist())
    return hashlib.sha256(repr(members).encode()).hexdigest()


def arrays_content(*arrays) -> str:
    """The digest of a model's arrays in memory (a model trained in this process)."""
    hasher = hashlib.sha256()
    for array in arrays:
        if array is not None:
            array = np.ascontiguousarray(array)
            hasher.update(f"{array.dtype.str}{array.shape}".encode() + memoryview(array).cast("B"))
    return hasher.hexdigest()
