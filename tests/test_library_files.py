"""Library export readers: BibTeX, RIS, CSL-JSON, JSON Lines; broken entries reported, not lost."""

from __future__ import annotations

import json

import pytest

from recommender.errors import InputError
from zotero_bridge.sources import read_library
from zotero_bridge.sources.files import read_library_file

BIBTEX = """@article{smith_flows_2021,
  title = {Neural {Spline} Flows},
  author = {Durkan, Conor and Müller, Jörg},
  journal = {NeurIPS},
  year = {2019},
  doi = {10.5555/1},
  abstract = {Flows with splines.},
  keywords = {flows, density},
  groups = {Thesis/Chapter 2}
}

@article{broken_2020,
  title = {Never closed,
  author = {Nobody}

@misc{empty_2022,
  note = {no title here}
}

@inproceedings{ok_2023,
  title = {Second Good One},
  booktitle = {ICML},
  author = {OpenAI}
}
"""


def test_bibtex_keeps_fields_and_reports_broken_and_empty_entries(tmp_path):
    path = tmp_path / "lib.bib"
    path.write_text(BIBTEX, encoding="utf-8")
    items, skipped = read_library_file(path)
    assert [item.key for item in items] == ["smith_flows_2021", "ok_2023"]
    first = items[0]
    assert first.title == "Neural Spline Flows"
    assert [c.name for c in first.creators] == ["Conor Durkan", "Jörg Müller"]
    assert (first.doi, first.year, first.abstract) == ("10.5555/1", 2019, "Flows with splines.")
    assert first.tags == ("flows", "density")
    assert first.collections == ("Thesis/Chapter 2",)
    assert items[1].item_type == "conferencePaper"
    reasons = {s.where: s.reason for s in skipped}
    assert reasons[f"{path}:12"] == "BibTeX entry 'broken_2020' could not be parsed"
    assert reasons[f"{path}:16"] == "empty (no title, no abstract)"


def test_ris_records(tmp_path):
    path = tmp_path / "lib.ris"
    path.write_text(
        "TY  - JOUR\nTI  - Deep learning\nAU  - LeCun, Yann\nAU  - Bengio, Yoshua\nAB  - A review.\n"
        "DO  - 10.1038/nature14539\nPY  - 2015\nKW  - dl\nUR  - https://doi.org/10.1038/nature14539\nER  - \n\n"
        "TY  - CONF\nTI  - Cut off record\n",
        encoding="utf-8",
    )
    items, skipped = read_library_file(path)
    assert len(items) == 1
    item = items[0]
    assert [c.name for c in item.creators] == ["Yann LeCun", "Yoshua Bengio"]
    assert (item.doi, item.year, item.tags) == ("10.1038/nature14539", 2015, ("dl",))
    assert skipped[0].where == f"{path}:12" and "ER  -" in skipped[0].reason


def test_csl_json_and_notes(tmp_path):
    path = tmp_path / "lib.json"
    path.write_text(json.dumps([
        {"id": "http://zotero.org/users/1/items/ABCD1234", "type": "paper-conference", "title": "Flow Matching",
         "author": [{"family": "Lipman", "given": "Yaron"}, {"literal": "DeepMind"}],
         "issued": {"date-parts": [[2023, 5]]}, "DOI": "10.1/x", "abstract": "Text."},
        {"id": "n1", "type": "note"},
    ]), encoding="utf-8")
    items, skipped = read_library_file(path)
    assert items[0].key == "ABCD1234"
    assert items[0].item_type == "conferencePaper"
    assert [c.name for c in items[0].creators] == ["Yaron Lipman", "DeepMind"]
    assert (items[0].date, items[0].year) == ("2023-05", 2023)
    assert skipped[0].reason == "note"


def test_jsonl_accepts_zotero_api_json_and_flat_rows(tmp_path):
    from tests.conftest import PYZOTERO_RESPONSES

    api_items = json.loads((PYZOTERO_RESPONSES / "items_doc.json").read_text())
    path = tmp_path / "lib.jsonl"
    lines = [json.dumps(item) for item in api_items]
    lines.append(json.dumps({"key": "F1", "title": "Flat", "creators": ["Doe, Jane"], "tags": ["t"]}))
    lines.append("[1, 2]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items, skipped = read_library_file(path)
    regular = [i for i in api_items if i["data"]["itemType"] not in ("note", "attachment", "annotation")]
    assert len(items) == len(regular) + 1
    assert items[-1].creators[0].name == "Jane Doe"
    assert skipped[-1].reason == "not a JSON object"


def test_duplicate_items_across_files_are_reported_once(tmp_path):
    path = tmp_path / "lib.bib"
    path.write_text(BIBTEX, encoding="utf-8")
    read = read_library([str(path), str(path)])
    assert [item.key for item in read.items] == ["smith_flows_2021", "ok_2023"]
    assert sum("duplicate" in s.reason for s in read.skipped) == 2


@pytest.mark.parametrize("name, content, message", [
    ("x.bib", b"   \n", "file is empty"),
    ("x.docx", b"PK", "unknown library format"),
    ("x.json", b"{broken", "not valid JSON"),
    ("x.ris", b"no records here", "no RIS records"),
])
def test_bad_library_files(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_library_file(path)


def test_shared_keys_are_kept_with_a_warning_and_huge_abstracts_cut(tmp_path, caplog):
    path = tmp_path / "dup.bib"
    path.write_text("@article{k, title={First}}\n@article{k, title={Second}, abstract={" + "word " * 5000 + "}}\n")
    read = read_library([str(path)])
    assert [item.title for item in read.items] == ["First", "Second"]
    assert "1 item shares a key with an earlier item (all are kept); first:" in caplog.text
    assert len(read.items[1].abstract) == 20_000
    assert "abstract over 20000 characters (cut)" in caplog.text


def test_many_shared_keys_warn_once(tmp_path, caplog):
    path = tmp_path / "nokeys.jsonl"
    path.write_text("".join(f'{{"key": "k", "title": "Paper {n}"}}\n' for n in range(500)))
    read = read_library([str(path)])
    assert len(read.items) == 500
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "499 items share a key" in warnings[0].getMessage()
