"""What the command line's scoring choices do: every model given is used or refused, never skipped."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from zotero_bridge.cli.main import cli

REPO = Path(__file__).resolve().parents[1]


def test_a_tf_idf_collaborative_model_is_refused_in_one_line_not_silently_skipped(tmp_path, monkeypatch):
    """Before: with the kept library state, `--model` naming a tf-idf model printed "hybrid with FILE"
    and then ranked without it. Now such a model (from an older zotrec) is a one-line error."""
    import numpy as np
    from scipy import sparse

    from recommender.collaborative.model import ALSSettings
    from recommender.evaluation.tfidf_peer import train_collaborative

    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    saves = sparse.csr_matrix((np.random.default_rng(0).random((12, 8)) < 0.4).astype(np.float32))
    texts = [f"graph kernel {word}" for word in "abcdefgh"]
    path = tmp_path / "tfidf-model.npz"
    train_collaborative(saves, texts, ALSSettings(factors=4, iterations=3)).save(path)
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(REPO / "examples" / "library.bib"),
                                      "--model", str(path), "-n", "3"])
    assert result.exit_code == 1
    assert "tf-idf collaborative model from an older zotrec" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
