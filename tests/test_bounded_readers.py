"""Files cannot make zotrec blow up or lose rows (issue 32, "Files can"): BibTeX macros that expand without
end, a CSV whose quoting breaks, a JSON Lines line of hundreds of MB, a model whose header declares an array of
150 GB or the wrong shape. Each is a bounded read with one line naming the file, line or field."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel
from recommender.corpus.readers import load_corpus
from recommender.errors import InputError
from recommender.formats.bibtex import parse_bibtex
from zotero_bridge.sources import SourceOptions, read_library

from .conftest import REPO

MEMORY_LIMIT = 2 << 30  # today's code reached 10.9 GB on the BibTeX below: here it fails fast instead
MAX_FIELD_CHARS = 1 << 20  # the manual's limits (docs/safety.md), held to the code by test_the_limits_are_the_readmes
MAX_JSON_LINE_CHARS = 16 << 20


def test_the_limits_are_the_readmes():
    from recommender.formats import bibtex, textfile

    assert (bibtex.MAX_FIELD_CHARS, textfile.MAX_JSON_LINE_CHARS) == (MAX_FIELD_CHARS, MAX_JSON_LINE_CHARS)
    page = (REPO / "docs" / "safety.md").read_text(encoding="utf-8")
    assert "1 Mi characters" in page and "16 Mi characters" in page and "64 Mi characters" in page


def macro_bomb(path, entry="@article{k2, title = {A fine paper about graphs}, abstract = {Graphs and trees.}}"):
    """About 700 bytes of BibTeX whose @string macros expand to 10^11 characters."""
    lines = ['@string{a0 = "aaaaaaaaaa"}']
    lines += [f"@string{{a{i} = {' # '.join([f'a{i - 1}'] * 10)}}}" for i in range(1, 11)]
    lines += ["@article{k1, title = a10 # { tail}, abstract = {Bombed.}}", entry]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def in_bounded_process(code: str) -> subprocess.CompletedProcess:
    """`code` in a child python limited to MEMORY_LIMIT of address space (a blow-up is a MemoryError there)."""
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          preexec_fn=limit, cwd=REPO)


@pytest.mark.parametrize("reader", ["library", "corpus"])
def test_bibtex_macros_that_expand_without_end_are_skipped_naming_the_line(tmp_path, reader):
    bomb = macro_bomb(tmp_path / "bomb.bib")
    call = ("read_library([str(path)], SourceOptions())" if reader == "library" else "load_corpus([str(path)])")
    result = in_bounded_process(
        "from pathlib import Path\nfrom zotero_bridge.sources import SourceOptions, read_library\n"
        "from recommender.corpus.readers import load_corpus\n"
        f"path = Path({str(bomb)!r})\nread = {call}\n"
        "titles = [getattr(x, 'title', '') for x in (read.items if hasattr(read, 'items') else read.papers)]\n"
        "print('TITLES', titles)\nprint('SKIPPED', [(s.where, s.reason) for s in read.skipped])")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "A fine paper about graphs" in result.stdout  # the good entry after the bomb is read
    skipped = result.stdout.split("SKIPPED", 1)[1]
    assert f"{bomb}:7" in skipped and "Mi characters" in skipped  # the @string that grew too long, by line


def test_a_field_over_the_cap_skips_its_entry_and_no_other(tmp_path):
    text = (f"@article{{big, title = {{Big}}, abstract = {{{'x' * (MAX_FIELD_CHARS + 1)}}}}}\n"
            "@article{small, title = {Small}}\n")
    entries, skipped = parse_bibtex(text, "lib.bib")
    assert [e["ID"] for e in entries] == ["small"]
    assert [s.where for s in skipped] == ["lib.bib:1"] and "longer than 1 Mi characters" in skipped[0].reason


def stray_quote_csv(path, rows=6000, broken=1000):
    """A corpus CSV whose row `broken` opens a quote that only a late row closes (it swallowed 5,000 rows)."""
    lines = ["id,title,abstract,authors"]
    for i in range(rows):
        title = '"Broken title' if i == broken else 'Closing" title' if i == rows - 1 else f"Title {i}"
        lines.append(f"p{i},{title},Abstract number {i} about learning,A. Author")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_stray_quote_in_a_csv_corpus_is_an_error_naming_its_line(tmp_path):
    corpus = stray_quote_csv(tmp_path / "papers.csv")
    with pytest.raises(InputError) as caught:
        load_corpus([corpus])
    assert str(caught.value).startswith(f"{corpus}:1002: ") and "quote" in str(caught.value)


def test_a_quoted_multi_line_abstract_is_still_one_row(tmp_path):
    corpus = tmp_path / "papers.csv"
    corpus.write_text('id,title,abstract\np1,One,"Line one,\nline two"\np2,Two,"Plain, ""quoted"" text"\n',
                      encoding="utf-8")
    papers = load_corpus([corpus]).papers
    assert [p.id for p in papers] == ["p1", "p2"] and papers[1].abstract == 'Plain, "quoted" text'


def test_a_json_lines_line_over_the_cap_is_skipped_in_both_readers(tmp_path):
    long_line = '{"id": "big", "title": "Big", "abstract": "' + "x" * MAX_JSON_LINE_CHARS + '"}'
    path = tmp_path / "papers.jsonl"
    path.write_text(f'{long_line}\n{{"id": "p2", "title": "Small paper", "abstract": "Fine."}}\n', encoding="utf-8")
    corpus = load_corpus([path])
    assert [p.id for p in corpus.papers] == ["p2"]
    assert [s.where for s in corpus.skipped] == [f"{path}:1"] and "Mi characters" in corpus.skipped[0].reason
    library = read_library([str(path)], SourceOptions())
    assert [item.title for item in library.items] == ["Small paper"]
    assert [s.where for s in library.skipped] == [f"{path}:1"]


def shipped_with(tmp_path, name, replacement: bytes):
    """The shipped model with one member's .npy replaced by `replacement` (a header, maybe a lie)."""
    out = tmp_path / f"model-{name}.npz"
    with zipfile.ZipFile(SHIPPED_MODEL) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.namelist():
            target.writestr(member, replacement if member == f"{name}.npy" else source.read(member))
    return out


