"""The kill/fault matrix of `zotrec sync` on the desktop's local API (issue 32): every case runs the real CLI as a
process against tests/fake_local_api.py (real pyzotero, real HTTP), then runs it again, and counts what a user
would find in Zotero and in zotrec's memory.

    python benchmarks/sync_fault_matrix.py            # needs ../shared/fixtures (the seeded desktop)

Cases: killed (SIGKILL) right after each write Zotero committed, before zotrec heard the answer — on a first
sync of 30 and on the run that shrinks it to 20; the user tags one of zotrec's papers between two pages; a page
comes back empty; another database (a new Zotero-Server-ID, also "user 0") answers at the same address; the
server id changes between zotrec's read and its write. Columns: the faulted run's and the re-run's exit codes,
papers in the collection (want N, besides those the user kept there; "a → b" when a faulted run that ended
well left a), and, the worse of after the faulted run and after the re-run: duplicates, the user's own items changed, false dismissals (a paper the
memory calls dismissed that is live in the collection), and the CPU seconds, wall seconds and peak RSS of the
slowest zotrec process of the case. The last line sums the three counts that must be 0.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_local_api import FakeLocalZotero  # noqa: E402
from tests.test_local_sync import NAME, seeded  # noqa: E402
from tests.test_sync import corpus_rows  # noqa: E402

NEW_SERVER_ID = "B8N4V6C2Z5QW"


class Case:
    """One case's folder, desktop, process and counts."""

    def __init__(self, name: str) -> None:
        self.name, self.work = name, Path(tempfile.mkdtemp(prefix="zotrec-faults-"))
        self.corpus = self.work / "corpus.jsonl"
        self.corpus.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows()), encoding="utf-8")
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(self.work), "OPENBLAS_NUM_THREADS": "1",
                    "XDG_CONFIG_HOME": str(self.work / "config"), "ZOTREC_DATA_DIR": str(self.work / "data"),
                    "ZOTREC_CACHE_DIR": str(self.work / "cache"),
                    "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
        self.desktop = seeded()
        self.desktop.dialog = ["always"] * 20
        self.user_items: dict[str, str] = {}
        self.remember_user_items()
        self.process: subprocess.Popen | None = None
        self.costs: list[tuple[float, float, int]] = []  # (cpu s, wall s, peak RSS KiB) per zotrec process

    def remember_user_items(self) -> None:
        for library in self.desktop.libraries.values():
            for key, data in library.items.items():
                if {"tag": "zotrec"} not in data.get("tags", []) and not data.get("parentItem"):
                    self.user_items[f"{self.desktop.server_id}/{key}"] = json.dumps(data, sort_keys=True)

    def sync(self, n: int) -> int:
        argv = [sys.executable, "-m", "zotero_bridge", "-q", "sync", "--library", f"zotero:local:{self.desktop.url}",
                "--corpus", str(self.corpus), "--features", "tfidf", "--model", "none", "-n", str(n)]
        with open(self.work / "stdout", "wb") as out, open(self.work / "stderr", "wb") as err:
            started = time.perf_counter()
            self.process = subprocess.Popen(argv, env=self.env, cwd=self.work, stdout=out, stderr=err,
                                            start_new_session=True)
            _, status, usage = os.wait4(self.process.pid, 0)
            self.process.returncode = os.waitstatus_to_exitcode(status)
        self.costs.append((usage.ru_utime + usage.ru_stime, time.perf_counter() - started, usage.ru_maxrss))
        return self.process.returncode

    def kill_after_write(self, number: int) -> None:
        """SIGKILL zotrec right after Zotero committed its `number`-th write, before the answer leaves."""
        seen = {"writes": 0}

        def kill(fake: FakeLocalZotero, result: dict) -> None:
            seen["writes"] += 1
            if seen["writes"] == number and self.process is not None:
                fake.after_write = None
                os.killpg(self.process.pid, signal.SIGKILL)
                time.sleep(0.2)

        self.desktop.after_write = kill

    # ---- what a user finds -------------------------------------------------------------------------------
    def ours(self):
        library = self.desktop.library()
        collections = [k for k, d in library.collections.items() if d["name"] == NAME]
        items = [d for d in library.items.values() if d["itemType"] != "note" and {"tag": "zotrec"} in d["tags"]
                 and not d.get("deleted")]
        members = [d for d in items if collections and collections[0] in d.get("collections", [])]
        return collections, items, members

    def counts(self) -> dict[str, int]:
        collections, items, members = self.ours()
        ids = Counter(str(d.get("extra", "")).split()[1] for d in items if str(d.get("extra", "")).startswith("zotrec:"))
        duplicates = sum(c - 1 for c in ids.values()) + max(len(collections) - 1, 0)
        touched = 0
        for library in self.desktop.libraries.values():
            for key, data in library.items.items():
                before = self.user_items.get(f"{self.desktop.server_id}/{key}")
                touched += before is not None and before != json.dumps(data, sort_keys=True)
        for name, before in self.user_items.items():
            server, key = name.split("/")
            touched += server == self.desktop.server_id and not any(key in lib.items
                                                                    for lib in self.desktop.libraries.values())
        kept = sum(1 for d in members if any(t.get("tag") != "zotrec" for t in d.get("tags", [])))
        return {"members": len(members) - kept, "kept by you": kept, "duplicates": duplicates, "touched": touched,
                "false dismissals": self.false_dismissals()}

    def false_dismissals(self) -> int:
        """Papers the memory calls dismissed, in any library: no case trashes, removes or deletes one, so
        every dismissal is false (a live paper, or one of another database counted against this one)."""
        path = self.work / "data" / "history.sqlite"
        if not path.exists():
            return 0
        with sqlite3.connect(path) as db:
            return db.execute("SELECT COUNT(*) FROM papers WHERE fate = 'dismissed'").fetchone()[0]

    def close(self) -> None:
        self.desktop.stop()


