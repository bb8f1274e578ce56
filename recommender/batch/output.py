"""The batch score file: one row per (user, paper), CSV or JSON Lines, appended user by user and resumable.

Each user's rows go out in one write and are flushed, so an interrupted run leaves at most the
last user's block incomplete. On resume that last block is cut off and scored again, so a user
is never counted as done from a half-written block.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from recommender.errors import RecommenderError, SettingError
from recommender.formats.output import OutputLock, safe_json, spreadsheet_safe, spreadsheet_unsafe
from recommender.formats.rows import REASON_COLUMNS, reason_keys
from recommender.formats.textfile import allow_large_csv_fields
from recommender.items import Recommendation
from recommender.words import plural

log = logging.getLogger(__name__)

OUTPUT_FORMATS = ("csv", "jsonl")
# A file is written user by user, so its columns are fixed before the first row: the 0–100 match and issue 25's
# reasons (empty cells when a paper has none) come after the first six, which keep their places.
COLUMNS = ("user", "rank", "id", "title", "score", "reasons", "match", *(name for name, _ in REASON_COLUMNS))
OLD_COLUMNS = COLUMNS[:6]  # score files before the match column
SCORE_DECIMALS = 4  # the same rounding as `zotrec reading-list`, so the two agree digit for digit


class BatchOutputError(RecommenderError):
    """An existing score file cannot be resumed (another format, or not a zotrec score file)."""


def _one_line(text: str) -> str:
    """Rows stay one physical line each, which is what makes the file resumable line by line; a cell a
    spreadsheet would evaluate (=, +, -, @ …) is neutralised (`spreadsheet_safe`)."""
    return spreadsheet_safe(text.replace("\r", " ").replace("\n", " "))


def reasons_text(rec: Recommendation) -> str:
    """'Item title (0.42); Other item (0.31)': the reading list's CSV form."""
    return "; ".join(f"{r.item_title} ({r.similarity:.2f})" for r in rec.reasons)


def render_user_block(user: str, recs: Sequence[Recommendation], fmt: str) -> str:
    """All of one user's rows as one string (written in a single call)."""
    if fmt == "jsonl":
        return safe_json("".join(
            json.dumps(
                {
                    "user": user,
                    "rank": rec.rank,
                    "id": rec.paper.id,
                    "title": rec.paper.title,
                    "score": round(rec.score, SCORE_DECIMALS),
                    **({"match": rec.match} if rec.match is not None else {}),
                    "reasons": [
                        {"key": r.item_key, "title": r.item_title,
                         "similarity": round(r.similarity, SCORE_DECIMALS)}
                        for r in rec.reasons
                    ],
                    **reason_keys(rec),  # interest, author_reasons, steer_reasons: only when present
                },
                ensure_ascii=False,
            )
            + "\n"
            for rec in recs
        ))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for rec in recs:
        writer.writerow([_one_line(user), rec.rank, _one_line(rec.paper.id), _one_line(rec.paper.title),
                         round(rec.score, SCORE_DECIMALS), _one_line(reasons_text(rec)),
                         "" if rec.match is None else rec.match, *(_one_line(cell(rec)) for _, cell in REASON_COLUMNS)])
    return out.getvalue()


def csv_header() -> str:
    return ",".join(COLUMNS) + "\n"


@dataclass
class ResumeState:
    """What an earlier run left: users whose blocks are complete, and where to continue writing."""

    done: list[str] = field(default_factory=list)
    keep_bytes: int = 0
    rows: int = 0


def _parse_line(line: str, fmt: str, where: str) -> dict:
    if fmt == "jsonl":
        row = json.loads(line)
        if not isinstance(row, dict) or "user" not in row or "id" not in row:
            raise ValueError("not a score row")
        return row
    values = next(csv.reader([line]))
    if len(values) != len(COLUMNS):
        raise ValueError(f"{len(values)} columns, expected {len(COLUMNS)}")
    row = dict(zip(COLUMNS, values, strict=True))
    row["user"], row["id"] = spreadsheet_unsafe(row["user"]), spreadsheet_unsafe(row["id"])
    return row


