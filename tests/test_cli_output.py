"""`-o PATH` that is not a regular file (a FIFO, /dev/null) is written in place, never renamed over."""

from __future__ import annotations

import os
import stat
import threading

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_output_to_a_fifo_keeps_the_fifo(tmp_path):
    library = tmp_path / "library.jsonl"
    library.write_text('{"key": "A", "title": "Normalizing flows with heavy tails"}\n')
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(library), "--features", "tfidf",
                                      "-n", "2", "--format", "csv", "-o", str(fifo)])
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].startswith("rank,id,title")
