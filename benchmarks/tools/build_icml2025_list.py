"""Build recommender/data/icml2025.jsonl, the ICML 2025 list zotrec ranks when nothing was fetched.

    python benchmarks/tools/build_icml2025_list.py [../shared/data/icml2025/papers.jsonl]

Input: the 3,330 accepted papers of PMLR volume 267 (see ../shared/data/icml2025/SOURCE.md: ids,
titles, authors, PMLR and OpenReview links; no abstracts). Output: one JSON object per line with
the paper's OpenReview forum as `url` (always valid), its real PMLR page as `pmlr_url`, the PDF,
and the icml.cc page. Titles and names are kept as given; zotrec renders them when it reads them.
Rerunning it on the same input gives the same bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared" / "data" / "icml2025" / "papers.jsonl"
TARGET = ROOT / "recommender" / "data" / "icml2025.jsonl"


def convert(row: dict) -> dict:
    forum = row.get("openreview_url")
    return {
        "id": row["id"],
        "title": row["title"],
        "authors": row["authors"],
        "url": forum or row["url"],
        "openreview_id": row.get("openreview_id"),
        "pmlr_id": row["pmlr_id"],
        "pmlr_url": row["url"],
        "pdf_url": row.get("pdf_url"),
        "icml_virtual_url": row.get("icml_virtual_url"),
        "venue": "ICML 2025",
        "year": 2025,
    }


def main(source: Path = SOURCE) -> None:
    rows = [convert(json.loads(line)) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    if len({r["id"] for r in rows}) != len(rows):
        raise SystemExit(f"{source}: duplicate ids")
    text = "".join(json.dumps({k: v for k, v in r.items() if v is not None}, ensure_ascii=False) + "\n"
                   for r in rows)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {len(rows):,} papers ({len(text.encode()) / 1e6:.1f} MB) to {TARGET}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE)
