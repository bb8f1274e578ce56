"""The `zotrec mcp` server: five tools on stdio through the official MCP SDK (`mcp.server.mcpserver.MCPServer`),
each answering structured JSON (tools.py). stdout is the protocol: the SDK's stdio transport serves it from a
private copy and points fd 1 at stderr, where every log line goes. A failure a user can act on comes back as
a tool error with zotrec's one-line message; nothing said to the client holds a key (`hide`).

One call at a time: the SDK runs tools on worker threads, and a ranking, its caches and the memory are one
run's, as in the command line.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import Field

from zotero_bridge.mcp import tools
from zotero_bridge.mcp.tools import Pipeline, Query

log = logging.getLogger("zotrec")

TOOLS = ("recommend", "explain", "similar", "sources", "save")
INSTRUCTIONS = ("zotrec recommends papers from a corpus (ICML 2025, daily arXiv, …) for the user's Zotero library, "
                "with reasons. recommend gives the list; explain says why a paper was picked; similar finds papers "
                "like a text or a library item; sources suggests what to follow; save writes one paper into "
                "zotrec's Zotero collection, and only when called with confirm: true.")
HIDDEN = "[hidden]"

Libraries = Annotated[list[str] | None, Field(description="--library sources (a Zotero export, zotero:web, "
                                                          "zotero:local, zotero.sqlite); default: the server's")]
Corpus = Annotated[list[str] | None, Field(description="corpus files or stored corpora (icml2025, arxiv:cs.LG); "
                                                       "default: the server's")]
Texts = Annotated[list[str] | None, Field(description="a few words or a sentence each")]
Count = Annotated[int, Field(ge=1, le=200, description="how many papers")]
PaperId = Annotated[str, Field(min_length=1, max_length=300, description="a paper id as recommend gives it")]


def build_server(pipeline: Pipeline, describe_error: Callable[[BaseException], str], secrets: Iterable[str] = (),
                 version: str = "") -> Any:
    """The MCPServer with zotrec's tools on `pipeline`; `describe_error` turns an exception into zotrec's one
    line (cli/errors.py), `secrets` are the keys no answer may hold."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations

    server = MCPServer("zotrec", instructions=INSTRUCTIONS, version=version, log_level="WARNING")
    hidden = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
    lock = threading.Lock()
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def answer(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        with lock:
            try:
                return hide(work(), hidden)
            except Exception as error:  # noqa: BLE001 (sorted by type in describe_error, as at the CLI's edge)
                raise ToolError(hide(describe_error(error), hidden)) from None

    def query(library, corpus, prefer=None, avoid=None, include_seen=False) -> Query:
        return Query(tuple(library or ()), tuple(corpus or ()), tuple(prefer or ()), tuple(avoid or ()),
                     include_seen)

    @server.tool(annotations=reading)
    def recommend(library: Libraries = None, corpus: Corpus = None, n: Count = 10, prefer: Texts = None,
                  avoid: Texts = None, include_seen: bool = False) -> dict[str, Any]:
        """The user's reading list: the corpus ranked for their library, best first, with ids, titles, links,
        match and reasons (the rows of `zotrec reading-list --format json`). prefer/avoid steer it;
        include_seen shows again arXiv papers shown on earlier days."""
        return answer(lambda: tools.recommend(pipeline, query(library, corpus, prefer, avoid, include_seen), n))

    @server.tool(annotations=reading)
    def explain(paper: PaperId, library: Libraries = None, corpus: Corpus = None, prefer: Texts = None,
                avoid: Texts = None) -> dict[str, Any]:
        """Why zotrec picked a paper: its place in the whole ranking and the reasons (the library items it is
        like, interests, authors, preferences, what the user did with earlier picks)."""
        return answer(lambda: tools.explain(pipeline, query(library, corpus, prefer, avoid), paper))

    @server.tool(annotations=reading)
    def similar(text: Annotated[str | None, Field(max_length=4000, description="what to find papers like")] = None,
                item: Annotated[str | None, Field(max_length=500, description="a library item's key or title")] = None,
                library: Libraries = None, corpus: Corpus = None, n: Count = 10) -> dict[str, Any]:
        """Corpus papers like a text or like one item of the user's library (give one of the two); papers the
        library holds are never listed."""
        return answer(lambda: tools.similar(pipeline, query(library, corpus), n, text=text, item=item))

    @server.tool(annotations=reading)
    def sources(library: Libraries = None, n: Count = 20) -> dict[str, Any]:
        """What to follow: the journals, arXiv categories and bioRxiv/medRxiv subjects the user's library comes
        from, each a corpus option (for recommend's corpus, or `zotrec daily --corpus`) with how many items
        point there, the most first."""
        return answer(lambda: tools.sources(pipeline, query(library, None), n))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=True))
    def save(paper: PaperId, confirm: Annotated[bool, Field(description="true writes to Zotero; false (the "
                                                                        "default) only says what would be written")]
             = False, library: Libraries = None, corpus: Corpus = None,
             collection: Annotated[str | None, Field(max_length=500, description="the collection zotrec fills; "
                                                                                  "default: the server's")] = None
             ) -> dict[str, Any]:
        """Save one paper into zotrec's collection in Zotero (the item sync writes, with its reasons note; kept,
        so it is the user's). Writes only with confirm: true, once: saving it again writes nothing. Needs a
        library the server can write to (zotero:web or zotero:local)."""
        return answer(lambda: tools.save(pipeline, query(library, corpus), paper, confirm, collection))

    return server


def serve(server: Any) -> None:
    """Run until the client closes stdin."""
    log.info("zotrec mcp: tools %s on stdio (stdout is the protocol; logs go to stderr).", ", ".join(TOOLS))
    server.run("stdio")


def hide(value: Any, secrets: list[str]) -> Any:
    """`value` with every secret in its strings replaced (keys never reach the client, even inside a message)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, HIDDEN)
        return value
    if isinstance(value, dict):
        return {hide(key, secrets): hide(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [hide(item, secrets) for item in value]
    return value
