"""Which texts the English encoder cannot read (recommender/scripts.py), checked against MiniLM's own
vocabulary and real Chinese titles (tests/data/chinese_papers.tsv)."""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

from recommender.features.dense import TOKENIZER_PATH
from recommender.scripts import UNREAD_SCRIPTS, letter_script, unread_notice, unread_script, unread_texts

PAPERS = Path(__file__).parent / "data" / "chinese_papers.tsv"


def chinese_papers() -> list[dict]:
    with open(PAPERS, encoding="utf-8") as handle:
        return list(csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t"))


def _wordpieces_by_script() -> dict[str, tuple[int, int]]:
    """Per first word of a letter's Unicode name: (vocabulary entries with such a letter, of them longer than one)."""
    vocab = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    counts: dict[str, list[int]] = {}
    for piece in vocab:
        piece = piece[2:] if piece.startswith("##") else piece
        for script in {unicodedata.name(c, "?").split(" ", 1)[0] for c in piece if c.isalpha()}:
            entry = counts.setdefault(script, [0, 0])
            entry[0] += 1
            entry[1] += len(piece) > 1
    return {script: (total, longer) for script, (total, longer) in counts.items()}


def test_the_unread_scripts_are_those_minilm_spells_letter_by_letter():
    """Latin has tens of thousands of whole wordpieces; each listed script at most a handful (Cyrillic's 8 are
    the most), so its words reach the model as single letters or [UNK]."""
    pieces = _wordpieces_by_script()
    assert pieces["LATIN"][1] > 20_000
    for name in UNREAD_SCRIPTS:
        assert pieces.get(name, (0, 0))[1] <= 10, name
    han = sum(1 for piece in json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
              if len(piece) == 1 and unicodedata.name(piece, "").startswith("CJK UNIFIED"))
    assert han < 300  # of the ~3,500 characters of everyday Chinese: most become [UNK]


def test_the_quick_filter_lets_every_letter_of_an_unread_script_through():
    from recommender.scripts import _maybe_unread

    assert not [code for code in range(0x110000) if chr(code).isalpha() and letter_script(chr(code))
                and not _maybe_unread().match(chr(code))]


def test_the_quick_filter_is_the_blocks_it_names():
    """Written as a complement (quicker to compile), it lets through exactly the ranges it names."""
    import re

    from recommender.scripts import _maybe_unread

    ranges = re.compile("[\u0370-\u1dff\u1f00-\u1fff\u2c00-\U0001d3ff\U0001d800-\U0010ffff]")
    quick = _maybe_unread()
    assert not [code for code in range(0x110000) if bool(ranges.match(chr(code))) != bool(quick.match(chr(code)))]


def test_chinese_titles_are_unread_and_english_ones_read():
    titles = [paper["title_zh"] for paper in chinese_papers()]
    assert all(unread_script(title) == "Han" for title in titles)  # "基于Goldwasser-Micali…" and "Text-CRNN…" too
    assert unread_script("Towards α-divergence minimisation with β-VAE priors: a Schrödinger bridge view") is None
    assert unread_script("Graph neural networks") is None
    assert unread_script("") is None
    assert unread_script("Обучение с подкреплением для роботов") == "Cyrillic"
    assert unread_script("ディープラーニングによる画像認識") in ("Katakana", "Han", "Hiragana")
    assert letter_script("é") is None and letter_script("Ж") == "Cyrillic" and letter_script("7") is None


def test_the_notice_names_how_many_items_and_the_script():
    english = ["Deep reinforcement learning", "Offline RL with diffusion", "Policy gradients", "Q-learning"]
    texts = english + [paper["title_zh"] for paper in chinese_papers()[:8]]
    counts = unread_texts(texts)
    assert counts == {"Han": 8}
    notice = unread_notice(counts, len(texts))
    assert notice.startswith("8 of 12 library items are in Han, which the English text encoder (MiniLM) cannot read")
    assert unread_notice(unread_texts(english), 4) is None
    assert unread_notice({"Han": 1}, 12).startswith("1 of 12 library items is in Han")
