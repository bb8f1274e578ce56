"""The screenshots in docs/ (serve-1280.png, serve-390.png): `zotrec serve` on the example library and the
bundled ICML 2025 list, in Debian's Chromium (tests/test_serve_browser.py's flags), after one More like this.
A throwaway data folder, so the ratings made here are nobody's.

    python docs/serve_screenshots.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_serve_browser import phone, start_chromium  # noqa: E402


def main() -> None:
    data = tempfile.mkdtemp(prefix="zotrec-serve-shots-")
    env = {**os.environ, "ZOTREC_DATA_DIR": data, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    server = subprocess.Popen([sys.executable, "-m", "zotero_bridge", "serve", "--library", "examples/library.bib",
                               "-n", "12"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)[0]
        for width, height in ((1280, 1000), (390, 1400)):
            profile = tempfile.mkdtemp(prefix="zotrec-chromium-")
            browser = start_chromium(profile, max(width, 600), height)
            try:
                if width < 600:
                    phone(browser, width, height)
                browser.get(url)
                time.sleep(1)
                if width == 1280:
                    browser.find_elements("css selector", "li.paper button.more")[1].click()
                    time.sleep(4)
                    browser.execute_script("window.scrollTo(0, 0)")
                browser.save_screenshot(str(ROOT / "docs" / f"serve-{width}.png"))
            finally:
                browser.quit()
                shutil.rmtree(profile, ignore_errors=True)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
