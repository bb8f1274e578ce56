"""The digest as a mail client shows it (issue 38), in headless Chromium (Debian's chromium and chromedriver,
driven by selenium; skipped without them): on a 390 px phone the first paper's title is in the first screen,
"where this comes from" below the list; with its inline styles stripped it still reads 1..N, one number a paper.
`ZOTREC_SCREENSHOTS=docs/digest` also saves the four screenshots (1280 and 390 px, with and without styles)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from recommender.items import Paper, Reason, Recommendation
from zotero_bridge.render.digest import digest_html
from zotero_bridge.render.html_page import ListContext

PHONE = (390, 844)


def recs(count: int = 8) -> list[Recommendation]:
    titles = ["Sharper regret bounds of order ln ln T for stochastic bandits with delayed, aggregated feedback",
              "Reward models from human preferences, revisited", "Normalizing flows as generative models of molecules",
              "Graph neural networks for molecule property prediction at scale"]
    return [Recommendation(paper=Paper(id=f"arxiv:2501.{n:05d}", title=titles[n % 4] + f" ({n})",
                                       authors=["Jane Doe", "Li Wei", "A. N. Other", "María José García"],
                                       url=f"https://arxiv.org/abs/2501.{n:05d}",
                                       metadata={"pdf_url": f"https://arxiv.org/pdf/2501.{n:05d}"}),
                           score=0.9 - n / 20, rank=3 * n + 3,  # ranks with gaps, as after seen papers left
                           reasons=[Reason(item_key="K", item_title="Bandit algorithms (Lattimore & Szepesvári)",
                                           similarity=0.61)])
            for n in range(count)]


def header():
    from zotero_bridge.render.digest import digest_header

    context = ListContext(library="/home/me/Zotero/zotero.sqlite", corpus="arxiv:cs.LG,stat.ML",
                          features="dense", model="content only (MiniLM)", seen_left_out=4,
                          interests=("bandits", "generative models"))
    return digest_header(context, seen_hint="each paper is shown once")


def unstyled(html: str) -> str:
    return re.sub(r'\sstyle="[^"]*"', "", html)


@pytest.fixture(scope="module")
def browser():
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


def show(browser, path: Path, width: int, height: int):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    browser.get(path.as_uri())
    return browser


def test_on_a_phone_the_first_title_is_in_the_first_screen(browser, tmp_path):
    page = tmp_path / "digest.html"
    page.write_text(digest_html(recs(), "Reading list · arxiv:cs.LG,stat.ML", header(), "2026-12-04"))
    show(browser, page, *PHONE)
    first = browser.execute_script("const r = document.querySelector('a').getBoundingClientRect();"
                                   "return [r.top, r.bottom, document.documentElement.scrollWidth];")
    assert first[1] < PHONE[1] / 2, first  # the whole first title within the top half of the first screen
    assert first[2] <= PHONE[0], "nothing wider than the phone"
    where = browser.execute_script("return [...document.querySelectorAll('p')].find(p => p.innerText.startsWith("
                                   "'Where this comes from')).getBoundingClientRect().top")
    last = browser.execute_script("const a = document.querySelectorAll('a[href*=\"abs\"]');"
                                  "return a[a.length - 1].getBoundingClientRect().top")
    assert where > last  # library, model and provenance below the list


@pytest.mark.parametrize("styled", [True, False])
def test_it_reads_one_to_n_with_styles_and_without(browser, tmp_path, styled):
    html = digest_html(recs(), "Reading list · arxiv:cs.LG", header(), "2026-12-04")
    page = tmp_path / "digest.html"
    page.write_text(html if styled else unstyled(html))
    text = show(browser, page, 1280, 900).execute_script("return document.body.innerText")
    numbered = [line for line in text.splitlines() if re.match(r"^\d+\.", line)]
    assert [int(line.split(".")[0]) for line in numbered] == list(range(1, 9))
    assert not any(re.match(r"^\d+\.\s*\d+\.", line) for line in numbered)  # never "1. 3"
    assert "/home/me" not in text and "zotero.sqlite" in text and "--include-seen" not in text


def test_the_screenshots(browser, tmp_path):
    folder = Path(os.environ.get("ZOTREC_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    html = digest_html(recs(), "Reading list · arxiv:cs.LG,stat.ML", header(), "2026-12-04")
    for styled in (True, False):
        page = tmp_path / f"digest-{styled}.html"
        page.write_text(html if styled else unstyled(html))
        for width, height in ((1280, 0), PHONE):  # the desktop's whole page; the phone's first screen
            name = folder / f"digest-{width}px{'' if styled else '-no-styles'}.png"
            if not height:
                height = show(browser, page, width, 900).execute_script("return document.body.scrollHeight") + 24
            show(browser, page, width, height).save_screenshot(str(name))
            assert name.stat().st_size > 5_000
