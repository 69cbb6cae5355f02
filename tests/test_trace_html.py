"""The HTML report: self-contained (nothing fetched from the network), and it renders and sorts in a
real headless Chromium (installed with apt-get when missing and possible; skipped cleanly otherwise)."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from toollint.config import resolve_settings
from toollint.trace.ledger import Defect, Ledger, trace
from toollint.trace.report_html import render_report
from toollint.trace.tasks import tasks_from_config

BENCH = Path(__file__).parent / "fixtures" / "trace_bench"
DEFECT = Defect("refuel_data:pre.line_active", "toolkit:TelecomTools.refuel_data", "pre.line_active",
                ("db.lines[*].data_balance",), "toolkit.py", 15, witness="witness/refuel_suspended.json")


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    settings = resolve_settings([str(BENCH)], config_file=str(BENCH / "pyproject.toml"))
    return trace([DEFECT], tasks_from_config(settings.trace, BENCH))


class _Ledger(HTMLParser):
    """The ledger table's rows, as text cells, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in_ledger = self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "ledger") in attrs:
            self._in_ledger = True
        elif self._in_ledger and tag == "tr":
            self.rows.append([])
        elif self._in_ledger and tag in ("td", "th"):
            self._in_cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_ledger = False
        elif tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_ledger and self._in_cell:
            self.rows[-1][-1] += data


def _ledger_rows(html: str) -> list[list[str]]:
    parser = _Ledger()
    parser.feed(html)
    return parser.rows[1:]  # without the header


def test_report_is_self_contained_and_complete(ledger: Ledger) -> None:
    html = render_report(ledger)
    # Nothing loaded from elsewhere: no src/href, no CSS url() or @import (the SVG namespace is a name).
    assert not re.search(r"\b(src|href)\s*=|url\(|@import", html)
    assert re.findall(r"https?://[^\"' ]+", html) == ["http://www.w3.org/2000/svg"]
    assert html.count("<svg") == 1 and "<script>" in html
    assert "witness/refuel_suspended.json" in html and "db.lines[*].data_balance" in html
    for basis in ("exact_field", "whole_state_hash", "collection_only", "unresolved"):
        assert basis in html
    assert len(_ledger_rows(html)) == len(ledger.rows) == 12
    assert "TL401 ungrounded oracle" in html and "broken_tasks.json:3" in html  # TL401s and problems shown


def test_a_witness_file_is_shown_with_its_probe(tmp_path: Path) -> None:
    witness = tmp_path / "w.json"
    witness.write_text(json.dumps({"verdict": "VIOLATES", "probe": {"call": {"amount": 0},
                                                                    "result": "<updated>"}}))
    html = render_report(Ledger([Defect("d", "t", "c", ("a.b",), witness=str(witness))]))
    assert str(witness) in html and "&quot;amount&quot;: 0" in html and "&lt;updated&gt;" in html
    assert "VIOLATES" not in html  # only the probe part of the file


def test_labels_are_escaped() -> None:
    evil = Defect("d<script>", "<b>tool</b>", "c&c", ("a.b",), witness="<img src=x>")
    html = render_report(Ledger([evil]))
    assert "<b>tool</b>" not in html and "<img" not in html and "&lt;b&gt;tool&lt;/b&gt;" in html


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        try:
            subprocess.run(["apt-get", "install", "-y", "chromium"], capture_output=True, timeout=900, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return shutil.which("chromium")
    return None


@pytest.fixture(scope="module")
def chromium() -> str:
    found = _chromium()
    if found is None:
        pytest.skip("no headless Chromium and it cannot be installed here")
    return found


def _run(chromium: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-dev-shm-usage", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def _png_size_and_colours(data: bytes) -> tuple[int, int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def test_report_renders_in_chromium(ledger: Ledger, chromium: str, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text(render_report(ledger), encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = _run(chromium, f"--screenshot={shot}", "--window-size=1200,900", report.as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    width, height, distinct = _png_size_and_colours(shot.read_bytes())
    assert (width, height) == (1200, 900)
    assert distinct > 50  # text, badges and the flow drawing, not a blank page


@pytest.mark.parametrize(("fragment", "column", "reverse"), [
    ("#sort=task", "task", False), ("#sort=task-desc", "task", True), ("#sort=basis", "basis", False)])
def test_ledger_sorts_in_chromium(ledger: Ledger, chromium: str, tmp_path: Path, fragment: str, column: str,
                                  reverse: bool) -> None:
    report = tmp_path / "report.html"
    report.write_text(render_report(ledger), encoding="utf-8")
    proc = _run(chromium, "--dump-dom", report.as_uri() + fragment)
    rows = _ledger_rows(proc.stdout)
    assert len(rows) == len(ledger.rows), proc.stderr[-2000:]
    index = ("defect", "tool", "clause", "field", "task", "suite", "grader", "read_site", "basis",
             "confidence").index(column)
    values = [r[index] for r in rows]
    assert values == sorted(values, reverse=reverse)
    unsorted = _ledger_rows(render_report(ledger))
    assert [r[index] for r in unsorted] != values  # the page's script did the sorting


def test_task_lines_say_how_each_basis_exposes_the_field() -> None:
    """A whole-state comparison does not 'read' the field; the report says what the grader does."""
    from toollint.trace.readsites import BASES
    from toollint.trace.report_html import _HOW

    assert set(_HOW) == set(BASES)
    assert _HOW["exact_field"] == "reads" and "whole state" in _HOW["whole_state_hash"]
