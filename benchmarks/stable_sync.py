"""Does one action in Zotero change only what it must? `zotrec sync` to the fake Zotero desktop (local API,
tests/fake_local_api.py) with the default scoring (dense features, the shipped collaborative model, the
bundled ICML 2025 corpus) and the example library, one action at a time:

1. the first sync writes the top N;
2. the user trashes the #1 paper; the next sync should write 1 paper (the refill) and take out none;
3. the user saves one new paper of their own (one library item more); at most 3 of the N should change;
4. the user tags one paper and takes another out of the collection; the two refills, no more.

Each step prints the plan's counts and how many of the collection's papers changed. Run it on two checkouts to
compare (the same script, PYTHONPATH at the other tree):

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD python benchmarks/stable_sync.py [-n 20]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIBRARY = REPO / "examples" / "library.bib"
NAME = "Recommended · ICML 2025"


def item_json(item) -> dict:
    """A library item as the desktop holds it (a journal article with its title, abstract and authors)."""
    creators = [{"creatorType": c.creator_type, "firstName": c.first, "lastName": c.last} for c in item.creators]
    return {"itemType": "journalArticle", "title": item.title, "abstractNote": item.abstract or "", "DOI": item.doi,
            "creators": creators, "tags": [], "collections": [], "relations": {}}


def members(desktop) -> set[str]:
    """Corpus ids of the live papers in zotrec's collection."""
    library = desktop.library()
    collection = next(key for key, data in library.collections.items() if data["name"] == NAME)
    return {data["extra"].split()[1] for data in library.items.values()
            if collection in data.get("collections", []) and not data.get("deleted") and "zotrec:" in
            str(data.get("extra") or "")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20)
    top_n = parser.parse_args().n
    folder = tempfile.mkdtemp(prefix="zotrec-stable-")
    os.environ.update(ZOTREC_CACHE_DIR=f"{folder}/cache", ZOTREC_DATA_DIR=f"{folder}/data",
                      ZOTREC_CONFIG_DIR=f"{folder}/config", PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    sys.path.insert(0, str(REPO))
    from tests.fake_local_api import FakeLocalZotero
    from recommender.pipeline.build import default_built
    from zotero_bridge.sources import SourceOptions
    from zotero_bridge.sources.files import read_library_file
    from zotero_bridge.sync.run import SyncRequest, local_transport, run_sync

    items, _ = read_library_file(LIBRARY)
    held_out, items = items[-1], items[:-1]
    recommender = default_built(features="dense").recommender
    desktop = FakeLocalZotero().start()
    desktop.dialog = ["always"]
    library = desktop.library()
    for item in items:
        desktop.add_item(library, **item_json(item))

    def sync(step: str) -> dict:
        before = members(desktop) if any(d.get("name") == NAME for d in library.collections.values()) else set()
        report = run_sync(SyncRequest(recommender, SourceOptions(), NAME, top_n=top_n,
                                      memory_path=Path(folder) / "history.sqlite",
                                      transport=local_transport(desktop.url)))
        counts = {a: len(report.plan.of(a)) for a in ("add", "link", "keep", "remove", "trash", "skip")
                  if report.plan.of(a)}
        after = members(desktop)
        row = {"step": step, "plan": counts, "in": len(after - before), "out": len(before - after),
               "collection": len(after)}
        print(json.dumps(row, ensure_ascii=False), flush=True)
        return row

    try:
        sync("first sync")
        ranked = sorted((d for d in library.items.values() if "zotrec:" in str(d.get("extra") or "")),
                        key=lambda d: -float(d["extra"].split("score=")[1].split()[0]))
        desktop.trash_item(library, ranked[0]["key"])
        sync("after trashing #1")
        desktop.add_item(library, **item_json(held_out))
        sync("after one new library item")
        live = [d for d in ranked[1:] if not library.items[d["key"]].get("deleted")]
        desktop.edit_item(library, live[0]["key"], tags=[*live[0]["tags"], {"tag": "to-read"}])
        collection = next(key for key, data in library.collections.items() if data["name"] == NAME)
        desktop.edit_item(library, live[1]["key"],
                          collections=[c for c in live[1]["collections"] if c != collection])
        sync("after one tag and one taken out")
    finally:
        desktop.stop()


if __name__ == "__main__":
    main()
