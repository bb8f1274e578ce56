"""`zotrec serve` in a real browser: Debian's Chromium driven by Selenium through Debian's chromedriver (never a
download: the driver's path is given, so Selenium Manager never runs), against the fake Zotero Web API
(tests/zotero_server.py). Skipped, with the reason, where Chromium, chromedriver or selenium is missing
(`.ci/run` installs them: apt-get install chromium chromium-driver).

ZOTREC_SCREENSHOTS=DIR also writes the page at 1280 and 390 px there (docs/serve-1280.png, docs/serve-390.png
come from `docs/serve_screenshots.py`, on the ICML 2025 list)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from zotero_bridge.feedback.memory import Memory
from zotero_bridge.feedback.ratings import read_ratings

from .conftest import ZOTERO_USER_ID
from .test_serve import Running, session_for
from .test_sync import corpus_file, papers  # noqa: F401 (fixtures)

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage")


def _missing() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "needs the selenium package (pip install 'zotrec[test]')"
    for path, package in ((CHROMIUM, "chromium"), (DRIVER, "chromium-driver")):
        if not Path(path).is_file():
            return f"needs Debian's {package} ({path}; apt-get install chromium chromium-driver)"
    return ""


pytestmark = pytest.mark.skipif(bool(_missing()), reason=_missing() or "ready")


def start_chromium(profile: str, width: int = 1280, height: int = 900):
    """Chromium with the flags a closed network needs and a fresh profile; no Selenium Manager."""
    os.environ["SE_OFFLINE"] = "true"  # Selenium never looks for a driver or browser online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)


def phone(driver, width: int = 390, height: int = 844) -> None:
    """A phone's viewport (Chromium's device emulation: a window cannot be made narrower than ~500 px)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})


@pytest.fixture
def browser():
    profile = tempfile.mkdtemp(prefix="zotrec-chromium-")
    driver = start_chromium(profile)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def served(zotero_server, papers):
    running = Running(session_for(zotero_server, papers))
    yield running
    running.stop()


def open_page(browser, served):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served.guard.url)
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "li.paper.current"))
    return By


def shown_ids(browser) -> list[str]:
    return browser.execute_script("return Array.from(document.querySelectorAll('li.paper')).map(e => e.dataset.id)")


def wait_for(browser, condition, seconds: float = 30):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds).until(lambda b: condition())


def ratings() -> dict:
    with Memory() as memory:
        return {cid: r.rating for cid, r in read_ratings(memory, f"user:{ZOTERO_USER_ID}").items()}


def csp_violations(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser")
            if "Content Security Policy" in entry["message"] or entry["level"] == "SEVERE"]


def test_the_page_loads_with_its_script_and_no_csp_violation(browser, served):
    By = open_page(browser, served)
    assert browser.title == "zotrec · reading list"
    assert browser.get_cookie("zotrec_serve")["httpOnly"] and "token=" not in browser.current_url
    assert len(shown_ids(browser)) == 10
    card = browser.find_element(By.CSS_SELECTOR, "li.paper")
    assert card.find_element(By.TAG_NAME, "h2").text and "match" in card.text
    details = card.find_element(By.TAG_NAME, "details")
    assert details.get_attribute("open") is None  # the abstract is folded
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script can read the token
    assert csp_violations(browser) == []
    if folder := os.environ.get("ZOTREC_SCREENSHOTS"):
        browser.save_screenshot(str(Path(folder) / "serve-test-1280.png"))


def test_save_by_double_click_writes_one_item_with_its_note(browser, served, zotero_server):
    from selenium.webdriver.common.action_chains import ActionChains

    By = open_page(browser, served)
    first = shown_ids(browser)[0]
    button = browser.find_element(By.CSS_SELECTOR, "li.paper button.save")
    ActionChains(browser).double_click(button).perform()
    wait_for(browser, lambda: first not in shown_ids(browser))
    assert "Saved" in browser.find_element(By.ID, "said").text
    library = zotero_server.library("user", ZOTERO_USER_ID)
    made = [d for d in library.items.values() if f"zotrec: {first} " in (d.get("extra") or "")]
    assert len(made) == 1 and made[0]["collections"]
    notes = [d for d in library.items.values() if d.get("parentItem") == made[0]["key"]]
    assert len(notes) == 1 and "Recommended by zotrec" in notes[0]["note"]
    assert ratings() == {first: "saved"} and len(shown_ids(browser)) == 10  # refilled


def test_not_for_me_removes_the_paper_and_records_a_dismissal(browser, served, zotero_server):
    By = open_page(browser, served)
    before = shown_ids(browser)
    writes = len(zotero_server.writes())
    browser.find_elements(By.CSS_SELECTOR, "li.paper button.not")[2].click()
    wait_for(browser, lambda: before[2] not in shown_ids(browser))
    assert ratings() == {before[2]: "not"} and len(zotero_server.writes()) == writes  # no Zotero write
    browser.refresh()
    wait_for(browser, lambda: len(shown_ids(browser)) == 10)
    assert before[2] not in shown_ids(browser)


