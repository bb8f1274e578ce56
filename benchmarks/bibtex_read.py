"""Benchmark BibTeX reading at real sizes: a 3,330-entry PMLR volume (`corpus fetch --from`) and a
10,000-entry library (`zotrec library`), each one whole `zotrec` process under /usr/bin/time -v.

Both files are made from the 49 real PMLR v267 entries in ../shared/fixtures/pmlr-v267 (abstracts
with HTML and LaTeX, TeX accents in names), repeated with a new key, title and OpenReview id each
time (and an index on every formula), so the text is real and every entry is distinct. The volume file is about as big as the
real icml25.bib (5.2 MB). Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python benchmarks/bibtex_read.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "fixtures" / "pmlr-v267" / "icml25-sample.bib"


def real_looking(count: int, *, header: bool) -> str:
    text = SAMPLE.read_text(encoding="utf-8")
    start = text.index("@InProceedings")
    entries = ["@InProceedings" + part for part in text[start:].split("@InProceedings")[1:]]
    out = [text[:start]] if header else []
    for number in range(count):
        entry = entries[number % len(entries)]
        entry = re.sub(r"^@InProceedings\{([^,]+),", lambda m, n=number: f"@InProceedings{{{m.group(1)}{n},", entry)
        entry = entry.replace("openreview = {", f"openreview = {{x{number}", 1)
        entry = entry.replace("title = {", f"title = {{Study {number} of ", 1)
        # every formula distinct too, as in a real volume (no renderer cache hit across entries)
        entry = re.sub(r"(?<!\\)\$([^$]+)\$", lambda m, n=number: f"${m.group(1)}_{{{n}}}$", entry)
        out.append(entry.rstrip() + "\n\n")
    return "".join(out)


def measure(command: list[str], env: dict) -> dict:
    done = subprocess.run(["/usr/bin/time", "-v", *command], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")

    def field(name: str) -> str:
        return re.search(rf"{re.escape(name)}: (.+)", done.stderr).group(1).strip()

    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return {"wall": field("Elapsed (wall clock) time (h:mm:ss or m:ss)"), "cpu_s": round(cpu, 2),
            "max_rss_mb": round(int(field("Maximum resident set size (kbytes)")) / 1024),
            "stdout": done.stdout.strip().splitlines()[-1][:200] if done.stdout.strip() else ""}


def main() -> None:
    zotrec = [sys.executable, "-m", "zotero_bridge"]
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        volume, library = Path(folder) / "icml25.bib", Path(folder) / "library.bib"
        volume.write_text(real_looking(3330, header=True), encoding="utf-8")
        library.write_text(real_looking(10_000, header=False), encoding="utf-8")
        env = {**os.environ, "ZOTREC_DATA_DIR": str(Path(folder) / "data"), "OPENBLAS_NUM_THREADS": "1"}
        results["corpus fetch, 3,330 entries"] = {
            "mb": round(volume.stat().st_size / 1e6, 1),
            **measure([*zotrec, "corpus", "fetch", "icml2025", "--from", str(volume)], env)}
        results["library, 10,000 entries"] = {
            "mb": round(library.stat().st_size / 1e6, 1),
            **measure([*zotrec, "library", "--library", str(library), "--format", "json"], env)}
    print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
