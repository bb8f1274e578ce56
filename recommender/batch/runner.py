"""Batch scoring: many users' libraries against one corpus with one Recommender, in bounded memory.

The corpus features (and the corpus's identity keys for "already owned") are computed once;
libraries are loaded, scored and written a chunk of users at a time, so memory does not grow
with the number of users. Each user's ranking is the one `Recommender.recommend` gives.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

import numpy as np

from recommender.batch.output import ScoreWriter, render_user_block
from recommender.errors import RecommenderError, SettingError
from recommender.items import LibraryItem, Paper, Recommendation
from recommender.scoring.caches import NO_CACHES, ScoringCaches
from recommender.scoring.feedback import CorpusMatcher, group_note
from recommender.pipeline import Library, RankOptions, rank
from recommender.scoring.ranking import DEFAULT_TOP_N, Recommender
from recommender.scoring.steering import Steering

log = logging.getLogger(__name__)

DEFAULT_CHUNK_USERS = 16
Source = TypeVar("Source")
Progress = Callable[[int, int], None]


class BatchScorer:
    """One Recommender shared by every user (corpus features and keys computed once), and the steering
    (prefer / avoid texts, recency) every user's ranking gets."""

    def __init__(self, recommender: Recommender, *, top_n: int = DEFAULT_TOP_N,
                 steering: Steering | None = None, caches: ScoringCaches = NO_CACHES) -> None:
        if top_n < 0:
            raise SettingError("top_n must be 0 (every paper) or more")
        self.recommender = recommender
        self.caches = replace(caches, keep_encoder=True)  # many users: keep the model loaded between them
        self.top_n = top_n
        self.steering = steering
        self.corpus = recommender.corpus
        self.index_of = {paper.id: index for index, paper in enumerate(self.corpus)}
        self._match = CorpusMatcher(self.corpus)

    def saved(self, library: Library | Sequence[LibraryItem]) -> np.ndarray:
        """Corpus indices of the papers this user saved, by the group signal's rule (DOI or normalised title)."""
        found = {self.index_of[paper] for item in as_library(library).items
                 if (paper := self._match(item.doi, item.title))}
        return np.array(sorted(found), dtype=np.int64)

    def score(self, library: Library | Sequence[LibraryItem]) -> list[Recommendation]:
        """This user's ranked recommendations (top_n of them; all when top_n is 0) by the one ranking function
        (recommender/pipeline): exactly `zotrec reading-list`'s list for that library, feedback included."""
        return rank(self.recommender, as_library(library), RankOptions(top_n=self.top_n, steering=self.steering),
                    self.caches)


def as_library(library: Library | Sequence[LibraryItem]) -> Library:
    """A loader's answer as the ranking takes it: a Library, or plain items (no feedback)."""
    return library if isinstance(library, Library) else Library(items=list(library))


class GroupSummary:
    """Per paper: how many users have it in their top K and its mean rank among them, and how many users saved
    it already (the group signal's count: "saved by 3 members of <group>")."""

    def __init__(self, corpus: Sequence[Paper], name: str = "") -> None:
        self.corpus = list(corpus)
        self.name = name
        self.index_of = {paper.id: index for index, paper in enumerate(self.corpus)}
        self.users = np.zeros(len(self.corpus), dtype=np.int64)
        self.rank_sums = np.zeros(len(self.corpus), dtype=np.float64)
        self.saved = np.zeros(len(self.corpus), dtype=np.int64)
        self.members = 0

    def add(self, indices: np.ndarray, ranks: np.ndarray, saved: np.ndarray | None = None) -> None:
        """One user's papers (corpus indices) and their ranks, and the corpus papers in their library."""
        self.members += 1
        np.add.at(self.users, indices, 1)
        np.add.at(self.rank_sums, indices, ranks)
        self.add_saved(saved)

    def add_saved(self, saved: np.ndarray | None) -> None:
        """The corpus papers one user saved (a resumed user's library is read again for this alone)."""
        if saved is not None and len(saved):
            self.saved[saved] += 1

    def add_row(self, row: Mapping[str, Any]) -> None:
        """A row read back from an earlier run's file (members are counted by `add_member`)."""
        index = self.index_of.get(str(row["id"]))
        if index is not None:
            self.users[index] += 1
            self.rank_sums[index] += int(row["rank"])

    def rows(self) -> list[dict[str, Any]]:
        """Papers anyone has in their top K (most users first, then lower mean rank, then corpus order), then
        papers only saved (most savers first): a paper is not recommended to those who have it."""
        picked = np.flatnonzero(self.users)
        mean_ranks = self.rank_sums[picked] / self.users[picked]
        order = picked[np.lexsort((picked, mean_ranks, -self.users[picked]))]
        only_saved = np.flatnonzero((self.users == 0) & (self.saved > 0))
        order = np.concatenate([order, only_saved[np.lexsort((only_saved, -self.saved[only_saved]))]])
        mean = dict(zip(picked.tolist(), mean_ranks.tolist()))
        return [
            {"id": self.corpus[i].id, "title": self.corpus[i].title, "users": int(self.users[i]),
             "share": round(float(self.users[i]) / max(self.members, 1), 4),
             "mean_rank": round(mean[i], 2) if i in mean else "", "saved_by": int(self.saved[i]),
             "group_note": group_note(int(self.saved[i]), self.name) if self.saved[i] else ""}
            for i in order.tolist()
        ]


