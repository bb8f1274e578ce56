"""Issue 37's speed target for every daily source, as whole `zotrec daily` processes (wall, CPU, peak RSS): a
1,000-item library, a day of 500 new papers from each source (fetched from its local double, embedded, ranked),
then a day with nothing new. Targets: the 500-paper day ≤ 60 s CPU, the empty day ≤ 3 s CPU, on 2 cores.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/stream_days.py [--sources arxiv zotero-feeds]
        [--papers 500] [--items 1000] [--json OUT]

Sources: `arxiv` (tests/fake_arxiv.py over real HTTP), `feed` (a journal's RSS 1.0 feed, tests/fake_feed.py:
one 304 on a day with nothing new), `medrxiv`, `pubmed`, `openalex` (tests/fake_biorxiv.py, fake_pubmed.py,
fake_openalex.py), each service's own pause kept, and `zotero-feeds` (the unread items of the feeds a
zotero.sqlite follows, built from Zotero's real schema by tests/zotero_db.py; the library is the same
database's 1,000 items). Day 0 is the first run (the library is embedded too), day 1 brings `--papers` new
ones, day 2 none; between days the daily state and the seen memory move one day back (benchmarks/lib/days.py).
Texts are real CiteULike-a titles; a paper's abstract is eight other titles in a row (~100 words).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.lib.days import a_night_passes, day_papers  # noqa: E402
from benchmarks.measure import environment, load_text, measure, zotrec_command  # noqa: E402
from benchmarks.synthetic import library_titles, read_titles, write_library  # noqa: E402


class ArxivDays:
    """arXiv cs.LG from the local double; the library a JSON Lines file of real titles."""

    name = "arxiv"

    def __init__(self, work: Path, items: int, titles: list[str]) -> None:
        from tests.fake_arxiv import FakeArxiv

        self.titles, self.fake = titles, FakeArxiv()
        self.url = self.fake.start()
        self.library = write_library(work / "library.jsonl", items, titles)

    def argv(self) -> list[str]:
        return ["--library", str(self.library), "--corpus", "arxiv:cs.LG", "--from", self.url]

    def add_day(self, day: int, count: int, when: datetime) -> None:
        self.fake.add(*day_papers(self.titles, day, count, when))

    def requests(self) -> int:
        return len(self.fake.requests)

    def stop(self) -> None:
        self.fake.stop()


class ZoteroFeedDays:
    """Two feeds of a zotero.sqlite whose user library holds the 1,000 items; a day's papers arrive unread."""

    name = "zotero-feeds"

    def __init__(self, work: Path, items: int, titles: list[str]) -> None:
        from tests.zotero_db import ZoteroDatabase

        self.titles, self.path = titles, work / "zotero.sqlite"
        db = ZoteroDatabase(self.path, seed=37)
        for number, title in enumerate(library_titles(items, titles)):
            db.add_item("journalArticle", {"title": title}, creators=[("Ada", f"Lovelace{number % 97}")])
        self.feeds = [db.add_feed("Journal A"), db.add_feed("Journal B")]
        db.close()

    def argv(self) -> list[str]:
        return ["--library", str(self.path), "--corpus", "zotero:feeds"]

    def add_day(self, day: int, count: int, when: datetime) -> None:
        from tests.zotero_db import ZoteroDatabase, multipart_date

        db = ZoteroDatabase.open(self.path)
        for number, paper in enumerate(day_papers(self.titles, day, count, when)):
            stamp = paper.published.strftime("%Y-%m-%d %H:%M:%S")
            db.add_feed_item(self.feeds[number % 2], f"https://journal.example/{paper.base}", {
                "title": paper.title, "abstractNote": paper.abstract, "date": multipart_date(stamp[:10], stamp),
                "url": f"https://journal.example/{paper.base}", "DOI": f"10.5555/{paper.base}"})
        db.close()

    def requests(self) -> int:
        return 0  # Zotero fetched the feeds; zotrec reads the database

    def stop(self) -> None:
        pass


def _printable(text: str) -> str:
    return "".join(ch for ch in text if ch >= " " or ch in "\t\n")


class WebDays:
    """A web stream's double (tests/fake_*.py, h-web) on 127.0.0.1, its base URL handed over in the environment;
    the library the same JSON Lines file as arXiv's."""

    name, option, api_env = "", "", ""

    def __init__(self, work: Path, items: int, titles: list[str]) -> None:
        self.titles, self.fake = titles, self.make()
        self.url = self.fake.start()
        self.library = write_library(work / "library.jsonl", items, titles)

    def argv(self) -> list[str]:
        return ["--library", str(self.library), "--corpus", self.option]

    def env(self) -> dict[str, str]:
        return {self.api_env: self.url} if self.api_env else {}

    def texts(self, day: int, count: int, when: datetime):
        """The day's (id, title, abstract, date); control characters (one CiteULike title has a \\x03) dropped,
        as no real service's XML or JSON carries them."""
        for paper in day_papers(self.titles, day, count, when):
            yield paper.base, _printable(paper.title), _printable(paper.abstract), paper.published

    def requests(self) -> int:
        return len(self.fake.requests)

    def stop(self) -> None:
        self.fake.stop()


