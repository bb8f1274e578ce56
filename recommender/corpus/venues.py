"""The venue table: what `zotrec corpus fetch NAME` fetches (a PMLR volume, OpenReview venue ids; a stream
such as `arxiv:cs.LG` is recommender/corpus/stream.py's).

A named venue (`icml2025`) is one row. Any other PMLR volume (`pmlr:v235`) or public OpenReview
venue id (`openreview:NeurIPS.cc/2025/Conference`) is fetched the same way by its name. The PMLR
BibTeX is the primary source (every paper, with abstract and OpenReview id, no login); OpenReview
adds the presentation type and its PDF link when it answers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from recommender.errors import InputError

OPENREVIEW_API = "https://api2.openreview.net"
OPENREVIEW_SITE = "https://openreview.net"
PMLR_SITE = "https://proceedings.mlr.press"
DATA = Path(__file__).resolve().parents[1] / "data"
BUNDLED_ICML2025 = DATA / "icml2025.jsonl"
BUNDLED_SEEDS = DATA / "icml2025_seeds"
SEED_MATCHES = DATA / "icml2025_seed_matches.json"  # seed abstract id → its paper in BUNDLED_ICML2025
_VOLUME = re.compile(r"^v\d{1,4}$")
_VENUE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9._-]+)+$")


@dataclass(frozen=True)
class Venue:
    """Where one conference's papers come from, and the corpus name they are stored under."""

    name: str
    label: str
    year: int | None = None
    pmlr_volume: str = ""
    bibtex_url: str = ""
    venue_ids: tuple[str, ...] = ()
    openreview_api: str = OPENREVIEW_API
    links: Path | None = None  # a bundled list that knows the real PMLR ids, by OpenReview id


VENUES = {
    "icml2025": Venue(
        name="icml2025", label="ICML 2025", year=2025, pmlr_volume="v267",
        bibtex_url="https://raw.githubusercontent.com/mlresearch/v267/main/icml25.bib",
        venue_ids=("ICML.cc/2025/Conference", "ICML.cc/2025/Position_Paper_Track"),
        links=BUNDLED_ICML2025,
    ),
}


def resolve_venue(name: str) -> Venue | None:
    """A row of the table, `pmlr:vNNN`, `openreview:VENUE/ID`, or None for a name it does not know."""
    if name in VENUES:
        return VENUES[name]
    kind, colon, rest = name.partition(":")
    if not colon:
        return None
    if kind == "pmlr":
        if not _VOLUME.match(rest):
            raise InputError(f"'{name}': a PMLR volume looks like pmlr:v235")
        return Venue(name=f"pmlr-{rest}", label=f"PMLR {rest}", pmlr_volume=rest,
                     bibtex_url=f"{PMLR_SITE}/{rest}/assets/bib/bibliography.bib")
    if kind == "openreview":
        if not _VENUE_ID.match(rest):
            raise InputError(f"'{name}': an OpenReview venue id looks like openreview:NeurIPS.cc/2025/Conference")
        year = next((int(part) for part in rest.split("/") if re.fullmatch(r"(19|20)\d\d", part)), None)
        slug = re.sub(r"[^a-z0-9.]+", "-", rest.lower()).strip("-")[:64]
        return Venue(name=slug, label=rest.split("/")[0].split(".")[0] + (f" {year}" if year else ""),
                     year=year, venue_ids=(rest,))
    from recommender.streams import stream_names

    raise InputError(f"'{name}': unknown source '{kind}:' (use pmlr:vNNN, openreview:VENUE_ID or a stream: "
                     f"{stream_names()})")


def known_names() -> str:
    from recommender.streams import stream_names

    return ", ".join([*VENUES, "pmlr:vNNN", "openreview:VENUE_ID", stream_names()])


@lru_cache(maxsize=4)
def pmlr_links(path: Path) -> dict[str, dict[str, str]]:
    """OpenReview id → the paper's real PMLR id, page and PDF, from a bundled list."""
    links = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else {}
        if row.get("openreview_id") and row.get("pmlr_id"):
            links[row["openreview_id"]] = {"pmlr_id": row["pmlr_id"], "pmlr_url": row.get("pmlr_url") or "",
                                           "pdf_url": row.get("pdf_url") or ""}
    return links


@lru_cache(maxsize=1)
def seed_matches() -> dict[str, str]:
    """Seed abstract id → the bundled paper it is (benchmarks/tools/build_seed_matches.py): the seeds are
    abstracts without titles, and matching them by text alone leaves some unsure."""
    try:
        matches = json.loads(SEED_MATCHES.read_text(encoding="utf-8")).get("matches", {})
    except (OSError, ValueError, AttributeError):
        return {}  # a damaged install: the seeds are matched by their text, as any seed file is
    return {str(k): str(v) for k, v in matches.items()} if isinstance(matches, dict) else {}


def pmlr_page(volume: str, pmlr_id: str) -> tuple[str, str]:
    """The page and PDF of a paper whose real PMLR id is known."""
    return f"{PMLR_SITE}/{volume}/{pmlr_id}.html", f"{PMLR_SITE}/{volume}/{pmlr_id}/{pmlr_id}.pdf"
