"""The HTML report in a real headless Chromium: it renders, it fits a 1,400 px screen (every task
table column visible, nothing scrolling sideways), a one-tool report of 1,135 exposed tasks stays a
page or two tall, and `#sort=...` sorts the task tables (by basis: by exposure, not alphabetically).
The report `toollint check --confirm --ledger l --report r.html` writes on the fixture bank (as the
README shows it) is screenshot on two screen widths: each defect's sentence, its replay command and
the legend of the bases are on the page, and no column header breaks inside a word. The grader
audit's page (`toollint check --audit-graders --report r.html` on its fixture) renders and fits too.

Chromium: Debian's `chromium`, installed with apt-get when missing and possible; the tests skip with
a one-line reason otherwise. Each run gets a fresh profile directory and no background networking.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_report_cli import bank_report
from test_trace_html import DEFECT, task_tables

from toollint.config import resolve_settings
from toollint.trace.ledger import Defect, Ledger, LedgerRow, trace
from toollint.trace.readsites import BASES, CONFIDENCE
from toollint.trace.report_html import TASK_COLUMNS, render_report
from toollint.trace.tasks import tasks_from_config

BENCH = Path(__file__).parent / "fixtures" / "trace_bench"
SCREEN = (1400, 900)
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage")
# Reports the page's layout into its title, so --dump-dom carries it out of the browser.
MEASURE = """<script>
(function(){
  var doc = document.documentElement, cells = document.querySelectorAll('table.tasks th, table.overview th');
  var right = 0;
  cells.forEach(function(c){ right = Math.max(right, c.getBoundingClientRect().right); });
  document.title = JSON.stringify({width: doc.scrollWidth, height: doc.scrollHeight, viewport: innerWidth,
                                   right: right, cells: cells.length});
})();
</script></body>"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        try:
            subprocess.run(
                ["apt-get", "install", "-y", "chromium"], capture_output=True, timeout=300, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return shutil.which("chromium")
    return None


@pytest.fixture(scope="module")
def chromium() -> str:
    found = _chromium()
    if found is None:
        pytest.skip("no headless Chromium (apt-get install -y chromium) and it cannot be installed here")
    return found


def _run(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def fixture_ledger() -> Ledger:
    settings = resolve_settings([str(BENCH)], config_file=str(BENCH / "pyproject.toml"))
    return trace([DEFECT], tasks_from_config(settings.trace, BENCH))


def one_tool_ledger() -> Ledger:
    """The shape of tau2's `refuel_data`: one defect, 1,120 tasks reading one field at one site and 15
    reading a collection it appends to (built here: the real one is `tests/test_tau2_trace.py`)."""
    tool = "tau2.domains.telecom.tools:TelecomTools.refuel_data"
    defect = Defect(
        "refuel_data:pre.line_active",
        tool,
        "pre.line_active",
        ("agent_db.bills", "agent_db.lines[*].data_refueling_gb"),
        "src/tau2/domains/telecom/tools.py",
        608,
        code="TL201",
        collections=("agent_db.bills",),
        witness={"call": {"line_id": "L1002", "gb_amount": 2.0}, "result": {"message": "Successfully added"}},
    )

    def row(i: int, field: str, grader: str, site: str, basis: str) -> LedgerRow:
        task = (
            "telecom/[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_disabled_off|"
            f"{i}[PERSONA:Easy]"
        )
        return LedgerRow(defect.id, tool, defect.clause, field, task, "telecom", grader, site, basis,  # type: ignore[arg-type]
                         CONFIDENCE[basis])

    rows = [row(i, "agent_db.lines[*].data_refueling_gb", "TelecomTools.assert_data_refueling_amount",
                "src/tau2/domains/telecom/tools.py:731", "exact_field") for i in range(1120)]
    rows += [
        row(
            i,
            "agent_db.bills",
            "TelecomTools.assert_no_overdue_bill",
            "src/tau2/domains/telecom/tools.py:765",
            "collection_only",
        )
        for i in range(15)
    ]
    return Ledger([defect], rows, tasks_traced=2285, in_scope={defect.id: 2285})


def _png(data: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct byte values of the image data (a blank page has few)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def _layout(chromium: str, tmp_path: Path, html: str, script: str = MEASURE,
            width: int = SCREEN[0]) -> dict[str, Any]:
    """What `script` (run in the page at `width`) measured, as the JSON it put in the page's title."""
    page = tmp_path / "measured.html"
    page.write_text(html.replace("</body>", script), encoding="utf-8")
    proc = _run(chromium, tmp_path / "profile", "--dump-dom", f"--window-size={width},{SCREEN[1]}",
                page.as_uri())
    found = re.search(r"<title>(\{.*?\})</title>", proc.stdout)
    assert found is not None, proc.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"'))  # type: ignore[no-any-return]


@pytest.mark.parametrize("which", ["fixture", "one_tool"])
def test_report_renders_in_chromium(
    which: str, fixture_ledger: Ledger, chromium: str, tmp_path: Path
) -> None:
    ledger = fixture_ledger if which == "fixture" else one_tool_ledger()
    report = tmp_path / "report.html"
    report.write_text(render_report(ledger), encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = _run(
        chromium,
        tmp_path / "profile",
        f"--screenshot={shot}",
        f"--window-size={SCREEN[0]},{SCREEN[1]}",
        report.as_uri(),
    )
    assert shot.exists(), proc.stderr[-2000:]
    width, height, distinct = _png(shot.read_bytes())
    assert (width, height) == SCREEN
    assert distinct > 50  # text, badges and the flow drawing, not a blank page


@pytest.mark.parametrize("which", ["fixture", "one_tool"])
def test_tables_fit_the_screen(which: str, fixture_ledger: Ledger, chromium: str, tmp_path: Path) -> None:
    ledger = fixture_ledger if which == "fixture" else one_tool_ledger()
    html = render_report(ledger)
    if which == "one_tool":  # unfold the long task table: it must fit too
        html = html.replace("<details class=\"tasks\">", "<details class=\"tasks\" open>")
    layout = _layout(chromium, tmp_path, html)
    assert layout["viewport"] == SCREEN[0]
    assert layout["width"] <= SCREEN[0]  # nothing scrolls sideways
    assert (
        layout["cells"] >= len(TASK_COLUMNS) and layout["right"] <= SCREEN[0]
    )  # task and basis columns in view


def test_a_one_tool_report_is_a_page_or_two_tall(chromium: str, tmp_path: Path) -> None:
    layout = _layout(chromium, tmp_path, render_report(one_tool_ledger()))
    # 1,135 exposed tasks: two sections, their read sites and counts; the task lists folded
    assert layout["height"] <= 2 * SCREEN[1] + 400


@pytest.mark.parametrize(("fragment", "column", "reverse"), [
    ("#sort=task", 0, False), ("#sort=task-desc", 0, True), ("#sort=basis", 1, False),
    ("#sort=basis-desc", 1, True), ("#sort=read_site", 3, False)])
def test_task_tables_sort_in_chromium(fixture_ledger: Ledger, chromium: str, tmp_path: Path, fragment: str,
                                      column: int, reverse: bool) -> None:
    report = tmp_path / "report.html"
    report.write_text(render_report(fixture_ledger), encoding="utf-8")
    proc = _run(chromium, tmp_path / "profile", "--dump-dom", report.as_uri() + fragment)
    (table,) = task_tables(proc.stdout)
    values = [r[column] for r in table[1:]]
    assert len(values) == len(fixture_ledger.rows), proc.stderr[-2000:]
    if column == 1:  # by exposure: exact_field, whole_state_hash, collection_only, unresolved
        assert values == sorted(values, key=BASES.index, reverse=reverse)
        assert values != sorted(values, reverse=reverse)  # which is not the alphabetical order
    else:
        numeric = [[int(p) if p.isdigit() else p for p in re.split(r"(\d+)", v)] for v in values]
        assert numeric == sorted(numeric, reverse=reverse)  # type: ignore[type-var]
    if fragment != "#sort=basis":
        unsorted = task_tables(render_report(fixture_ledger))[0]
        assert [r[column] for r in unsorted[1:]] != values  # the page's script did the sorting


# What a reader of the CLI's report must see, measured in the page: the sentences, the replay commands
# and the legend rendered (not hidden, not off the side), and every column header's words each on one
# line (a word's text range has one box per line it spans).
MEASURE_WORDS = """<script>
(function(){
  function shown(e){
    var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.right <= innerWidth;
  }
  var broken = [], overflowing = [];
  document.querySelectorAll('th').forEach(function(th){
    if (th.scrollWidth > th.clientWidth + 1) overflowing.push(th.textContent);
    var walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node;
    while ((node = walk.nextNode())) {
      var re = /\\S+/g, m;
      while ((m = re.exec(node.data))) {
        var range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        var lines = {};
        Array.prototype.forEach.call(range.getClientRects(), function(r){ lines[Math.round(r.top)] = 1; });
        if (Object.keys(lines).length > 1) broken.push(m[0]);
      }
    }
  });
  var pick = function(sel){ return Array.prototype.filter.call(document.querySelectorAll(sel), shown)
                                 .map(function(e){ return e.textContent; }); };
  document.title = JSON.stringify({width: document.documentElement.scrollWidth, viewport: innerWidth,
    sentences: pick('p.sentence'), replays: pick('code.replay'),
    legend: pick('table.legend tbody td:first-child'),
    headers: document.querySelectorAll('th').length, broken: broken, overflowing: overflowing});
})();
</script></body>"""


@pytest.fixture(scope="module")
def cli_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    proc, project = bank_report(tmp_path_factory.mktemp("report-html-cli"))
    assert proc.returncode == 1, proc.stderr
    return project / "r.html"


@pytest.mark.parametrize("width", [SCREEN[0], 1024])
def test_the_cli_report_shows_sentences_replay_commands_and_the_legend(
    cli_report: Path, chromium: str, tmp_path: Path, width: int
) -> None:
    html = cli_report.read_text(encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = _run(chromium, tmp_path / "profile", f"--screenshot={shot}", f"--window-size={width},{SCREEN[1]}",
                cli_report.as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    assert _png(shot.read_bytes())[2] > 50  # the top of the page: the defects' sentences, not blank
    layout = _layout(chromium, tmp_path, html, MEASURE_WORDS, width)
    assert layout["viewport"] == width and layout["width"] <= width  # nothing scrolls sideways
    assert len(layout["sentences"]) == 7
    assert any("withdraw_unchecked took 100.0 from account A2's balance" in t for t in layout["sentences"])
    assert len(layout["replays"]) == 7 and all(t.startswith("toollint replay .toollint/witnesses/")
                                               for t in layout["replays"])
    assert layout["legend"] == list(BASES)
    assert layout["headers"] > 20 and layout["broken"] == [] and layout["overflowing"] == []


def test_the_grader_audit_section_renders_and_fits_the_screen(chromium: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The page `toollint check --audit-graders --report r.html` writes on the grader audit's fixture
    (as README.md shows the command): rendered, nothing scrolls sideways at either width, and the join
    sentence of its TL410 is on the page."""
    from profile_fixtures import registered
    from test_check_audit_graders import NOTICE, PROFILE, _check

    monkeypatch.chdir(tmp_path)
    with registered(monkeypatch, PROFILE):
        assert _check("--report", "r.html") == 1
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<h2>Grader audit</h2>" in html and html.count(NOTICE) == 2  # the TL410 join, the seen drop
    for width in (SCREEN[0], 900):
        layout = _layout(chromium, tmp_path, html, width=width)
        assert layout["width"] <= width  # the long grader paths and replay commands wrap
    shot = tmp_path / "shot.png"
    proc = _run(chromium, tmp_path / "profile", f"--screenshot={shot}",
                f"--window-size={SCREEN[0]},{SCREEN[1]}", (tmp_path / "r.html").as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    assert _png(shot.read_bytes())[2] > 50  # the counts table and the findings, not a blank page
