"""A file name that is not UTF-8 (issue 17, item 10): carried as surrogate-escaped text, shown as
`\\xNN` escapes, percent-encoded in SARIF URIs, kept exactly in baselines; never a
UnicodeEncodeError, an exit 2 under --exit-zero or an empty SARIF file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_sarif import assert_valid_sarif

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"
NAME = os.fsdecode(b"caf\xe9_tools.py")  # latin-1 bytes: not UTF-8
SHOWN = "caf\\xe9_tools.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    try:
        shutil.copy(FIXTURE, tmp_path / NAME)
    except (OSError, UnicodeEncodeError):  # pragma: no cover - a file system that refuses such names
        pytest.skip("this file system does not take non-UTF-8 file names")
    return tmp_path


def toollint(cwd: Path, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", *args], cwd=cwd, capture_output=True,
                          check=False, timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    # Both streams must be valid UTF-8: no undecodable byte is passed through.
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


@pytest.mark.parametrize("output_format", ["concise", "full", "json", "sarif", "github", "gitlab", "junit"])
def test_every_format_renders_the_name_safely(project: Path, output_format: str) -> None:
    code, out, err = toollint(project, "--exit-zero", "--output-format", output_format, ".")
    assert code == 0, err
    assert "Traceback" not in err and "UnicodeEncodeError" not in err
    if output_format in ("concise", "full", "github"):
        assert out.count(SHOWN) >= 6
    elif output_format == "json":
        assert {f["filename"] for f in json.loads(out)} == {SHOWN}
    elif output_format == "gitlab":
        assert {i["location"]["path"] for i in json.loads(out)} == {SHOWN}
    elif output_format == "junit":
        assert {c.get("classname") for c in ET.fromstring(out).iter("testcase")} == {SHOWN}
    else:
        log = json.loads(out)
        assert_valid_sarif(log)
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]
        }
        assert uris == {"caf%E9_tools.py"}  # the file's own bytes, percent-encoded


def test_sarif_file_is_whole_and_exit_zero_holds(project: Path) -> None:
    code, _, err = toollint(project, "--exit-zero", "--sarif-output", "out.sarif", ".")
    assert code == 0, err
    log = json.loads((project / "out.sarif").read_text(encoding="utf-8"))
    assert len(log["runs"][0]["results"]) == 6


def test_baselines_keep_the_name_exactly(project: Path) -> None:
    assert toollint(project, "--write-baseline", "baseline.json", ".")[0] == 0
    text = (project / "baseline.json").read_bytes().decode("utf-8")  # valid UTF-8 JSON
    assert {e["path"] for e in json.loads(text)["findings"]} == {NAME}  # reads back as the same name
    code, out, err = toollint(project, "--baseline", "baseline.json", ".")
    assert (code, out) == (0, "") and "stale" not in err
    (project / NAME).write_text(
        FIXTURE.read_text(encoding="utf-8").replace("    if amount:", "    if amount and t:")
    )
    code, out, err = toollint(project, "--baseline", "baseline.json", ".")
    assert (
        code == 1 and out.count(SHOWN) == 1 and "stale" in err
    )  # the changed finding is new, the old one stale


def test_fingerprints_of_such_names_are_stable() -> None:
    from toollint.fingerprint import toollint_fingerprints
    from toollint.model import Finding

    finding = Finding("TL104", "m", NAME, 1)
    assert toollint_fingerprints([finding]) == toollint_fingerprints([Finding("TL104", "m", NAME, 1)])
    assert toollint_fingerprints([finding]) != toollint_fingerprints(
        [Finding("TL104", "m", "caf_tools.py", 1)]
    )


@pytest.mark.parametrize("target, shown", [
    ("../other/tools.py", "../other/tools.py"),  # outside the current folder: as typed, as flake8 prints it
    ("../other/./tools.py", "../other/tools.py"),  # normalised
    ("sub/../here.py", "here.py"),  # below it: relative to it
    ("ABSOLUTE", "ABSOLUTE"),  # an absolute path stays absolute
])
def test_a_file_is_shown_relative_to_the_current_folder_or_as_typed(
    tmp_path: Path, target: str, shown: str
) -> None:
    (tmp_path / "work" / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    for place in (tmp_path / "other" / "tools.py", tmp_path / "work" / "here.py"):
        shutil.copy(FIXTURE, place)
    absolute = str(tmp_path / "other" / "tools.py")
    code, out, err = toollint(tmp_path / "work", "--isolated", "--output-format", "json",
                              target.replace("ABSOLUTE", absolute))
    assert code == 1, err
    assert {f["filename"] for f in json.loads(out)} == {shown.replace("ABSOLUTE", absolute)}
