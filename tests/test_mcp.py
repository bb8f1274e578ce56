"""`zotrec mcp` through the MCP SDK's own client over stdio: `python -m zotero_bridge mcp …` spawned as a real
subprocess, its tools listed and called; answers compared with `reading-list --format json` on the same library
and corpus, and `save` against the fake Zotero Web API (tests/zotero_server.py), which it writes only when asked."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

from .conftest import REPO, ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import NAME, corpus_file, corpus_rows  # noqa: F401 (the Web API sync's corpus)

pytest.importorskip("mcp", reason="zotrec mcp needs the MCP SDK (pip install 'mcp>=2.3,<3')")

LIBRARY = REPO / "examples" / "library.bib"
FAST = ["--features", "tfidf", "--model", "none"]


def session(args, calls, tmp_path, env=None, together=False):
    """Start `zotrec mcp ARGS`, list its tools, make each call (name, arguments) in order (`together`: all at
    once, as a double click sends them); returns (tools, the results, the server's stderr)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    params = StdioServerParameters(command=sys.executable, args=["-m", "zotero_bridge", "mcp", *args],
                                   env=environment, cwd=str(REPO))
    log = tmp_path / "server-stderr.txt"

    async def run():
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
                listed = await client.list_tools()
                if not together:
                    return listed.tools, [await client.call_tool(name, arguments) for name, arguments in calls]
                return listed.tools, await asyncio.gather(*(client.call_tool(name, arguments)
                                                            for name, arguments in calls))

    tools, results = asyncio.run(run())
    return tools, results, log.read_text()


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if getattr(block, "text", None))


