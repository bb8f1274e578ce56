"""`zotrec --help` (and each command's --help) must not import numpy, scikit-learn or model code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "sklearn", "implicit", "pyzotero", "torch", "onnxruntime", "tokenizers",
         "sentence_transformers")

PROBE = f"""
import json, sys
from click.testing import CliRunner
from zotero_bridge.cli.main import cli
outputs = [CliRunner().invoke(cli, ["--help"])]
outputs += [CliRunner().invoke(cli, [name, "--help"]) for name in sorted(cli.commands)]
print(json.dumps({{"codes": [o.exit_code for o in outputs], "commands": sorted(cli.commands),
                  "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def test_help_imports_no_heavy_module():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "reading-list" in report["commands"]
    assert set(report["codes"]) == {0}
    assert report["loaded"] == []


def test_the_features_option_is_documented_in_help():
    from click.testing import CliRunner

    from zotero_bridge.cli.main import cli

    result = CliRunner().invoke(cli, ["reading-list", "--help"])
    assert result.exit_code == 0
    assert "--features [tfidf|dense|hybrid]" in result.output
