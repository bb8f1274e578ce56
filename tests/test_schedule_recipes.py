"""The scheduling recipes (docs/sources.md, once the README's) work as written (issue 38): one install path
(`pipx install .`, which makes ~/.local/bin/zotrec) in every recipe, a log for each, the systemd units pass
`systemd-analyze verify` (where it exists) once that install's `zotrec` is there, and the launchd plist parses with
plistlib."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "sources.md").read_text(encoding="utf-8")  # from the README
SECTION = PAGE[PAGE.index("**On a schedule**"):PAGE.index("\n## ", PAGE.index("**On a schedule**"))]
INSTALLED = ".local/bin/zotrec"  # where `pipx install .` (and `uv tool install .`) put it


def block(language: str) -> str:
    return re.search(rf"```{language}\n(.*?)```", SECTION, re.DOTALL).group(1)


def units() -> dict[str, str]:
    text = block("ini")
    parts = re.split(r"^# (zotrec-daily\.(?:service|timer))\n", text, flags=re.MULTILINE)
    return {name: body for name, body in zip(parts[1::2], parts[2::2])}


def test_every_recipe_uses_the_one_install_and_keeps_a_log():
    assert "pipx install ." in SECTION
    cron = next(line.strip() for line in SECTION.splitlines() if line.strip().startswith("15 7 * * *"))
    assert cron.split()[5] == f"$HOME/{INSTALLED}" and ">> $HOME/zotrec-daily.log 2>&1" in cron
    assert f"ExecStart=%h/{INSTALLED} " in units()["zotrec-daily.service"]
    plist = plistlib.loads(block("xml").encode())
    assert plist["ProgramArguments"][0] == f"/Users/me/{INSTALLED}"
    assert plist["StandardOutPath"] and plist["StandardErrorPath"]
    assert "~/.venv" not in SECTION and "$HOME/.venv" not in SECTION and "%h/.venv" not in SECTION


def test_the_plist_parses_and_runs_daily_every_morning():
    plist = plistlib.loads(block("xml").encode())
    assert plist["Label"] == "org.zotrec.daily" and plist["ProgramArguments"][1:3] == ["-q", "daily"]
    assert plist["StartCalendarInterval"] == {"Hour": 7, "Minute": 15}


def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    home = tmp_path / "home"
    program = home / INSTALLED  # what the README's install leaves
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    folder = tmp_path / "units"
    folder.mkdir()
    for name, body in units().items():
        (folder / name).write_text(body)
    result = subprocess.run(["systemd-analyze", "verify", *(str(folder / name) for name in sorted(units()))],
                            capture_output=True, text=True, env={**os.environ, "HOME": str(home)}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "not executable" not in result.stderr and "Unknown" not in result.stderr, result.stderr
