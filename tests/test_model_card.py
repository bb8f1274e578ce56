"""A collaborative model's card (recommender/collaborative/card.py): read once when the model loads, and its
content — not its provenance — names everything derived from it (issue 32: a model that copies the shipped
model's provenance but has other factors must not share the shipped model's cache entries)."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel
from recommender.errors import InputError
from recommender.scoring.corpus_side import factors_name

pytestmark = pytest.mark.skipif(not SHIPPED_MODEL.exists(), reason="the shipped model is not in this checkout")


def _copy_with_other_factors(path):
    """The shipped model's every field and provenance, its neighbours' factors changed."""
    with np.load(SHIPPED_MODEL, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["neighbour_factors"] = (arrays["neighbour_factors"].astype(np.float32)[::-1] * 2).astype(np.float16)
    np.savez_compressed(path, **arrays)
    return path


def test_a_model_with_the_shipped_provenance_but_other_factors_has_its_own_cache_id(tmp_path):
    shipped = DenseCollaborativeModel.load(SHIPPED_MODEL)
    other = DenseCollaborativeModel.load(_copy_with_other_factors(tmp_path / "other.npz"))
    assert other.provenance == shipped.provenance
    assert other.cache_id != shipped.cache_id and factors_name(other) != factors_name(shipped)
    assert DenseCollaborativeModel.load(SHIPPED_MODEL).cache_id == shipped.cache_id  # stable run to run


def test_the_card_holds_what_scoring_reads(tmp_path):
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    card = model.card
    assert card.fusion_weights == {name: float(v) for name, v in model.provenance["fusion_weights"].items()}
    assert card.adapter_beta == float(model.provenance["adapter_beta"]) and card.encoder_id == model.encoder_id
    assert card.data == model.provenance["data"]


def test_a_weight_that_is_not_a_number_is_a_one_line_error_at_load(tmp_path):
    with np.load(SHIPPED_MODEL, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["provenance"] = np.array('{"fusion_weights": {"learned": "lots"}}')
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(InputError, match="not a number"):
        DenseCollaborativeModel.load(tmp_path / "bad.npz")