@dataclass
class UserResult:
    """One user's outcome: the rendered block and (corpus index, rank) pairs, or why it failed."""

    user: str
    block: str = ""
    indices: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ranks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    error: str | None = None
    saved: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # corpus papers in the library


@dataclass
class BatchSummary:
    """What a batch run did: users scored, resumed and failed, papers, rows, time."""

    users: int = 0
    scored: int = 0
    resumed: int = 0
    papers: int = 0
    rows: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)
    group: GroupSummary | None = None
    output: Path | None = None


@dataclass
class _Job(Generic[Source]):
    scorer: BatchScorer
    load: Callable[[Source], Library | Sequence[LibraryItem]] | None
    fmt: str


def score_user(job: _Job, user: str, source: Any) -> UserResult:
    """Load and score one library; a library a user can fix (zotrec's own errors, a file the system cannot
    read) is reported, not raised; anything else is a bug and stops the batch."""
    try:
        items = job.load(source) if job.load is not None else source
        recs = job.scorer.score(items)
    except (RecommenderError, OSError) as error:
        return UserResult(user, error=str(error).splitlines()[0] if str(error) else type(error).__name__)
    indices = np.fromiter((job.scorer.index_of[r.paper.id] for r in recs), dtype=np.int64, count=len(recs))
    ranks = np.fromiter((r.rank for r in recs), dtype=np.int64, count=len(recs))
    return UserResult(user, render_user_block(user, recs, job.fmt), indices, ranks, saved=job.scorer.saved(items))


def _score_chunk(job: _Job, chunk: Sequence[tuple[str, Any]]) -> list[UserResult]:
    return [score_user(job, user, source) for user, source in chunk]


_WORKER_JOB: _Job | None = None


def _init_worker(job: _Job, rebuild: Callable[[], Recommender] | None, parent: int) -> None:
    """Take the parent's scorer, or build a fresh one when the parent's cannot cross a fork."""
    global _WORKER_JOB
    _end_with_parent(parent)
    if rebuild is not None:
        scorer = job.scorer
        job = _Job(BatchScorer(rebuild(), top_n=scorer.top_n, steering=scorer.steering, caches=scorer.caches),
                   job.load, job.fmt)
    _WORKER_JOB = job


