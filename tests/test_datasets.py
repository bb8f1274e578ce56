"""CiteULike loaders: real files (counts from SOURCE.md), tiny hand-made folders, and clear errors."""

from __future__ import annotations

import pytest

from recommender.collaborative.datasets import (
    load_citeulike_a,
    load_citeulike_t,
    load_dataset,
    parse_data_spec,
)
from recommender.errors import InputError


@pytest.fixture
def tiny_a(tmp_path):
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "users.dat").write_text("2 0 2\n1 1\n3 2 1 0\n")
    (folder / "titles.txt").write_text("Graph networks\nDeep learning of proteins\nCommunity structure in graphs\n")
    return folder


def test_citeulike_a_counts_match_source_md(shared):
    data = load_dataset(f"citeulike-a:{shared / 'data' / 'citeulike-a'}")
    assert data.interactions.shape == (5551, 16980)
    assert data.interactions.nnz == 204_986
    assert data.texts[2] == "Exploring complex networks"
    assert data.word_order_kept


def test_citeulike_t_counts_and_bag_of_words(shared):
    data = load_dataset(f"citeulike-t:{shared / 'data' / 'citeulike-t'}")
    assert data.interactions.shape == (7947, 25975)
    assert data.interactions.nnz == 134_860
    assert not data.word_order_kept
    assert sum(not text for text in data.texts) == 31  # SOURCE.md: 31 items have an empty bag
    first = (shared / "data" / "citeulike-t" / "mult.dat").read_text().split("\n", 1)[0].split()
    assert len(data.texts[0].split()) >= sum(int(pair.split(":")[1]) for pair in first[1:])


def test_tiny_folder_known_answer(tiny_a):
    data = load_citeulike_a(tiny_a)
    assert data.interactions.toarray().tolist() == [[1, 0, 1], [0, 1, 0], [1, 1, 1]]
    assert data.texts[1] == "Deep learning of proteins"


def test_bag_of_words_repeats_counted_words(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "users.dat").write_text("1 0\n1 1\n")
    (folder / "vocabulary.dat").write_text("graph\nprotein\nfold\n")
    (folder / "mult.dat").write_text("2 0:2 2:1\n0\n")
    data = load_citeulike_t(folder)
    assert sorted(data.texts[0].split()) == ["fold", "graph", "graph"]
    assert data.texts[1] == ""


def test_count_mismatch_names_file_and_line(tiny_a):
    (tiny_a / "users.dat").write_text("2 0 2\n3 1\n")
    with pytest.raises(InputError, match=r"users\.dat:2: the count"):
        load_citeulike_a(tiny_a)


def test_item_id_out_of_range_names_line(tiny_a):
    (tiny_a / "users.dat").write_text("1 0\n1 7\n")
    with pytest.raises(InputError, match=r"users\.dat:2: item id outside 0\.\.2"):
        load_citeulike_a(tiny_a)


def test_missing_file_and_bad_spec(tmp_path):
    with pytest.raises(InputError, match="titles.txt: file not found"):
        load_citeulike_a(tmp_path)
    with pytest.raises(InputError, match="NAME:FOLDER"):
        parse_data_spec("movielens:/x")
    assert parse_data_spec("citeulike-t:/data/t")[0] == "citeulike-t"
