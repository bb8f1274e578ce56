"""Build recommender/data/icml2025_seed_matches.json: which bundled paper each seed abstract is.

    python benchmarks/tools/build_seed_matches.py [../shared/data/icml2025/seed_matches.json]

Input: the 38 seed paragraphs mapped to their papers (seed file, paragraph index → OpenReview id; 31
distinct papers; see ../shared/data/icml2025/SOURCE.md for how they were matched). Output: the seed
abstract's id as the seed reader makes it (a hash of its normalised text, so a copy of the file under
another name is still found) → the paper's id in recommender/data/icml2025.jsonl. Rerunning it on the
same input gives the same bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from recommender.corpus.readers import _read_seed  # noqa: E402
from recommender.formats.textfile import read_text  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "icml2025" / "seed_matches.json"
SEEDS = ROOT / "recommender" / "data" / "icml2025_seeds"
LIST = ROOT / "recommender" / "data" / "icml2025.jsonl"
TARGET = ROOT / "recommender" / "data" / "icml2025_seed_matches.json"


def build(source: Path = SOURCE) -> dict[str, str]:
    listed = {json.loads(line)["id"] for line in LIST.read_text(encoding="utf-8").splitlines() if line.strip()}
    paragraphs = {path.name: _read_seed(read_text(path), path)[0] for path in sorted(SEEDS.glob("*.txt"))}
    matches: dict[str, str] = {}
    for row in json.loads(source.read_text(encoding="utf-8")):
        seed = paragraphs[row["seed_file"]][row["seed_index"]]
        if row["paper_id"] not in listed:
            raise SystemExit(f"{row['paper_id']} ({row['title']}) is not in {LIST.name}")
        if matches.setdefault(seed.id, row["paper_id"]) != row["paper_id"]:
            raise SystemExit(f"{row['seed_file']} paragraph {row['seed_index']}: the same text, two papers")
    return dict(sorted(matches.items()))


def main(source: Path = SOURCE) -> None:
    matches = build(source)
    document = {"about": "seed abstract id (recommender.text.text_id of its text) → paper id in icml2025.jsonl; "
                         "built by benchmarks/tools/build_seed_matches.py from ../shared/data/icml2025/seed_matches.json",
                "matches": matches}
    TARGET.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(matches)} seed abstracts → {len(set(matches.values()))} papers: {TARGET}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE)
