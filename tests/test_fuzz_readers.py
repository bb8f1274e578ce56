"""No traceback on any input: every reader gets arbitrary bytes, arbitrary JSON and valid JSON of the wrong
shape. A reader may return items, skip entries with a reason, or raise one of zotrec's one-line errors;
anything else (TypeError, RecursionError, …) is a crash. 100 cases per reader and input kind by default
(ZOTREC_FUZZ_CASES to change);
`pytest -m slow tests/test_fuzz_readers.py` runs 10,000 per reader."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recommender.errors import RecommenderError
from recommender.items import LibraryItem

DEFAULT_CASES = int(os.environ.get("ZOTREC_FUZZ_CASES", "100"))
SLOW_CASES = 10_000

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
FIELDS = ["key", "id", "title", "abstract", "abstractNote", "authors", "author", "editor", "creators", "tags",
          "collections", "date", "year", "url", "URL", "doi", "DOI", "itemType", "type", "issued", "keyword",
          "data", "extra", "note", "deleted", "version", "dateAdded", "venue", "name", "parentCollection"]
records = st.dictionaries(st.sampled_from(FIELDS), json_values, min_size=1, max_size=8)
zotero_records = st.fixed_dictionaries({"itemType": st.sampled_from(["journalArticle", "book", "note"]),
                                        "title": json_values}, optional=dict.fromkeys(set(FIELDS) - {"title", "itemType"}, json_values))
line_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
bibtex_text = st.lists(st.tuples(st.sampled_from(["article", "inproceedings", "misc", "string", "comment"]),
                                 st.text(max_size=8), st.dictionaries(st.sampled_from(
                                     ["title", "author", "abstract", "year", "doi", "url", "keywords", "groups"]),
                                     line_text, max_size=4)), max_size=4).map(
    lambda entries: "\n".join("@{}{{{},\n{}}}".format(kind, key, ",\n".join(f"  {k} = {{{v}}}" for k, v in fields.items()))
                              for kind, key, fields in entries))
ris_text = st.lists(st.tuples(st.sampled_from(["TY", "TI", "AU", "AB", "PY", "DO", "UR", "KW", "ER", "T1", "ID", "Y1"]),
                              line_text), max_size=12).map(
    lambda lines: "\n".join(f"{tag}  - {value}" for tag, value in lines))


def _tolerated(call):
    """Run a reader: results or a one-line error are fine; anything else fails the test."""
    try:
        return call()
    except RecommenderError as error:
        assert "\n" not in str(error).strip() and "Traceback" not in str(error)
        return None


def _fuzz(strategy, cases):
    return lambda test: settings(max_examples=cases, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck))(given(strategy)(test))


def _library_file(tmp_path_factory, suffix):
    from zotero_bridge.sources.files import read_library_file

    folder = tmp_path_factory.mktemp("fuzz")

    def read(data: bytes):
        path = folder / f"library{suffix}"
        path.write_bytes(data)
        result = _tolerated(lambda: read_library_file(path))
        if result:
            for item in result[0]:
                _check_item(item)
        return result
    return read


def _check_item(item: LibraryItem):
    """Never a silent wrong read: every field is text, never a stringified object or one tag per character."""
    for value in (item.key, item.title, item.abstract, item.doi, item.url, item.date, item.extra):
        assert isinstance(value, str)
    assert not item.title.startswith(("{'", "['", "{\"")), item.title
    assert all(isinstance(t, str) for t in item.tags) and all(isinstance(c, str) for c in item.collections)
    assert all(isinstance(c.last, str) and isinstance(c.first, str) for c in item.creators)


def _as_bytes(kind, value):
    if kind == "jsonl":
        return "\n".join(json.dumps(v) for v in value).encode()
    return json.dumps(value).encode()


LIBRARY_CASES = [
    (".bib", st.binary(max_size=600)), (".bib", bibtex_text.map(str.encode)),
    (".ris", st.binary(max_size=600)), (".ris", ris_text.map(str.encode)),
    (".json", st.binary(max_size=300)), (".json", json_values.map(lambda v: _as_bytes("json", v))),
    (".json", st.lists(records | zotero_records, max_size=4).map(lambda v: _as_bytes("json", v))),
    (".jsonl", st.binary(max_size=300)),
    (".jsonl", st.lists(records | zotero_records | json_values, max_size=4).map(lambda v: _as_bytes("jsonl", v))),
]


def _library_case(tmp_path_factory, suffix, strategy, cases):
    read = _library_file(tmp_path_factory, suffix)

    @_fuzz(strategy, cases)
    def run(data):
        read(data)
    run()


@pytest.mark.parametrize(("suffix", "strategy"), LIBRARY_CASES)
def test_library_files_never_crash(tmp_path_factory, suffix, strategy):
    _library_case(tmp_path_factory, suffix, strategy, DEFAULT_CASES)


@pytest.mark.slow
@pytest.mark.parametrize(("suffix", "strategy"), LIBRARY_CASES)
def test_library_files_never_crash_slow(tmp_path_factory, suffix, strategy):
    _library_case(tmp_path_factory, suffix, strategy, SLOW_CASES)


def _zotero_json_case(cases):
    from zotero_bridge.sources.zotero_json import item_from_zotero_json

    @_fuzz(zotero_records | records, cases)
    def run(record):
        result = item_from_zotero_json(record, where="fuzz")
        if isinstance(result, LibraryItem):
            _check_item(result)
    run()


def test_zotero_json_never_crashes():
    _zotero_json_case(DEFAULT_CASES)


@pytest.mark.slow
def test_zotero_json_never_crashes_slow():
    _zotero_json_case(SLOW_CASES)


CORPUS_CASES = [
    (".txt", st.binary(max_size=400)), (".csv", st.binary(max_size=400)),
    (".csv", st.lists(st.lists(line_text, min_size=1, max_size=4), max_size=5).map(
        lambda rows: ("title,abstract,authors,year\n" + "\n".join(",".join(r) for r in rows)).encode())),
    (".jsonl", st.binary(max_size=300)),
    (".jsonl", st.lists(records | json_values, max_size=4).map(lambda v: _as_bytes("jsonl", v))),
    (".json", st.lists(records, max_size=4).map(lambda v: _as_bytes("json", v))),
    (".json", json_values.map(lambda v: _as_bytes("json", v))),
    (".bib", bibtex_text.map(str.encode)),
]


def _corpus_case(tmp_path_factory, suffix, strategy, cases):
    from recommender.corpus.readers import load_corpus

    folder = tmp_path_factory.mktemp("corpus")

    @_fuzz(strategy, cases)
    def run(data):
        path = folder / f"corpus{suffix}"
        path.write_bytes(data)
        loaded = _tolerated(lambda: load_corpus([path]))
        for paper in loaded.papers if loaded else []:
            assert isinstance(paper.title, str) and all(isinstance(a, str) for a in paper.authors)
            assert paper.abstract is None or isinstance(paper.abstract, str)
    run()


@pytest.mark.parametrize(("suffix", "strategy"), CORPUS_CASES)
def test_corpus_files_never_crash(tmp_path_factory, suffix, strategy):
    _corpus_case(tmp_path_factory, suffix, strategy, DEFAULT_CASES)


@pytest.mark.slow
@pytest.mark.parametrize(("suffix", "strategy"), CORPUS_CASES)
def test_corpus_files_never_crash_slow(tmp_path_factory, suffix, strategy):
    _corpus_case(tmp_path_factory, suffix, strategy, SLOW_CASES)


# ---- zotero.sqlite and the model file --------------------------------------------------------------------
sql_values = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=True), st.text(max_size=30),
                       st.binary(max_size=30))


def _sqlite_case(tmp_path_factory, cases):
    import shutil
    import sqlite3

    from tests import zotero_db
    from zotero_bridge.sources import SourceOptions
    from zotero_bridge.sources.sqlite import read_sqlite_library

    if not zotero_db.schema_available():
        pytest.skip("the real Zotero schema (../shared/fixtures) is not present")
    folder = tmp_path_factory.mktemp("sqlite")
    sample = zotero_db.build_sample_library(folder / "sample.sqlite")

    @_fuzz(st.one_of(st.binary(max_size=400).map(lambda b: ("bytes", b)),
                     st.tuples(st.just("values"), st.lists(sql_values, min_size=1, max_size=6))), cases)
    def run(case):
        kind, payload = case
        path = folder / "zotero.sqlite"
        if kind == "bytes":
            path.write_bytes(payload)
        else:  # the real schema with values of any type where Zotero keeps text
            shutil.copy(sample, path)
            with sqlite3.connect(path) as connection:
                ids = [row[0] for row in connection.execute("SELECT valueID FROM itemDataValues")]
                for value_id, value in zip(ids, payload):
                    try:
                        connection.execute("UPDATE itemDataValues SET value = ? WHERE valueID = ?", (value, value_id))
                    except sqlite3.IntegrityError:
                        pass  # the value is already used (values are unique in Zotero's schema)
                connection.execute("UPDATE creators SET lastName = ? WHERE creatorID = 1", (payload[0],))
        read = _tolerated(lambda: read_sqlite_library(str(path), SourceOptions()))
        for item in read.items if read else []:
            _check_item(item)
    run()


def test_zotero_sqlite_never_crashes(tmp_path_factory):
    _sqlite_case(tmp_path_factory, max(1, DEFAULT_CASES // 2))


@pytest.mark.slow
def test_zotero_sqlite_never_crashes_slow(tmp_path_factory):
    _sqlite_case(tmp_path_factory, SLOW_CASES)


MODEL_ARRAYS = ["format", "settings", "provenance", "encoder_id", "map_kind", "map_weights", "map_intercept",
                "item_gram", "fold_in_confidence", "neighbour_vectors", "neighbour_factors"]
arrays = st.one_of(st.integers(-5, 5).map(lambda n: [n]), st.lists(st.floats(allow_nan=True), max_size=6),
                   st.lists(st.lists(st.integers(-3, 40), min_size=2, max_size=2), max_size=3),
                   st.text(max_size=20), json_values.map(json.dumps),
                   st.just("zotrec-collaborative-dense-1"), st.just("knn"), st.just("ridge"), st.just('{"factors": 2}'))


def _model_case(tmp_path_factory, cases):
    import io

    import numpy as np

    from recommender.collaborative.dense_model import DENSE_MODEL_FORMAT as MODEL_FORMAT
    from recommender.collaborative.dense_model import DenseCollaborativeModel

    folder = tmp_path_factory.mktemp("model")

    def npz(contents: dict) -> bytes:
        out = io.BytesIO()
        np.savez(out, **{k: np.array(v) for k, v in contents.items()})
        return out.getvalue()

    structured = st.dictionaries(st.sampled_from(MODEL_ARRAYS), arrays, max_size=len(MODEL_ARRAYS)).map(
        lambda d: npz({"format": MODEL_FORMAT, **d} if "format" not in d else d))

    @_fuzz(st.one_of(st.binary(max_size=300), structured), cases)
    def run(data):
        path = folder / "model.npz"
        path.write_bytes(data)
        _tolerated(lambda: DenseCollaborativeModel.load(path))
    run()


def test_model_file_never_crashes(tmp_path_factory):
    _model_case(tmp_path_factory, DEFAULT_CASES)


@pytest.mark.slow
def test_model_file_never_crashes_slow(tmp_path_factory):
    _model_case(tmp_path_factory, SLOW_CASES)
