"""Derived oracles test their premise instead of assuming it (issue 23, item 5).

- TL105's round trip leaves out what an undo must not give back: an id counter the do names its
  records with, an append-only log; a count the do keeps and a list of references to the record it
  made stay demanded (tests/fixtures/derived_undo, both kinds side by side, names saying nothing).
- TL104's falsy value is sent as a legal input only when the benchmark's data, schema or code says it
  is (tests/fixtures/derived_bench: `limit` 0.0 is in accounts.json; `copies: int` and `email: str`
  have their annotation only): otherwise UNTESTABLE `legality_unknown`, in the text and the JSON.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from toollint.dynamic.restorable import unrestorable

from toollint.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
SHOP_CONFIG = """\
[tool.toollint]
tool-decorators = ["tool"]

[tool.toollint.confirm]
adapter = "toolkit"
factory = "shop:make_shop"
sys-path = ["."]
"""
BANK_CONFIG = """\
[tool.toollint.confirm]
adapter = "toolkit"
factory = "bank:make_bank"
sys-path = ["."]
"""


def _project(tmp_path: Path, fixture: str, config: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "bench"
    shutil.copytree(FIXTURES / fixture, project)
    (project / "pyproject.toml").write_text(config)
    monkeypatch.chdir(project)
    return project


def test_the_undo_oracle_demands_back_only_what_an_undo_restores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, "derived_undo", SHOP_CONFIG, monkeypatch)
    code = main(["check", "--confirm", "--output-format", "json", "shop.py"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    by_field = {f["properties"]["field"]: f["properties"] for f in json.loads(out) if f["code"] == "TL105"}
    assert sorted(by_field) == ["activity", "open_orders", "serial", "stock[*]"]
    # the two an undo gives back: confirmed by the round trip
    assert by_field["stock[*]"]["verdict"] == by_field["open_orders"]["verdict"] == "VIOLATES"
    # the two it must not: no round trip demands them, and the finding says why
    assert by_field["serial"]["verdict"] == by_field["activity"]["verdict"] == "UNCHECKED"
    assert "a monotonic id counter, which an undo does not give back" in by_field["serial"]["verdict_detail"]
    assert "an append-only log" in by_field["activity"]["verdict_detail"]
    derived = (Path(".toollint") / "derived").glob("*.yaml")
    text = "".join(p.read_text() for p in derived)
    assert "eff.undoes_book_order_stock" in text and "serial" not in text and "activity" not in text


SHOP = '''
class Shop:
    def book(self, customer, item):
        self.serial += 1
        order_id = f"O{self.serial}"
        self.orders[order_id] = {"item": item}
        self.count += 1
        self.recent.append(order_id)
        self.trail.append({"event": "booked"})
        return order_id

    def cancel(self, order_id):
        del self.orders[order_id]
'''


@pytest.mark.parametrize(
    "extra, leaf, shape",
    [
        ("", "serial", "counter"),  # incremented, names the order, lowered by no one
        ("", "count", None),  # incremented but names nothing: a count the undo should lower
        ("", "recent", None),  # appends the key of the record made: a reference, dropped with it
        ("", "trail", "log"),  # appends an event, removed by no one
        ("    def purge(self):\n        self.trail.clear()\n", "trail", None),  # someone removes from it
        ("    def rewind(self):\n        self.serial -= 1\n", "serial", None),  # someone lowers it
    ],
)
def test_what_an_undo_need_not_give_back_is_read_from_the_code(extra: str, leaf: str,
                                                               shape: str | None) -> None:
    tree = ast.parse(SHOP + extra)
    book = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "book")
    line = next(n for n, text in enumerate((SHOP + extra).splitlines(), 1)
                if f"self.{leaf} +=" in text or f"self.{leaf}.append" in text)  # the do's write
    found = unrestorable(tree, book, line, leaf)
    assert (found.shape if found else None) == shape


def test_the_snapshot_must_show_the_shape_too() -> None:
    tree = ast.parse(SHOP)
    book = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "book")
    found = unrestorable(tree, book, 4, "serial")
    assert found is not None and found.holds_on([100])
    assert not found.holds_on(["100"]) and not found.holds_on([]) and not found.holds_on([True])


def test_a_falsy_value_legal_by_its_type_alone_is_untestable_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, "derived_bench", BANK_CONFIG, monkeypatch)
    code = main(["check", "--confirm", "--confidence", "low", "bank.py"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    text = {line.split(": TL", 1)[0]: line for line in out.splitlines() if ": TL104 " in line}
    assert "VIOLATES: " in text["bank.py:137:12"]  # `limit`: 0.0 is in the benchmark's accounts.json
    copies = text["bank.py:178:12"]
    assert "UNTESTABLE: legality_unknown (0 is legal for copies: only its annotation `int` admits" in copies
    capsys.readouterr()
    main(["check", "--confirm", "--confidence", "low", "--output-format", "json", "bank.py"])
    findings = json.loads(capsys.readouterr().out)
    verdicts = {(f["location"]["row"], f["properties"].get("verdict"), f["properties"].get("verdict_reason"))
                for f in findings if f["code"] == "TL104"}
    assert verdicts == {(137, "VIOLATES", None), (156, "UNTESTABLE", "legality_unknown"),
                        (158, "UNTESTABLE", "legality_unknown"), (178, "UNTESTABLE", "legality_unknown")}
