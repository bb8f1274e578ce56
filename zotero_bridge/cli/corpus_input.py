"""Which corpus a command ranks: the files given (folders expanded) or the default (the bundled ICML 2025 list,
enriched by a fetch); the shipped Recommender on it comes from recommender/pipeline/build.py."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from zotero_bridge.cli.common import note

log = logging.getLogger("zotrec")


def default_corpus_paths() -> list[Path]:
    """Every file of the default corpus: the bundled ICML 2025 list and seeds, and the stored icml2025 once
    fetched, which enriches the list by id, never replaces it (recommender/corpus/default.py)."""
    from recommender.corpus.default import default_corpus

    return default_corpus().all_files


CORPUS_SUFFIXES = {".txt", ".jsonl", ".ndjson", ".json", ".csv", ".bib"}


def expand_corpus_folders(corpus_paths) -> list:
    """A folder given as --corpus stands for the corpus files in it (e.g. examples/icml2025-seeds)."""
    paths: list = []
    for given in corpus_paths:
        folder = Path(given).expanduser()
        if folder.is_dir():
            files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in CORPUS_SUFFIXES)
            if not files:
                raise click.ClickException(f"{folder}: no corpus files in this folder "
                                           f"(looked for {', '.join(sorted(CORPUS_SUFFIXES))})")
            paths.extend(files)
        else:
            paths.append(given)
    return paths


def corpus_files(corpus_paths) -> tuple[list, list]:
    """(files to rank, a fetched corpus enriching them): those given (folders expanded), else the default, said once.
    The name icml2025 (not a file here) stands for the default too: a fetch enriches the bundled list, so a partial
    fetch never shrinks what `--corpus icml2025` ranks."""
    from recommender.corpus.default import DEFAULT_NAME, default_corpus

    paths = expand_corpus_folders(corpus_paths)
    if paths and not any(str(path) == DEFAULT_NAME and not Path(path).exists() for path in paths):
        return paths, []
    default = default_corpus()
    if not paths and not default.fetched:
        note("corpus: the bundled ICML 2025 list (`zotrec corpus fetch icml2025` adds every abstract)",
             "Corpus: the bundled ICML 2025 list (run `zotrec corpus fetch icml2025` for all abstracts).")
    files = [file for path in (paths or [DEFAULT_NAME])
             for file in (default.files if str(path) == DEFAULT_NAME and not Path(path).exists() else [path])]
    return files, list(default.fetched)


def load_corpus_papers(corpus_paths):
    from recommender.corpus.readers import load_corpus

    loaded = load_corpus(*corpus_files(corpus_paths))  # (files, a fetched corpus enriching them)
    _say_skipped([[skipped.where, skipped.reason] for skipped in loaded.skipped])
    _say_fetched(loaded.fetch_counts())
    _say_title_only(loaded.papers)
    return loaded.papers


def _say_fetched(counts: dict) -> None:
    from recommender.corpus.default import fetch_summary

    if counts:  # the default corpus with a fetch on it
        note(said := fetch_summary(counts), said[:1].upper() + said[1:] + ".")


def shipped(corpus_paths, *, features: str, aggregation: str, model=None, representation=None,
            keep_state: bool = True):
    """The shipped Recommender on the corpus a command was given and the caches it ranks with
    (recommender/pipeline/build.py: `Built`), what reading the corpus had to say said once. `keep_state`:
    keep each library's rows and top-K for its next run (one library per run; not for batch scoring)."""
    from recommender.pipeline.build import shipped_recommender

    from recommender import progress

    files, fetched = corpus_files(corpus_paths)
    progress.step(f"Reading the corpus ({', '.join(str(p) for p in corpus_paths) or 'the bundled ICML 2025 list'})")
    built = shipped_recommender(files, fetched, features=features, aggregation=aggregation, model=model,
                                representation=representation, keep_state=keep_state)
    _say_skipped(built.notes.get("skipped", []))
    _say_fetched(built.notes.get("fetched", {}))
    _say_title_only(built.recommender.corpus)
    return built


def _say_skipped(skipped: list) -> None:
    """One warning however many corpus entries were skipped; the rest with -v."""
    if skipped:
        (where, reason), *rest = skipped
        log.warning("%d corpus entries skipped; first: %s: %s", len(skipped), where, reason)
        for where, reason in rest:
            log.debug("%s: %s", where, reason)


def _say_title_only(papers) -> None:
    title_only = sum(paper.abstract is None for paper in papers)
    if title_only:
        from recommender.words import plural

        note(f"{title_only} of {plural(len(papers), 'paper')} ranked on titles only (no abstract)",
             f"{title_only} of {plural(len(papers), 'corpus paper')} without an abstract: scored on the title alone.")