class FeedDays(WebDays):
    name = "feed"

    def make(self):
        from tests.fake_feed import FakeFeed

        return FakeFeed()

    def argv(self) -> list[str]:
        return ["--library", str(self.library), "--corpus", f"feed:{self.url}"]

    def add_day(self, day: int, count: int, when: datetime) -> None:
        from tests.fake_feed import Item

        if count:
            self.fake.publish(*[Item(f"10.1038/s41591-{base}", title, stamp, abstract=abstract)
                                for base, title, abstract, stamp in self.texts(day, count, when)], when=when)


class MedrxivDays(WebDays):
    name, option, api_env = "medrxiv", "medrxiv:radiology", "ZOTREC_BIORXIV_API"

    def make(self):
        from tests.fake_biorxiv import FakeBiorxiv

        return FakeBiorxiv()

    def add_day(self, day: int, count: int, when: datetime) -> None:
        from tests.fake_biorxiv import Preprint

        self.fake.preprints += [Preprint(f"10.1101/{stamp:%Y.%m.%d}.{base.replace('.', '')}", title, stamp.date(),
                                         abstract=abstract) for base, title, abstract, stamp in
                                self.texts(day, count, when)]


class PubmedDays(WebDays):
    name, option, api_env = "pubmed", "pubmed:imaging", "ZOTREC_PUBMED_API"

    def make(self):
        from tests.fake_pubmed import FakePubmed

        return FakePubmed()

    def add_day(self, day: int, count: int, when: datetime) -> None:
        from tests.fake_pubmed import Record

        self.fake.records += [Record(str(40_000_000 + day * count + n), title, stamp.date(),
                                     sections=(("BACKGROUND", "Imaging. " + abstract),))
                              for n, (_, title, abstract, stamp) in enumerate(self.texts(day, count, when))]


class OpenAlexDays(WebDays):
    name, option, api_env = "openalex", "openalex:topic:T10017", "ZOTREC_OPENALEX_API"

    def make(self):
        from tests.fake_openalex import FakeOpenAlex

        return FakeOpenAlex()

    def env(self) -> dict[str, str]:
        return {**super().env(), "OPENALEX_API_KEY": "benchmark-key"}

    def add_day(self, day: int, count: int, when: datetime) -> None:
        from tests.fake_openalex import Work

        self.fake.works += [Work(4_400_000_000 + day * count + n, title, stamp.date(), abstract=abstract)
                            for n, (_, title, abstract, stamp) in enumerate(self.texts(day, count, when))]


SOURCES = {source.name: source
           for source in (ArxivDays, ZoteroFeedDays, FeedDays, MedrxivDays, PubmedDays, OpenAlexDays)}


def candidates(data: Path, cache: Path) -> int:
    """Papers the day ranked from: the stored stream corpus, or the unread feed items zotrec wrote."""
    from recommender.corpus.store import read_stored

    stored = sum(len(read_stored(path).papers) for path in (data / "corpora").glob("*.json"))
    return stored + sum(len(path.read_text(encoding="utf-8").splitlines())
                        for path in (cache / "feeds").glob("*.jsonl"))


def run_source(source_class, papers: int, items: int, titles: list[str]) -> list[dict]:
    work = Path(tempfile.mkdtemp(prefix=f"zotrec-{source_class.name}-days-"))
    data, cache = work / "data", work / "cache"
    source = source_class(work, items, titles)
    env = {**environment(cache), "ZOTREC_DATA_DIR": str(data), **getattr(source, "env", dict)()}
    now = datetime.now(UTC)
    rows = []
    try:
        argv = [*zotrec_command(), "daily", *source.argv(), "-n", "20", "--atom", str(work / "day.xml")]
        for day, (label, new) in enumerate([("day 0: first run, library embedded too", papers),
                                            (f"day 1: {papers} new papers", papers), ("day 2: nothing new", 0)]):
            source.add_day(day, new, now - timedelta(days=2 - day, hours=1))
            if day:
                a_night_passes(data)
            before = source.requests()
            row = measure(f"{source.name} {label}", argv, 1, env=env)
            rows.append({"source": source.name, "run": label, "wall_s": round(row.median_s, 2),
                         "cpu_s": round(row.median_cpu_s, 2), "peak_mb": round(row.peak),
                         "requests": source.requests() - before, "candidates": candidates(data, cache),
                         "delivered": (work / "day.xml").read_text(encoding="utf-8").count("<entry>")})
    finally:
        source.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="+", choices=sorted(SOURCES), default=sorted(SOURCES))
    parser.add_argument("--papers", type=int, default=500)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    titles = read_titles()
    rows = []
    for name in args.sources:
        try:
            rows += run_source(SOURCES[name], args.papers, args.items, titles)
        except RuntimeError as error:  # one source's failure is a row, not the end of the others
            print(f"{name}: {error}", file=sys.stderr, flush=True)
            rows.append({"source": name, "run": f"failed: {str(error)[-200:]}", "wall_s": "", "cpu_s": "",
                         "peak_mb": "", "requests": "", "candidates": "", "delivered": ""})
    print(f"\n{load_text()}; {args.items}-item library, {args.papers} papers a day, dense features")
    print("| source | run | wall s | CPU s | peak RSS MB | requests | candidates | delivered |\n"
          "|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['source']} | {row['run']} | {row['wall_s']} | {row['cpu_s']} | {row['peak_mb']} | "
              f"{row['requests']} | {row['candidates']} | {row['delivered']} |")
    if args.json:
        args.json.write_text(json.dumps({"load": load_text(), "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
