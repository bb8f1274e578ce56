"""Batch scoring on a Dask cluster: partitions of users as tasks, one resumable part file per partition.

The optional `dask` extra (`pip install 'zotrec[dask]'`). The fitted Recommender is shipped once
to every worker; each task runs the single-machine `score_libraries` on its users and writes
`part-NNNNN.<fmt>`; only counts and the group-summary vectors come back. See docs/distributed.md.
"""

from __future__ import annotations

from recommender.errors import SettingError
import logging
import math
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recommender.batch.runner import (
    BatchScorer,
    BatchSummary,
    GroupSummary,
    Progress,
    _check_unique,
    score_libraries,
)
from recommender.items import LibraryItem
from recommender.scoring.ranking import DEFAULT_TOP_N, Recommender
from recommender.scoring.steering import Steering

log = logging.getLogger(__name__)

DEFAULT_PARTITION_USERS = 500


def partition_users(pairs: Sequence[tuple[str, Any]], partitions: int) -> list[list[tuple[str, Any]]]:
    """Users → partitions by a stable hash of the user id, so a re-run puts each user in the same part."""
    parts: list[list[tuple[str, Any]]] = [[] for _ in range(partitions)]
    for user, source in pairs:
        parts[zlib.crc32(user.encode("utf-8")) % partitions].append((user, source))
    return parts


def _check_picklable(scorer: BatchScorer) -> None:
    """The scorer goes to the workers pickled: dense encoders and the embedding cache leave their
    ONNX session and SQLite connection behind and open their own on first use in each worker."""
    import pickle

    try:
        pickle.dumps(scorer)
    except Exception as error:  # noqa: BLE001 (any failure to pickle means it cannot be shipped)
        raise SettingError(f"this Recommender cannot be shipped to Dask workers ({error})") from None


def _score_part(scorer: BatchScorer, pairs, load, path: str, fmt: str, group: bool) -> dict[str, Any]:
    """One task: score a partition into its own part file; return only what the client sums."""
    summary = score_libraries(scorer, pairs, load=load, output=path, fmt=fmt, group_summary=group)
    result: dict[str, Any] = {"scored": summary.scored, "resumed": summary.resumed, "rows": summary.rows,
                              "failures": summary.failures}
    if summary.group is not None:
        result.update(members=summary.group.members, users=summary.group.users,
                      rank_sums=summary.group.rank_sums, saved=summary.group.saved)
    return result


def score_libraries_dask(
    client: Any,
    recommender: Recommender | BatchScorer,
    libraries: Mapping[str, Any] | Iterable[tuple[str, Any]],
    *,
    load: Callable[[Any], Sequence[LibraryItem]] | None = None,
    out_dir: str | Path,
    fmt: str = "csv",
    top_n: int = DEFAULT_TOP_N,
    group_summary: bool = False,
    group_name: str = "",
    partition_size: int = DEFAULT_PARTITION_USERS,
    progress: Progress | None = None,
    steering: Steering | None = None,
) -> BatchSummary:
    """Score every library on the cluster behind `client` (a `distributed.Client`).

    Rows go to `out_dir/part-NNNNN.<fmt>`; a re-run with the same libraries and workers resumes
    each part (the partition count follows the number of users and workers).
    `load` must be importable on the workers (a module-level function). `steering` (prefer / avoid texts,
    recency) goes to every worker with the scorer.
    """
    from distributed import as_completed

    started = time.perf_counter()
    scorer = (recommender if isinstance(recommender, BatchScorer)
              else BatchScorer(recommender, top_n=top_n, steering=steering))
    _check_picklable(scorer)
    pairs = list(libraries.items() if isinstance(libraries, Mapping) else libraries)
    _check_unique([user for user, _ in pairs])
    out = Path(out_dir)
    from recommender.formats.output import output_folder

    output_folder(out)  # what is missing made 0700
    workers = len(client.scheduler_info().get("workers", {})) or 1
    # at most `partition_size` users a task, and at least two tasks a worker to balance the load
    count = max(math.ceil(len(pairs) / partition_size), min(len(pairs), 2 * workers), 1)
    parts = partition_users(pairs, count)
    [shared] = client.scatter([scorer], broadcast=True)
    futures = {
        client.submit(_score_part, shared, part, load, str(out / f"part-{number:05d}.{fmt}"), fmt,
                      group_summary, pure=False): len(part)
        for number, part in enumerate(parts) if part
    }
    summary = BatchSummary(users=len(pairs), papers=len(scorer.corpus), output=out)
    group = GroupSummary(scorer.corpus, group_name) if group_summary else None
    done = 0
    for future in as_completed(futures):
        result = future.result()
        summary.scored += result["scored"]
        summary.resumed += result["resumed"]
        summary.rows += result["rows"]
        summary.failures += [tuple(failure) for failure in result["failures"]]
        if group is not None:
            group.members += result["members"]
            group.users += np.asarray(result["users"])
            group.rank_sums += np.asarray(result["rank_sums"])
            group.saved += np.asarray(result["saved"])
        done += futures[future]
        if progress:
            progress(done, summary.users)
    summary.failures.sort()
    summary.group = group
    summary.seconds = time.perf_counter() - started
    return summary
