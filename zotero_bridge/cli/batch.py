"""Glue for `zotrec score`: library files → user ids, the per-user loader, the progress bar, the report."""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recommender.batch.output import render_table
from recommender.batch.runner import BatchSummary, score_libraries
from recommender.formats.output import safe_text
from recommender.items import LibraryItem
from recommender.scoring.fusion import DEFAULT_SCORING
from zotero_bridge.errors import SourceError
from zotero_bridge.render.words import plural
from zotero_bridge.sources import SQLITE_SUFFIXES, SourceOptions, read_library

log = logging.getLogger(__name__)

LIBRARY_SUFFIXES = {".bib", ".bibtex", ".ris", ".json", ".jsonl", ".ndjson", *SQLITE_SUFFIXES}
GROUP_SHOWN = 10


def user_libraries(paths: Sequence[str | Path], outputs: Sequence[str | Path] = ()) -> dict[str, str]:
    """User id (the file stem) → library file; a folder stands for every supported file in it
    except zotrec's own `outputs` (a score file kept in the folder is not read back as a user)."""
    users: dict[str, str] = {}
    renamed: list[str] = []
    ours = {os.path.realpath(p) for p in outputs}
    for given in map(Path, paths):
        if given.is_dir():
            files = sorted(p for p in given.iterdir() if p.is_file() and p.suffix.lower() in LIBRARY_SUFFIXES
                           and os.path.realpath(p) not in ours)
            if not files:
                raise SourceError(f"{given}: no library files in this folder "
                                  f"(looked for {', '.join(sorted(LIBRARY_SUFFIXES))})")
        else:
            files = [given]  # a missing or unreadable file is that user's failure, reported later
        for path in files:
            user = user_id(path)
            if user != path.stem:
                renamed.append(f"{safe_text(path)} → '{user}'")
            if user in users:
                raise SourceError(f"{safe_text(path)}: user id '{user}' is also {safe_text(users[user])} "
                                  "(user ids are file stems and must be unique)")
            users[user] = str(path)
    if renamed:  # one line however many
        log.warning("%d library file names are not plain text (not UTF-8, or control characters): their rows "
                    "name the user with U+FFFD or spaces instead; first: %s", len(renamed), renamed[0])
    return users


def user_id(path: Path) -> str:
    """The file stem as text any output can hold: undecodable bytes of a name that is not UTF-8 become
    U+FFFD and control characters spaces, so such a library is scored rather than sinking the batch."""
    return safe_text(path.stem)


def load_user_library(path: str):
    """One user's library, read the way `--library PATH` reads it (skipped entries logged), with what the user
    did with zotrec's papers when the file shows it (a zotero.sqlite): the `Library` reading-list ranks."""
    from zotero_bridge.feedback.reading import library_input

    read = read_library([path], SourceOptions())
    if read.skipped:
        log.debug("%s: %s skipped", path, plural(len(read.skipped), "entry", "entries"))
    return library_input([path], read.items)


@contextmanager
def progress_bar(total: int, enabled: bool) -> Iterator[Callable[[int, int], None]]:
    """The users' bar (recommender/progress.py: on a terminal, under the status line, warnings above it)
    as the runner's `progress(done, total)` callback; a no-op when disabled."""
    from recommender import progress

    if not enabled:
        yield lambda done, total: None
        return
    shown = 0
    with progress.bar("Scoring users", total) as advance:
        def moved(done: int, _total: int) -> None:
            nonlocal shown
            advance(done - shown)
            shown = done

        yield moved


@dataclass
class BatchRequest:
    """What `zotrec score` was asked to do (options as given, after checking)."""

    library_paths: Sequence[str]
    model: Any = None  # a recommender.collaborative.model.CollaborativeModel, as reading-list's --model loads it
    aggregation: str = DEFAULT_SCORING
    features: str = "tfidf"
    top_n: int = 20
    output: str | None = None
    fmt: str = "csv"
    group_summary: bool = False
    overwrite: bool = False
    jobs: int = 1
    show_progress: bool = False
    inputs: Sequence[str] = ()  # corpus files and the model: never overwritten by --out
    scheduler: str | None = None  # a Dask scheduler address, or "local" for a LocalCluster of `jobs` workers
    steering: Any = None  # recommender.scoring.steering.Steering, the same for every user
    dashboard: bool = False  # --scheduler local: serve Dask's dashboard on 127.0.0.1:8787


def run_batch(corpus_paths: Sequence[str], request: BatchRequest) -> BatchSummary:
    """Build one Recommender (from the prepared-corpus cache, as reading-list), score every library file,
    write rows (and the group summary)."""
    from recommender import progress as steps
    from recommender.batch.runner import BatchScorer

    users = _checked_users(request)
    built = _shipped(corpus_paths, request)
    scorer = BatchScorer(built.recommender, top_n=request.top_n, steering=request.steering, caches=built.caches)
    steps.step(f"Scoring {plural(len(users), 'library', 'libraries')} against "
               f"{plural(len(built.recommender.corpus), 'paper')}")
    target = request.output if request.output not in (None, "-") else sys.stdout
    with progress_bar(len(users), request.show_progress) as progress:
        if request.scheduler:
            summary = _run_on_dask(scorer, users, request, progress)
        else:
            summary = score_libraries(scorer, users, load=load_user_library, output=target,
                                      fmt=request.fmt, overwrite=request.overwrite,
                                      group_summary=request.group_summary, group_name=group_name(request),
                                      jobs=request.jobs,
                                      rebuild=functools.partial(_rebuilt, corpus_paths, request),
                                      progress=progress)
    if summary.group is not None:
        _write_group(summary, request.fmt)
    return summary