def test_keys_move_and_act(browser, served, zotero_server):
    from selenium.webdriver.common.keys import Keys

    By = open_page(browser, served)
    body = browser.find_element(By.TAG_NAME, "body")
    current = lambda: browser.execute_script(  # noqa: E731
        "return [...document.querySelectorAll('li.paper')].findIndex(e => e.classList.contains('current'))")
    assert current() == 0
    body.send_keys("j")
    body.send_keys("j")
    assert current() == 2
    body.send_keys("k")
    assert current() == 1
    before = shown_ids(browser)
    browser.switch_to.active_element.send_keys("x")
    wait_for(browser, lambda: before[1] not in shown_ids(browser))
    assert current() == 1  # the cursor stays in place on the refilled list
    after = shown_ids(browser)
    browser.switch_to.active_element.send_keys("l")
    wait_for(browser, lambda: after[1] not in shown_ids(browser))
    assert ratings() == {before[1]: "not", after[1]: "later"}
    browser.switch_to.active_element.send_keys(Keys.CONTROL, "s")  # a browser shortcut is not a click
    assert ratings() == {before[1]: "not", after[1]: "later"}
    third = shown_ids(browser)
    browser.switch_to.active_element.send_keys("m")
    wait_for(browser, lambda: third[1] not in shown_ids(browser))
    fourth = shown_ids(browser)
    browser.switch_to.active_element.send_keys("s")
    wait_for(browser, lambda: fourth[1] not in shown_ids(browser))
    assert ratings() == {before[1]: "not", after[1]: "later", third[1]: "more", fourth[1]: "saved"}


def test_more_like_this_moves_similar_papers_up_on_the_next_list(browser, served):
    By = open_page(browser, served)
    session = served.server.session
    whole_before = [rec.paper.id for rec in session.ranked()]
    liked = shown_ids(browser)[4]
    recommender = session.setup.built.recommender
    index = {paper.id: i for i, paper in enumerate(recommender.corpus)}
    rows = recommender.corpus_rows
    similarity = np.asarray((rows @ rows[index[liked]].T).todense()).ravel()
    nearest = [recommender.corpus[i].id for i in np.argsort(-similarity)
               if recommender.corpus[i].id in whole_before and recommender.corpus[i].id != liked][:5]
    browser.find_elements(By.CSS_SELECTOR, "li.paper button.more")[4].click()
    wait_for(browser, lambda: liked not in shown_ids(browser))
    whole_after = [rec.paper.id for rec in session.ranked()]
    moved = [whole_before.index(cid) - whole_after.index(cid) for cid in nearest]
    assert sum(moved) > len(nearest) and ratings() == {liked: "more"}
    page = browser.find_element(By.ID, "papers").text
    assert "which you asked more of" in page.lower()


def test_phone_width_fits_without_sideways_scrolling(browser, served):
    phone(browser)
    By = open_page(browser, served)
    width = browser.execute_script("return document.documentElement.clientWidth")
    assert width == 390 and browser.execute_script("return window.matchMedia('(max-width: 30rem)').matches")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    buttons = browser.find_elements(By.CSS_SELECTOR, "li.paper")[0].find_elements(By.CSS_SELECTOR, "button.act")
    for button in buttons:
        box = button.rect
        assert box["x"] >= 0 and box["x"] + box["width"] <= width and box["height"] >= 36  # a thumb's target
    if folder := os.environ.get("ZOTREC_SCREENSHOTS"):
        browser.save_screenshot(str(Path(folder) / "serve-test-390.png"))


def test_a_page_elsewhere_cannot_click_for_the_user(browser, served, zotero_server):
    """Another site open in the same browser posts to /act (a form and a fetch, with a guessed CSRF value): the
    SameSite cookie stays home, the CSRF check refuses, nothing is rated and Zotero is not written."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    open_page(browser, served)
    target = shown_ids(browser)[0]
    writes = len(zotero_server.writes())
    attack = (f'<!doctype html><form id="f" method="post" action="{served.guard.origin}/act">'
              f'<input name="id" value="{target}"><input name="action" value="save">'
              '<input name="csrf" value="guessed"></form><script>'
              f'fetch("{served.guard.origin}/act", {{method: "POST", mode: "no-cors", credentials: "include", '
              f'body: new URLSearchParams({{id: "{target}", action: "not", csrf: "guessed"}})}});'
              'setTimeout(function () { document.getElementById("f").submit(); }, 300);</script>')

    class Attacker(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = attack.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    evil = ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://localhost:{evil.server_address[1]}/")  # another origin (another port, another name)
        wait_for(browser, lambda: "/act" in browser.current_url)  # the form went; its answer is the refusal
        assert "CSRF" in browser.page_source or "token" in browser.page_source
    finally:
        evil.shutdown()
        evil.server_close()
    assert ratings() == {} and len(zotero_server.writes()) == writes


def test_a_refused_click_is_said_on_the_page(browser, served):
    from dataclasses import replace

    By = open_page(browser, served)
    served.server.guard = replace(served.guard, csrf="another")  # as if the page outlived its server's CSRF token
    first = shown_ids(browser)[0]
    browser.find_element(By.CSS_SELECTOR, "li.paper button.not").click()
    wait_for(browser, lambda: "CSRF" in browser.find_element(By.ID, "said").text)
    assert shown_ids(browser)[0] == first and ratings() == {}
