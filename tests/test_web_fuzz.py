"""Hostile and broken answers of the web sources: any bytes, a saved real answer cut or flipped anywhere, JSON
of any shape in any field, are a page or one AnswerError line — never another exception (issue 37, "bad input
gets a one-line error")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recommender.corpus.biorxiv import parse_details
from recommender.corpus.feed_parse import parse_feed
from recommender.corpus.openalex_parse import parse_works
from recommender.corpus.pubmed_parse import parse_articles
from recommender.corpus.stream import AnswerError, StreamPage
from recommender.errors import ServerLimitError

SAVED = Path(__file__).parent / "data" / "web"
PARSERS = {
    "medrxiv-details.json": lambda body: parse_details(body, "answer", "medrxiv", "radiology and imaging"),
    "openalex-works.json": lambda body: parse_works(body, "answer"),
    "pubmed-efetch.xml": lambda body: parse_articles(body, "answer"),
    "nature-rss10.xml": lambda body: parse_feed(body, "answer"),
    "pubmed-rss20.xml": lambda body: parse_feed(body, "answer"),
    "plos-atom.xml": lambda body: parse_feed(body, "answer"),
}
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)


def read(name: str, body: bytes) -> None:
    try:
        page = PARSERS[name](body)
    except (AnswerError, ServerLimitError) as error:
        assert "\n" not in str(error) and str(error).startswith("answer")
    else:
        assert isinstance(page, StreamPage)
        for row in page.rows:
            assert row["id"] and row["title"] and isinstance(row["authors"], list)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(data=st.data())
def test_a_saved_answer_cut_or_flipped_anywhere(name, data):
    body = bytearray((SAVED / name).read_bytes())
    at = data.draw(st.integers(0, len(body) - 1))
    if data.draw(st.booleans()):
        body = body[:at]
    else:
        body[at] = data.draw(st.integers(0, 255))
    read(name, bytes(body))


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(body=st.binary(max_size=300))
def test_any_bytes(name, body):
    read(name, body)


@pytest.mark.parametrize("name, container", [("medrxiv-details.json", "collection"),
                                             ("openalex-works.json", "results")])
@FUZZ
@given(data=st.data())
def test_json_of_any_shape_in_any_field(name, container, data):
    answer = json.loads((SAVED / name).read_bytes())
    record = answer[container][0]
    field = data.draw(st.sampled_from(sorted(record)))
    record[field] = data.draw(JSON)
    if data.draw(st.booleans()):
        answer[data.draw(st.sampled_from(sorted(answer)))] = data.draw(JSON)
    read(name, json.dumps(answer).encode())


@pytest.mark.parametrize("authorships", [1, "Ann Smith", {"author": {"display_name": "A"}}, None])
def test_openalex_authorships_that_are_no_list_leave_a_work_without_authors(authorships):
    """Hypothesis found it: `"authorships": 1` raised a TypeError out of the reader."""
    answer = json.loads((SAVED / "openalex-works.json").read_bytes())
    answer["results"][0]["authorships"] = authorships
    page = parse_works(json.dumps(answer).encode(), "answer")
    first = answer["results"][0]["id"].rsplit("/", 1)[-1]
    assert [row["authors"] for row in page.rows if row["id"] == f"openalex:{first}"] == [[]]
