"""Record the five-fold weight choice (benchmarks/weight_choice.py --json FILE) in the shipped collaborative model's
card, then refresh the bundled factors' manifest (its model id is a digest of the model file's members).

    OPENBLAS_NUM_THREADS=1 python benchmarks/tools/set_default_weights.py docs/evaluation-weights.json

Only the provenance changes: every array is copied as stored, so no score of the model moves, only the weights
read from its card (collaborative/card.py) and the cache id derived from the file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_embeddings import bundle_factors  # noqa: E402
from recommender.collaborative.dense_model import SHIPPED_MODEL  # noqa: E402
from recommender.store.files import write_npz  # noqa: E402


def main(choice_file: str) -> None:
    choice = json.loads(Path(choice_file).read_text(encoding="utf-8"))
    with np.load(SHIPPED_MODEL, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    provenance = json.loads(str(arrays["provenance"]))
    provenance["fusion_weights"] = {name: round(float(value), 4)
                                    for name, value in choice["default"]["fusion_weights"].items()}
    provenance["fine_weights"] = {name: round(float(value), 4)
                                  for name, value in choice["default"]["fine_weights"].items() if value > 0}
    provenance["weights_chosen_on"] = ("five item-cold folds of citeulike-a and citeulike-t: of the weightings within "
                                       "one standard error of the best validation recall@50, the one chosen by "
                                       f"{choice.get('chosen_by', 'the CiteULike hard-candidate order loss')} "
                                       f"({choice['made_by']})")
    arrays["provenance"] = np.array(json.dumps(provenance))
    write_npz(SHIPPED_MODEL, arrays, compressed=True)
    print(f"{SHIPPED_MODEL}: fusion {provenance['fusion_weights']}, fine {provenance['fine_weights']}")
    bundle_factors()


if __name__ == "__main__":
    main(sys.argv[1])