def _checked_users(request: BatchRequest) -> dict[str, str]:
    """The users, with --out and its group file checked: never a library, the corpus or the model
    (refused before any work), and never read back as a user when kept in the libraries folder."""
    from recommender.formats.output import check_output_path

    if request.output in (None, "-") or request.scheduler:
        return user_libraries(request.library_paths)
    out = Path(request.output)
    outputs = [str(out), str(out.with_name(f"{out.stem}.group.{request.fmt}"))]
    users = user_libraries(request.library_paths, outputs)
    for output in outputs:
        check_output_path(output, [*users.values(), *request.inputs])
    return users


def _run_on_dask(scorer, users: dict[str, str], request: BatchRequest, progress) -> BatchSummary:
    """The same job on a Dask cluster; --out names a folder of part files (the `dask` extra)."""
    if not request.output or request.output == "-":
        raise SourceError("--scheduler needs --out FOLDER (each partition writes its own part file there)")
    if request.overwrite:
        raise SourceError("--overwrite is not supported with --scheduler: remove the --out folder instead")
    from zotero_bridge.cli.console import quiet_dask

    verbose = logging.getLogger("zotrec").isEnabledFor(logging.DEBUG)
    if not verbose:
        quiet_dask()  # before distributed is imported: its workers read their log level from the environment
    try:
        from distributed import Client, LocalCluster
    except ModuleNotFoundError:
        raise SourceError("--scheduler needs the dask extra: pip install 'zotrec[dask]'") from None
    from recommender.batch.dask_runner import score_libraries_dask

    if not verbose:
        quiet_dask()  # and after: the import gave its loggers their own handler
    if request.scheduler == "local":  # this machine only: scheduler and dashboard (when asked) on 127.0.0.1
        # Without --dashboard the scheduler still serves its health routes over HTTP; dashboard_address=None
        # would hold port 8787 (another program's, or a warning when taken): a free port of 127.0.0.1 instead.
        http = ({"dashboard_address": "127.0.0.1:8787"} if request.dashboard
                else {"dashboard_address": None, "scheduler_kwargs": {"dashboard": False,
                                                                      "dashboard_address": "127.0.0.1:0"}})
        cluster = LocalCluster(n_workers=request.jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                               silence_logs=logging.DEBUG if verbose else logging.CRITICAL, **http)
        if request.dashboard:
            import importlib.util

            if importlib.util.find_spec("bokeh") is None:
                log.warning("--dashboard needs bokeh (pip install bokeh): Dask serves no dashboard without it")
            else:
                log.info("The Dask dashboard: %s", cluster.dashboard_link)
        client = Client(cluster)
    else:
        cluster, client = None, Client(request.scheduler)
    try:
        return score_libraries_dask(client, scorer, users, load=load_user_library,
                                    out_dir=request.output, fmt=request.fmt,
                                    group_summary=request.group_summary, group_name=group_name(request),
                                    progress=progress)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _shipped(corpus_paths: Sequence[str], request: BatchRequest):
    """The one Recommender every user is scored with and its caches, built as `reading-list` builds them (no
    kept per-library state: each user is scored once)."""
    from zotero_bridge.cli.corpus_input import shipped

    return shipped(corpus_paths, features=request.features, aggregation=request.aggregation, model=request.model,
                   keep_state=False)


def _rebuilt(corpus_paths: Sequence[str], request: BatchRequest):
    """A worker's own Recommender (a model session must not cross a fork); the caches come with the scorer."""
    return _shipped(corpus_paths, request).recommender


def group_name(request: BatchRequest) -> str:
    """The group the scored libraries make up, for 'saved by 3 members of <group>': the folder's name when
    one folder was given, else '' ('your group')."""
    paths = [Path(p) for p in request.library_paths]
    return paths[0].resolve().name if len(paths) == 1 and paths[0].is_dir() else ""


def group_path(summary: BatchSummary, fmt: str) -> Path | None:
    """scores.csv → scores.group.csv beside it (None when the rows went to stdout)."""
    if summary.output is None:
        return None
    return summary.output.with_name(f"{summary.output.stem}.group.{fmt}")


def _write_group(summary: BatchSummary, fmt: str) -> None:
    assert summary.group is not None
    rows = summary.group.rows()
    path = group_path(summary, fmt)
    if path is not None:
        from recommender.formats.output import write_text

        write_text(path, render_table(rows, fmt))
        log.info("Wrote the group summary (%s) to %s", plural(len(rows), "paper"), path)
    shown = "\n".join(f"  {plural(r['users'], 'user'):>10} · mean rank {r['mean_rank']:>6} · {r['title']}"
                      + (f" · {r['group_note']}" if r["group_note"] else "") for r in rows[:GROUP_SHOWN])
    log.info("Most shared papers:\n%s", shown or "  (none)")


def summary_text(summary: BatchSummary) -> tuple[str, str]:
    """The closing report (users, papers, rows, time) and, apart, the failures ('' when none)."""
    lines = [f"Scored {plural(summary.scored, 'user')} against {plural(summary.papers, 'paper')}; "
             f"{plural(summary.rows, 'row')} in all"
             + (f" in {summary.output}" if summary.output else "")
             + f" ({summary.seconds:.1f} s)."]
    if summary.resumed:
        were = "was" if summary.resumed == 1 else "were"
        lines.append(f"{plural(summary.resumed, 'user')} {were} already in the output file and {were} not scored again.")
    failures = []
    if summary.failures:
        failures.append(f"{len(summary.failures)} of {plural(summary.users, 'library', 'libraries')} failed:")
        failures += [f"  {user}: {reason}" for user, reason in summary.failures]
    return "\n".join(lines), "\n".join(failures)