def npy_header(shape, descr="<f4") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + b"\0" * 64


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def test_a_model_whose_header_declares_a_huge_array_is_one_line_before_any_allocation(tmp_path):
    model = shipped_with(tmp_path, "item_gram", npy_header((200000, 200000)))
    with pytest.raises(InputError) as caught:
        DenseCollaborativeModel.load(model)
    message = str(caught.value)
    assert message.startswith(f"{model}: ") and "'item_gram'" in message and "200000 × 200000" in message


@pytest.mark.parametrize(("name", "array", "words"), [
    ("item_gram", np.zeros((3, 5), np.float32), "'item_gram' is 3 × 5"),
    ("neighbour_factors", np.zeros((7, 8), np.float16), "'neighbour_factors' is 7 × 8"),
    ("item_gram", np.zeros(4, np.float32), "'item_gram' is a 4 float32 array"),
])
def test_a_model_with_wrong_shapes_is_one_line_naming_the_field(tmp_path, name, array, words):
    model = shipped_with(tmp_path, name, npy(array))
    with pytest.raises(InputError) as caught:
        DenseCollaborativeModel.load(model).factors_for_vectors(np.zeros((1, 384), np.float32))
    assert str(caught.value).startswith(f"{model}: ") and words in str(caught.value), str(caught.value)


def test_a_model_for_embeddings_of_another_size_is_one_line_naming_the_field(tmp_path):
    model = shipped_with(tmp_path, "neighbour_vectors", npy(np.ones((16980, 100), np.int8)))
    with pytest.raises(InputError, match="'neighbour_vectors' holds 100-dimensional embeddings"):
        DenseCollaborativeModel.load(model).factors_for_vectors(np.zeros((1, 384), np.float32))


def test_the_shipped_model_still_loads_and_scores():
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    factors = model.factors_for_vectors(np.ones((2, 384), np.float32) / np.sqrt(384))
    assert factors.shape == (2, len(model.item_gram)) and np.isfinite(factors).all()