def test_tools_and_the_same_list_as_reading_list(corpus_file, tmp_path):  # noqa: F811
    args = ["--library", str(LIBRARY), "--corpus", str(corpus_file), *FAST]
    title = "Density estimation using Real NVP"  # an item of examples/library.bib
    journals = tmp_path / "journals.bib"
    journals.write_text("".join(f"@article{{r{n}, title = {{Imaging study {n}}}, journal = {{Radiology}}, "
                                f"issn = {{0033-8419}}, year = {{2024}}}}\n" for n in range(3)), encoding="utf-8")
    calls = [("recommend", {"n": 10}), ("explain", {"paper": "PLACEHOLDER"}),
             ("similar", {"text": "earthquakes seismic waves", "n": 5}), ("similar", {"item": title, "n": 5}),
             ("similar", {}), ("explain", {"paper": "no/such-paper"}),
             ("recommend", {"library": [str(tmp_path / "missing.bib")]}), ("sources", {"library": [str(journals)]}),
             ("recommend", {"n": 10, "prefer": ["earthquakes seismic waves"], "avoid": ["food allergy"]})]
    listed = CliRunner().invoke(cli, ["reading-list", *args, "-n", "10", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    expected = json.loads(listed.stdout)
    calls[1] = ("explain", {"paper": expected[0]["id"]})
    steered = CliRunner().invoke(cli, ["reading-list", *args, "-n", "10", "--format", "json", "--prefer",
                                       "earthquakes seismic waves", "--avoid", "food allergy"])
    assert steered.exit_code == 0, steered.output
    tools, results, stderr = session(args, calls, tmp_path)

    assert {tool.name for tool in tools} == {"recommend", "explain", "similar", "sources", "save"}
    assert all(tool.output_schema for tool in tools)  # structured answers
    assert next(t for t in tools if t.name == "recommend").annotations.read_only_hint
    recommend, explain, like_text, like_item, neither, unknown, missing, follow, steer = results

    assert not recommend.is_error
    papers = recommend.structured_content["papers"]
    assert [p["id"] for p in papers] == [p["id"] for p in expected]  # the same top 10, in the same order
    assert np.allclose([p["score"] for p in papers], [p["score"] for p in expected])
    strip = lambda rows: [{k: v for k, v in row.items() if k != "score"} for row in rows]  # noqa: E731
    assert strip(papers) == strip(expected)  # the rows of the JSON renderer: ids, titles, links, reasons
    assert json.loads(text_of(recommend)) == recommend.structured_content  # the text block says the same
    assert strip(steer.structured_content["papers"]) == strip(json.loads(steered.stdout))  # --prefer / --avoid
    assert strip(steer.structured_content["papers"]) != strip(papers)

    assert not explain.is_error
    why = explain.structured_content
    assert why["ranked"] and why["rank"] == 1 and why["paper"]["id"] == expected[0]["id"]
    assert why["of"] == len(corpus_rows())
    assert any(line.startswith("because you saved: ") for line in why["why"])

    words = {"earthquakes", "seismic", "waves"}
    found = like_text.structured_content["papers"]
    assert len(found) == 5 and all(words <= set(p["title"].lower().replace("(", " ").split()) for p in found)
    assert like_item.structured_content["like"]["item"]["title"] == title
    assert [p["id"] for p in like_item.structured_content["papers"]] != [p["id"] for p in found]

    for failed in (neither, unknown, missing):
        message = text_of(failed)
        assert failed.is_error and "\n" not in message and "Traceback" not in message
    assert "a text or a library item" in text_of(neither)
    assert "'no/such-paper' is not a paper of the corpus" in text_of(unknown)
    assert "missing.bib" in text_of(missing)
    assert follow.structured_content["sources"][0] == {"option": "openalex:issn:0033-8419",
                                                       "label": "Radiology (ISSN 0033-8419)", "count": 3,
                                                       "kind": "journal"}
    assert "Traceback" not in stderr and "tools recommend, explain, similar, sources, save on stdio" in stderr


def test_save_writes_only_when_asked_and_once(zotero_server, corpus_file, tmp_path):  # noqa: F811
    args = ["--library", "zotero:web", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url,
            "--corpus", str(corpus_file), *FAST]
    listed = CliRunner().invoke(cli, ["reading-list", *args, "-n", "10", "--format", "json"],
                                env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert listed.exit_code == 0, listed.output
    pick = json.loads(listed.stdout)[4]["id"]
    calls = [("recommend", {"n": 10}), ("save", {"paper": pick}), ("save", {"paper": pick, "confirm": False}),
             ("save", {"paper": pick, "confirm": True}), ("save", {"paper": pick, "confirm": True})]
    before = len(zotero_server.writes())
    tools, results, stderr = session(args, calls[:3], tmp_path, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert [r.is_error for r in results] == [False] * 3
    assert len(zotero_server.writes()) == before  # asked twice without confirm: nothing written
    assert results[1].structured_content["written"] is False and results[1].structured_content["paper"]["id"] == pick
    assert "confirm: true" in results[1].structured_content["message"]

    tools, results, stderr = session(args, calls[3:], tmp_path, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY},
                                     together=True)  # a double click: both calls at once
    first, again = sorted((r.structured_content for r in results), key=lambda answer: not answer["written"])
    assert first["saved"] and first["written"] and first["action"] == "created" and first["collection"] == NAME
    assert again["saved"] and not again["written"] and again["item_key"] == first["item_key"]
    library = zotero_server.library("user", ZOTERO_USER_ID)
    made = [d for d in library.items.values() if f"zotrec: {pick} " in (d.get("extra") or "")]
    assert len(made) == 1 and made[0]["collections"] == [first["collection_key"]]
    assert [d for d in library.items.values() if d.get("parentItem") == made[0]["key"]]  # its reasons note
    answers = json.dumps([r.structured_content for r in results]) + " ".join(text_of(r) for r in results)
    assert ZOTERO_WRITE_KEY not in answers and ZOTERO_WRITE_KEY not in stderr


def test_a_refused_key_is_a_tool_error_that_never_holds_it(zotero_server, corpus_file, tmp_path):  # noqa: F811
    wrong = "not-a-real-key-987654"
    args = ["--library", "zotero:web", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url,
            "--corpus", str(corpus_file), *FAST]
    _, [result], stderr = session(args, [("recommend", {"n": 3})], tmp_path, env={"ZOTERO_API_KEY": wrong})
    assert result.is_error and "refused the API key" in text_of(result)
    assert wrong not in text_of(result) and wrong not in stderr and "Traceback" not in stderr


# ---- the tools' answers on the one ranking, without a subprocess (zotero_bridge/mcp/tools.py) ----------------
class RankingPipeline:
    """tools.Pipeline on recommender/pipeline/rank.py directly: the corpus file and a fixed library."""

    def __init__(self, papers, items):
        from recommender.scoring.ranking import Recommender

        self.recommender, self.items, self.saved = Recommender(papers), items, []

    def ranked(self, query, top_n, profile=None, shown=False):
        from recommender.pipeline import Library, RankOptions, rank
        from zotero_bridge.mcp.tools import Ranked

        library = Library(items=self.items, profile=profile(self.items) if profile else None)
        recs = rank(self.recommender, library, RankOptions(top_n=top_n))
        return Ranked(recs, self.items, self.recommender.corpus, "test library", "test corpus")

    def library_items(self, query):
        return "test library", self.items

    def save(self, query, rec, collection):
        self.saved.append(rec.paper.id)
        raise AssertionError("save without confirm must not reach the pipeline")


@pytest.fixture
def pipeline(corpus_file):  # noqa: F811
    from recommender.corpus.readers import load_corpus
    from recommender.items import LibraryItem

    papers = load_corpus([corpus_file]).papers
    owned = papers[0]
    items = [LibraryItem(key="OWN1", title=owned.title, abstract=owned.abstract or ""),
             LibraryItem(key="K2", title="Seismic waves and earthquakes", abstract="earthquakes seismic waves"),
             LibraryItem(key="K3", title="Seismic waves in the lab", abstract="seismic waves laboratory")]
    return RankingPipeline(papers, items), owned


def test_explain_says_why_and_when_a_paper_is_left_out(pipeline):
    from zotero_bridge.mcp import tools

    pipe, owned = pipeline
    top = tools.recommend(pipe, tools.Query(), 3)["papers"][0]
    why = tools.explain(pipe, tools.Query(), top["id"])
    assert why["ranked"] and why["rank"] == 1 and why["paper"] == top
    left_out = tools.explain(pipe, tools.Query(), owned.id)  # the library holds it: never recommended
    assert not left_out["ranked"] and left_out["paper"]["id"] == owned.id and "in your library" in left_out["why"][0]


def test_similar_finds_an_item_by_key_or_title_and_says_which_is_ambiguous(pipeline):
    from recommender.errors import InputError
    from zotero_bridge.mcp import tools

    pipe, owned = pipeline
    by_key = tools.similar(pipe, tools.Query(), 3, item="K2")
    assert by_key["like"]["item"] == {"key": "K2", "title": "Seismic waves and earthquakes"}
    assert tools.similar(pipe, tools.Query(), 3, item="seismic waves AND earthquakes")["like"] == by_key["like"]
    assert owned.id not in {p["id"] for p in by_key["papers"]}  # what the library holds stays out
    with pytest.raises(InputError, match="more than one library item matches 'seismic waves'"):
        tools.similar(pipe, tools.Query(), 3, item="seismic waves")
    with pytest.raises(InputError, match="no library item has the key or title 'nothing like it'"):
        tools.similar(pipe, tools.Query(), 3, item="nothing like it")


def test_save_without_confirm_never_reaches_zotero(pipeline):
    from zotero_bridge.mcp import tools

    pipe, _ = pipeline
    pick = tools.recommend(pipe, tools.Query(), 3)["papers"][1]
    answer = tools.save(pipe, tools.Query(), pick["id"], confirm=False)
    assert answer["written"] is False and answer["paper"] == pick and pipe.saved == []


def test_keys_are_hidden_everywhere_in_an_answer():
    from zotero_bridge.mcp.server import HIDDEN, hide

    key = "zKEY1234secret"
    answer = {"message": f"refused {key}", "rows": [{"note": key}], key: 1}
    assert hide(answer, [key]) == {"message": f"refused {HIDDEN}", "rows": [{"note": HIDDEN}], HIDDEN: 1}
