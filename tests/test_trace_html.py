"""The HTML report's structure: self-contained (nothing fetched from the network), one section per
tool and field (clauses exposing the same tasks share it), sections by exposure, probes folded, task
tables of four columns folded when long, labels escaped. How it looks in a real browser is
`tests/test_report_html.py`."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from toollint.config import resolve_settings
from toollint.trace.ledger import Defect, Ledger, LedgerRow, trace
from toollint.trace.readsites import BASES, CONFIDENCE
from toollint.trace.report_html import OPEN_TASK_ROWS, TASK_COLUMNS, render_report, sections
from toollint.trace.tasks import tasks_from_config

BENCH = Path(__file__).parent / "fixtures" / "trace_bench"
DEFECT = Defect("refuel_data:pre.line_active", "toolkit:TelecomTools.refuel_data", "pre.line_active",
                ("db.lines[*].data_balance",), "toolkit.py", 15, witness="witness/refuel_suspended.json")


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    settings = resolve_settings([str(BENCH)], config_file=str(BENCH / "pyproject.toml"))
    return trace([DEFECT], tasks_from_config(settings.trace, BENCH))


class Tables(HTMLParser):
    """Every table's rows, as text cells, in document order, with each table's class."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._depth = 0
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append((dict(attrs).get("class") or "", []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th") and self.tables:
            self._in_cell = True
            self.tables[-1][1][-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell and self.tables:
            self.tables[-1][1][-1][-1] += data


def task_tables(html: str) -> list[list[list[str]]]:
    """The rows (header first) of every task table."""
    parser = Tables()
    parser.feed(html)
    return [rows for cls, rows in parser.tables if "tasks" in cls.split()]


def _rows(defect: Defect, tasks: list[tuple[str, str]], field: str) -> list[LedgerRow]:
    return [LedgerRow(defect.id, defect.tool, defect.clause, field, task, "banking", "UserTask.utility",
                      f"user_tasks.py:{10 + i}", basis, CONFIDENCE[basis])  # type: ignore[arg-type]
            for i, (task, basis) in enumerate(tasks)]


def test_report_is_self_contained_and_complete(ledger: Ledger) -> None:
    html = render_report(ledger)
    # Nothing loaded from elsewhere: no src/href but in-page anchors, no CSS url() or @import.
    assert not re.search(r"\bsrc\s*=|url\(|@import", html)
    anchors = {f"#field-{i}" for i in range(10)} | {f"#defect-{i}" for i in range(10)}
    assert set(re.findall(r"\bhref\s*=\s*\"([^\"]*)\"", html)) <= anchors
    assert re.findall(r"https?://[^\"' ]+", html) == ["http://www.w3.org/2000/svg"]
    assert html.count("<svg") == 1 and "<script>" in html
    assert "witness/refuel_suspended.json" in html and "db.lines[*].data_balance" in html
    for basis in BASES:
        assert basis in html
    (table,) = task_tables(html)
    assert table[0] == list(TASK_COLUMNS) and len(table) - 1 == len(ledger.rows) == 12
    assert "TL401 ungrounded oracle" in html and "broken_tasks.json:3" in html  # TL401s and problems shown


def test_rows_start_sorted_by_exposure_strongest_basis_first(ledger: Ledger) -> None:
    (table,) = task_tables(render_report(ledger))
    bases = [row[1] for row in table[1:]]
    assert bases == sorted(bases, key=BASES.index)
    assert bases[0] == "exact_field" and bases[-1] == "unresolved"


def test_clauses_exposing_the_same_tasks_through_one_field_share_a_section() -> None:
    tool = "bank:update_scheduled_transaction"
    amount, subject = "scheduled[*].amount", "scheduled[*].subject"
    tasks = [("banking/user_task_2", "exact_field"), ("banking/user_task_10", "whole_state_hash")]
    defects = [Defect(f"TL202:{c}", tool, c, (f,), code="TL202")
               for c, f in (("eff.amount_set", amount), ("arg.amount", amount), ("eff.subject_set", subject))]
    rows = [*_rows(defects[0], tasks, amount), *_rows(defects[1], tasks, amount),
            *_rows(defects[2], tasks[:1], subject)]
    ledger = Ledger(defects, rows, tasks_traced=16)
    found = sections(ledger)
    assert [(s.field, [d.clause for d in s.defects]) for s in found] == [
        (amount, ["eff.amount_set", "arg.amount"]), (subject, ["eff.subject_set"])]  # most exposed first
    html = render_report(ledger)
    assert html.count("<section") == 2 and html.count("<svg") == 2
    assert len(task_tables(html)) == 2


def test_fields_of_one_defect_get_a_section_each_by_exposure() -> None:
    defect = Defect("d", "t:refuel", "pre.line_active", ("lines[*].gb", "bills"), collections=("bills",))
    rows = [*_rows(defect, [("t1", "collection_only")], "bills"),
            *_rows(defect, [("t2", "exact_field"), ("t3", "exact_field")], "lines[*].gb")]
    found = sections(Ledger([defect], rows))
    assert [s.field for s in found] == ["lines[*].gb", "bills"]
    html = render_report(Ledger([defect], rows))
    assert "not a field of one" in html  # the collection's section says what is at risk


def test_probes_are_folded(tmp_path: Path) -> None:
    witness = tmp_path / "w.json"
    witness.write_text(json.dumps({"verdict": "VIOLATES", "probe": {"call": {"amount": 0},
                                                                    "result": "<updated>"}}))
    defect = Defect("d", "t", "c", ("a.b",), witness=str(witness))
    html = render_report(Ledger([defect], _rows(defect, [("t1", "exact_field")], "a.b")))
    assert str(witness) in html and "&quot;amount&quot;: 0" in html and "&lt;updated&gt;" in html
    assert "VIOLATES" not in html  # only the probe part of the file
    assert "<details><summary>probe</summary>" in html and "<details open" not in html


def test_long_task_tables_are_folded_short_ones_open() -> None:
    defect = Defect("d", "t", "c", ("a.b",))
    many = [(f"t{i}", "exact_field") for i in range(OPEN_TASK_ROWS + 1)]
    folded = render_report(Ledger([defect], _rows(defect, many, "a.b")))
    assert "<details class=\"tasks\"><summary>26 exposed task(s), by basis</summary><table" in folded
    short = render_report(Ledger([defect], _rows(defect, many[:OPEN_TASK_ROWS], "a.b")))
    assert "<details class=\"tasks\"" not in short and len(task_tables(short)[0]) == OPEN_TASK_ROWS + 1


def test_defects_with_no_exposed_task_are_listed_not_given_a_section() -> None:
    html = render_report(Ledger([Defect("quiet", "t", "c", ("a.b",))], tasks_traced=3))
    assert "<section" not in html and "<code>quiet</code>" in html and "No task is exposed." in html


def test_labels_are_escaped() -> None:
    evil = Defect("d<script>", "<b>tool</b>", "c&c", ("a.b",), witness="<img src=x>")
    html = render_report(Ledger([evil], _rows(evil, [("<i>t</i>", "exact_field")], "a.b")))
    assert "<b>tool</b>" not in html and "<img" not in html and "<i>t</i>" not in html
    assert "&lt;b&gt;tool&lt;/b&gt;" in html and "c&amp;c" in html


def test_task_lines_say_how_each_basis_exposes_the_field() -> None:
    """A whole-state comparison does not 'read' the field; the report says what the grader does."""
    from toollint.trace.report_html import _HOW

    assert set(_HOW) == set(BASES)
    assert _HOW["exact_field"] == "reads" and "whole state" in _HOW["whole_state_hash"]
