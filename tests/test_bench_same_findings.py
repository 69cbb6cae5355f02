"""`bench/same_findings.py`, the check behind issue 26's "the same findings as today": it passes when two
toollints agree and names each finding only one of them gives."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "same_findings.py"
TAU2_SRC = ROOT.parent / "shared" / "benchmarks" / "tau2-bench" / "src"

pytestmark = pytest.mark.skipif(not TAU2_SRC.is_dir(), reason=f"no tau2-bench snapshot at {TAU2_SRC}")


def run(before_python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--before-python", before_python, "--trees", "tau2"],
                          capture_output=True, text=True, check=False, timeout=300)


def test_the_same_toollint_on_both_sides_matches() -> None:
    proc = run(sys.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 of 1 trees give the same findings" in proc.stdout


def test_a_toollint_that_finds_something_else_is_named(tmp_path: Path) -> None:
    # A stand-in "older toollint": one finding the real one does not give, and a different summary line.
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\n"
        "echo '[{\"code\": \"TL101\", \"message\": \"made up\", \"filename\": \"x.py\", "
        "\"location\": {\"row\": 7, \"column\": 1}}]'\n"
        "echo 'Found 1 finding in 1 file. Checked 1 files, 1 tools (1 writers), 0 graders.' >&2\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    proc = run(str(fake))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "before only: x.py:7 TL101 made up" in proc.stdout
    assert "after only:" in proc.stdout  # tau2's real findings
    assert "summary before: Checked 1 files" in proc.stdout
    assert "0 of 1 trees give the same findings" in proc.stdout