def file_pdfs(case: Case, count: int = 120) -> None:
    """The user files PDFs (not papers): they sort before zotrec's items and push them to the second page."""
    library = case.desktop.library()
    for number in range(count):
        case.desktop.add_item(library, itemType="attachment", title=f"scan-{number}.pdf", linkMode="imported_file",
                              dateModified=case.desktop.now())
    case.remember_user_items()


def user_reads_their_papers(case: Case, pdfs: int = 70) -> None:
    """The user tags their own papers and files PDFs after zotrec's run: 10 of zotrec's 30 stay on the first
    page, 20 go to the second (the one that comes back empty)."""
    library = case.desktop.library()
    for key, data in list(library.items.items()):
        if {"tag": "zotrec"} not in data.get("tags", []) and not data.get("parentItem") and not data.get("deleted") \
                and data["itemType"] not in ("note", "attachment"):
            case.desktop.edit_item(library, key, tags=[*data.get("tags", []), {"tag": "read"}])
    file_pdfs(case, pdfs)


def clean_writes(n: int, then: int | None = None) -> int:
    """How many writes a clean run makes (the first sync of `n`, or the shrink to `then` after it)."""
    case = Case("count")
    try:
        seen = {"writes": 0}
        if then is not None:
            case.sync(n)
        case.desktop.after_write = lambda fake, result: seen.__setitem__("writes", seen["writes"] + 1)
        case.sync(then if then is not None else n)
        return seen["writes"]
    finally:
        case.close()


