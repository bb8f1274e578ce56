"""The docs site's navigation holds every page (issue 41): a docs/*.md page missing from mkdocs.yml's nav would be
built but unreachable, a nav entry without its page fails the strict build that .ci/run runs. And the README stays
a front door: short, with a reading list in its first screen."""

from __future__ import annotations

import re

from .conftest import REPO


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav names (`- Title: page.md` lines), in order; read without a YAML parser, which
    the test extra does not install."""
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:\n"):]
    return re.findall(r"^\s+- (?:[^:\n]+|\"[^\"\n]+\"): ([\w./-]+\.md)\s*$", nav, flags=re.MULTILINE)


def test_every_docs_page_is_in_the_nav_once_and_every_nav_page_exists():
    pages = nav_pages()
    on_disk = sorted(path.relative_to(REPO / "docs").as_posix() for path in (REPO / "docs").rglob("*.md"))
    assert sorted(pages) == on_disk, (set(on_disk) - set(pages), set(pages) - set(on_disk))
    assert len(pages) == len(set(pages))


def test_the_cli_reference_is_generated_from_the_click_commands():
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "::: mkdocs-click" in page and ":module: zotero_bridge.cli.main" in page and ":command: cli" in page


def test_the_readme_is_short_and_shows_a_reading_list_in_its_first_screen():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    picture = next(number for number, line in enumerate(lines) if line.startswith("!["))
    assert picture < 24 and "docs/reading-list.png" in lines[picture]
    assert (REPO / "docs" / "reading-list.png").stat().st_size > 10_000



def heading_anchor(title: str) -> str:
    """The anchor GitHub and MkDocs give a heading of words, spaces, backticks and brackets."""
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", title).strip().lower())


def test_the_readmes_links_into_the_docs_reach_a_page_and_its_heading():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", readme)
    assert len(links) >= 10
    for page, anchor in links:
        assert (REPO / page).is_file(), page
        if anchor:
            text = (REPO / page).read_text(encoding="utf-8")
            anchors = {heading_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
            assert anchor in anchors, (page, anchor)