def _end_with_parent(parent: int) -> None:
    """A worker ends at once and quietly when its parent is gone (killed, or its terminal closed), rather
    than print a BrokenPipe traceback when it sends its next result; Ctrl-C is left to the parent, which
    stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:  # PR_SET_PDEATHSIG: the kernel kills this process when the parent dies
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    else:
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(0)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(0)


def _worker_chunk(chunk: Sequence[tuple[str, Any]]) -> list[UserResult]:
    assert _WORKER_JOB is not None
    return _score_chunk(_WORKER_JOB, chunk)


def _chunks(pairs: Sequence[tuple[str, Any]], size: int) -> Iterator[Sequence[tuple[str, Any]]]:
    for start in range(0, len(pairs), size):
        yield pairs[start : start + size]


def _results(job: _Job, pairs: Sequence[tuple[str, Any]], chunk_users: int, jobs: int,
             rebuild: Callable[[], Recommender] | None = None) -> Iterator[UserResult]:
    """Per-user results in input order, from this process or a pool of `jobs` worker processes."""
    if jobs <= 1 or len(pairs) <= chunk_users:  # one user at a time: each result (and the bar) as it comes
        for user, source in pairs:
            yield score_user(job, user, source)
        return
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    size = max(1, min(chunk_users, -(-len(pairs) // (4 * jobs))))  # chunks small enough for the bar to move
    with context.Pool(jobs, initializer=_init_worker, initargs=(job, rebuild, os.getpid())) as pool:
        for results in pool.imap(_worker_chunk, _chunks(pairs, size)):
            yield from results


def score_libraries(
    recommender: Recommender | BatchScorer,
    libraries: Mapping[str, Source] | Iterable[tuple[str, Source]],
    *,
    load: Callable[[Source], Library | Sequence[LibraryItem]] | None = None,
    output: str | Path | IO[str],
    fmt: str = "csv",
    top_n: int = DEFAULT_TOP_N,
    group_summary: bool = False,
    group_name: str = "",
    overwrite: bool = False,
    chunk_users: int = DEFAULT_CHUNK_USERS,
    jobs: int = 1,
    rebuild: Callable[[], Recommender] | None = None,
    progress: Progress | None = None,
    steering: Steering | None = None,
    caches: ScoringCaches = NO_CACHES,
) -> BatchSummary:
    """Score every user's library and write one row per (user, paper) to `output`.

    `libraries` maps user id → a source that `load` turns into library items (without `load`,
    the values are the items). Users already complete in an existing `output` file are skipped
    (unless `overwrite`); a library that cannot be read or scored is reported in the summary.
    `progress(done, total)` is called after each user. With `jobs` > 1 the users are split
    between worker processes; those share the Recommender when it is plain arrays (tf-idf), else
    each builds its own with `rebuild()` (e.g. dense features, whose model session and cache
    connection must not cross a fork; their corpus embeddings come from the cache). `steering` (prefer /
    avoid texts, recency) and `caches` (the prepared corpus's, recommender/pipeline/build.py) are every
    user's; a BatchScorer given as `recommender` brings its own.
    """
    started = time.perf_counter()
    scorer = (recommender if isinstance(recommender, BatchScorer)
              else BatchScorer(recommender, top_n=top_n, steering=steering, caches=caches))
    jobs, rebuild = _plan_workers(scorer, jobs, rebuild)
    pairs = list(libraries.items() if isinstance(libraries, Mapping) else libraries)
    _check_unique([user for user, _ in pairs])
    summary = BatchSummary(users=len(pairs), papers=len(scorer.corpus))
    group = GroupSummary(scorer.corpus, group_name) if group_summary else None
    writer = ScoreWriter(output, fmt, overwrite=overwrite, on_resumed_row=group.add_row if group else None)
    summary.output = writer.path
    try:  # the writer holds the output's lock: let go of it whatever happens
        done = set(writer.resumed.done)
        if group is not None:
            group.members = len(done)
            _count_saved(scorer, load, [(user, source) for user, source in pairs if user in done], group)
        todo = [(user, source) for user, source in pairs if user not in done]
        summary.resumed, summary.rows = len(pairs) - len(todo), writer.resumed.rows
        if progress:
            progress(summary.resumed, summary.users)
        results = _results(_Job(scorer, load, fmt), todo, chunk_users, jobs, rebuild)
        for count, result in enumerate(results, start=1):
            _record(result, writer, summary, group)
            if progress:
                progress(summary.resumed + count, summary.users)
    finally:
        writer.close()
    summary.group = group
    summary.seconds = time.perf_counter() - started
    return summary


def _record(result: UserResult, writer: ScoreWriter, summary: BatchSummary,
            group: GroupSummary | None) -> None:
    if result.error is not None:
        log.warning("%s: skipped (%s)", result.user, result.error)
        summary.failures.append((result.user, result.error))
        return
    writer.write_block(result.block)
    summary.scored += 1
    summary.rows += len(result.ranks)
    if group is not None:
        group.add(result.indices, result.ranks, result.saved)


def _count_saved(scorer: BatchScorer, load, pairs: Sequence[tuple[str, Any]], group: GroupSummary) -> None:
    """Resumed users were scored by an earlier run, but their saves count in the group summary too."""
    for user, source in pairs:
        try:
            group.add_saved(scorer.saved(load(source) if load is not None else source))
        except (RecommenderError, OSError, ValueError) as error:
            log.warning("%s: its saves are not counted in the group summary (%s)", user, error)


def _plan_workers(scorer: BatchScorer, jobs: int, rebuild: Callable[[], Recommender] | None):
    """Workers share a plain-array Recommender, rebuild any other, or are not used at all."""
    if _shareable(scorer.recommender):
        return jobs, None
    if jobs > 1 and rebuild is None:
        log.warning("%s features cannot be shared with worker processes: scoring in one process",
                    scorer.recommender.representation.name)
        return 1, None
    return jobs, rebuild


def _shareable(recommender: Recommender) -> bool:
    """Worker processes get the Recommender by fork; tf-idf is plain arrays, but a model session or a
    cache connection (dense features) must not cross a fork."""
    return recommender.representation.name == "tfidf"


def _check_unique(users: Sequence[str]) -> None:
    seen: set[str] = set()
    for user in users:
        if user in seen:
            raise SettingError(f"two libraries share the user id '{user}' (user ids must be unique)")
        seen.add(user)
