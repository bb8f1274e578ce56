"""How fast `zotrec serve` answers, as a whole process: the address printed after start, the page, and a
click with its refilled list (Not for me, More like this, Later, repeated), on examples/library.bib against
the default corpus (the bundled ICML 2025 list, dense) with warm caches; then the server's CPU seconds and
peak RSS after Ctrl-C. A throwaway data folder, so the ratings are nobody's.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/serve_clicks.py [ROUNDS]
"""

from __future__ import annotations

import http.client
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]


def main(rounds: int = 3) -> None:
    data = tempfile.mkdtemp(prefix="zotrec-serve-bench-")
    env = {**os.environ, "ZOTREC_DATA_DIR": data, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "zotero_bridge", "serve", "--library", "examples/library.bib"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        found = re.search(r"127\.0\.0\.1:(\d+)/\?token=(\S+)", server.stdout.readline())
        ready = time.perf_counter() - started
        connection = http.client.HTTPConnection("127.0.0.1", int(found[1]), timeout=300)
        cookie = {"Cookie": f"zotrec_serve={found[2]}"}
        pages, clicks = [], []
        for _ in range(rounds):
            began = time.perf_counter()
            connection.request("GET", "/", headers=cookie)
            page = connection.getresponse().read().decode()
            pages.append(time.perf_counter() - began)
        csrf = re.search(r'name="csrf" content="([^"]+)"', page)[1]
        for action in ("not", "more", "later") * rounds:
            paper = re.findall(r'data-id="([^"]+)"', page)[0]
            began = time.perf_counter()
            connection.request("POST", "/act", body=urlencode({"csrf": csrf, "id": paper, "action": action}),
                               headers={**cookie, "Accept": "application/json",
                                        "Content-Type": "application/x-www-form-urlencoded"})
            answer = connection.getresponse().read().decode()
            clicks.append(time.perf_counter() - began)
            page = json.loads(answer)["list"]
        server.send_signal(signal.SIGINT)
        server.wait(60)
    finally:
        if server.poll() is None:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"address printed after {ready:.1f} s wall; page median {statistics.median(pages):.2f} s; click with the "
          f"refilled list median {statistics.median(clicks):.2f} s, slowest {max(clicks):.2f} s ({len(clicks)} clicks)")
    print(f"server process: {usage.ru_utime + usage.ru_stime:.1f} CPU s, peak RSS {usage.ru_maxrss / 1024:.0f} MiB; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