def run_case(name: str, n: int, setup, fault, final_n: int | None = None) -> dict:
    case = Case(name)
    try:
        setup(case)
        fault(case)
        faulted = case.sync(n)
        between = case.counts()  # what the user finds after the faulted run (a killed run: mid-write)
        desktop = case.desktop
        desktop.after_write, desktop.before_write, desktop.between_pages, desktop.short_pages = None, None, None, 0
        rerun = case.sync(final_n or n)
        counts = case.counts()
        cpu, wall, rss = max(case.costs, key=lambda cost: cost[1])
        for name_ in ("duplicates", "touched", "false dismissals"):  # the worse of the two moments
            counts[name_] = max(counts[name_], between[name_])
        if faulted == 0 and between["members"] != n:
            counts["members"] = f"{between['members']} → {counts['members']}"
        return {"case": name, "faulted rc": faulted, "re-run rc": rerun, "n": final_n or n, **counts,
                "cpu s": cpu, "wall s": wall, "peak MiB": rss / 1024}
    finally:
        case.close()


def tag_between_pages(case: Case) -> None:
    _, items, _ = case.ours()
    tagged = min(items, key=lambda d: d["extra"])

    def tag(fake: FakeLocalZotero, start: int) -> None:
        if start == 100 and fake.between_pages is not None:
            fake.between_pages = None
            fake.edit_item(fake.library(), tagged["key"], tags=[*tagged["tags"], {"tag": "to-read"}])

    case.desktop.between_pages = tag


def new_database(case: Case) -> None:
    """Another database answers at the same address: another server id, its own items, also "user 0"."""
    other = seeded(server_id=NEW_SERVER_ID)
    other.stop()
    case.desktop.server_id, case.desktop.libraries = NEW_SERVER_ID, copy.deepcopy(other.libraries)
    case.remember_user_items()


def new_id_before_the_write(case: Case) -> None:
    """The database behind the address changes after zotrec read it, before its first write."""
    def switch(fake: FakeLocalZotero) -> None:
        fake.before_write = None
        new_database(case)

    case.desktop.before_write = switch


def main() -> None:
    import socketserver

    socketserver.BaseServer.handle_error = lambda *args: None  # the fake's answers to a killed zotrec: no noise
    first, shrink = clean_writes(30), clean_writes(30, then=20)
    rows = []
    for k in range(1, first + 1):
        rows.append(run_case(f"first sync of 30, killed after write {k}/{first}", 30, lambda c: None,
                             lambda c, k=k: c.kill_after_write(k)))
    for k in range(1, shrink + 1):
        rows.append(run_case(f"30 → 20, killed after write {k}/{shrink}", 20, lambda c: c.sync(30),
                             lambda c, k=k: c.kill_after_write(k)))
    rows.append(run_case("a paper tagged between two pages", 30, lambda c: (c.sync(30), file_pdfs(c)),
                         tag_between_pages))
    rows.append(run_case("an empty page", 30, lambda c: (c.sync(30), user_reads_their_papers(c)),
                         lambda c: setattr(c.desktop, "short_pages", 1)))
    rows.append(run_case("a new server id (another database)", 30, lambda c: c.sync(30), new_database))
    rows.append(run_case("server id changes between read and write", 30, lambda c: c.sync(20),
                         new_id_before_the_write))
    header = ("case", "faulted rc", "re-run rc", "n", "members", "kept by you", "duplicates", "touched", "false dismissals",
              "cpu s", "wall s", "peak MiB")
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(f"{row[h]:.1f}" if isinstance(row[h], float) else str(row[h]) for h in header))
    bad = sum(row["duplicates"] + row["touched"] + row["false dismissals"] for row in rows)
    short = sum(row["members"] != row["n"] for row in rows)
    print(f"{len(rows)} cases: {sum(r['duplicates'] for r in rows)} duplicates, {sum(r['touched'] for r in rows)} "
          f"user items touched, {sum(r['false dismissals'] for r in rows)} false dismissals, {short} collections "
          f"not at N, {sum(r['re-run rc'] != 0 for r in rows)} re-runs failed; self time "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_utime:.1f} s CPU")
    sys.exit(1 if bad or short else 0)


if __name__ == "__main__":
    main()