def scan_existing(path: Path, fmt: str, on_row: Callable[[dict], None] | None = None) -> ResumeState:
    """Read an earlier score file: complete users, and the byte offset where the last user's block starts.

    `on_row` sees every row of the users counted as done (to rebuild a group summary).
    """
    state = ResumeState()
    allow_large_csv_fields()  # a reasons or title cell may be over the csv module's 128 KiB default
    lines = list(_complete_lines(path))
    if fmt == "csv":
        if lines and lines[0][1] == ",".join(OLD_COLUMNS):
            raise BatchOutputError(f"{path}: a score CSV from an older zotrec (without the match column); "
                                   "choose another --out or pass --overwrite to score every user again")
        if not lines or lines[0][1] != csv_header().rstrip("\n"):
            raise BatchOutputError(f"{path}: not a zotrec score CSV (header should be {','.join(COLUMNS)}); "
                                   "choose another --out or pass --overwrite")
        lines = lines[1:]
        state.keep_bytes = len(csv_header().encode())
    current: str | None = None
    block_start = state.keep_bytes
    pending: list[dict] = []
    for number, (offset, line) in enumerate(lines, start=2 if fmt == "csv" else 1):
        try:
            row = _parse_line(line, fmt, f"{path}:{number}")
        except (ValueError, StopIteration, csv.Error) as error:
            raise BatchOutputError(f"{path}:{number}: not a zotrec {fmt} score row ({error}); "
                                   "choose another --out or pass --overwrite") from None
        if row["user"] != current:
            if current is not None:
                _finish_block(state, current, pending, on_row)
            current, block_start, pending = row["user"], offset, []
        pending.append(row)
    # the last block may be cut short by an interruption: it is scored again
    state.keep_bytes = block_start if current is not None else state.keep_bytes
    return state


def _finish_block(state: ResumeState, user: str, rows: list[dict], on_row) -> None:
    state.done.append(user)
    state.rows += len(rows)
    if on_row is not None:
        for row in rows:
            on_row(row)


def _complete_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(byte offset, text) of every line that ends in a newline; a torn last line is left out."""
    offset = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                return
            yield offset, raw.decode("utf-8", errors="replace").rstrip("\r\n")
            offset += len(raw)


class ScoreWriter:
    """Appends user blocks to a score file (or a stream), resuming what an earlier run finished.

    A file has one writer at a time (`OutputLock`: a second run is refused, naming the first's pid); a write
    that fails (a full disk) is one line saying that the users written before are kept.
    """

    def __init__(self, target: str | Path | IO[str], fmt: str = "csv", *, overwrite: bool = False,
                 on_resumed_row: Callable[[dict], None] | None = None) -> None:
        if fmt not in OUTPUT_FORMATS:
            raise SettingError(f"unknown output format '{fmt}' (use {' or '.join(OUTPUT_FORMATS)})")
        self.fmt = fmt
        self.resumed = ResumeState()
        self.path: Path | None = None
        self._lock: OutputLock | None = None
        self._failed = False
        self.users_written = 0
        if isinstance(target, (str, Path)):
            self.path = Path(target)
            try:
                self._handle = self._open_file(overwrite, on_resumed_row)
            except BaseException:
                self._unlock()
                raise
        else:
            self._handle = target
            if fmt == "csv":
                self._handle.write(csv_header())

    def _open_file(self, overwrite: bool, on_resumed_row) -> IO[str]:
        path = self.path
        assert path is not None
        from recommender.formats.output import check_output_path, output_folder

        check_output_path(path)  # never a Zotero database or a folder
        output_folder(path.parent)  # what is missing made 0700
        if path.is_file() or not path.exists():  # a device or a pipe (/dev/stdout) has no file to guard
            self._lock = OutputLock(path).acquire()  # before reading or cutting what an earlier run wrote
        try:
            if path.exists() and path.stat().st_size and not overwrite:
                self.resumed = scan_existing(path, self.fmt, on_resumed_row)
                with path.open("r+b") as raw:
                    raw.truncate(self.resumed.keep_bytes)
                log.info("Resuming %s: %s already scored", path, plural(len(self.resumed.done), "user"))
                return path.open("a", encoding="utf-8", newline="")
            handle = path.open("w", encoding="utf-8", newline="")
            if self.fmt == "csv":
                handle.write(csv_header())
                handle.flush()
        except OSError as error:
            raise self._failure(error) from None
        return handle

    def write_block(self, block: str) -> None:
        """One user's rows in one write, flushed so a later kill cannot tear an earlier user."""
        if not block:
            return
        try:
            self._handle.write(block)
            self._handle.flush()
        except OSError as error:
            self._failed = True
            raise self._failure(error) from None
        self.users_written += 1

    def _failure(self, error: OSError) -> BatchOutputError:
        kept = len(self.resumed.done) + self.users_written
        written = f"the {plural(kept, 'user')} written before {'is' if kept == 1 else 'are'} kept"
        return BatchOutputError(f"{self.path}: cannot write ({error.strerror or error}); {written}, "
                                "and a re-run with the same --out resumes after them")

    def close(self) -> None:
        if self.path is None:
            return
        try:
            if not self._failed:
                self._handle.flush()
                os.fsync(self._handle.fileno())
        except OSError as error:
            self._failed = True
            raise self._failure(error) from None
        finally:
            try:
                self._handle.close()
            except OSError:
                pass  # the failure was reported; what reached the disk is what a re-run resumes from
            self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def render_table(rows: Sequence[dict], fmt: str) -> str:
    """Plain rows (such as the group summary) as CSV with a header, or JSON Lines."""
    if fmt == "jsonl":
        return safe_json("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _one_line(v) if isinstance(v, str) else v for k, v in row.items()})
    return out.getvalue()
