"""Malformed contracts (issue 17, item 11): each is one TL3xx finding on its own file, and the rest of
the run goes on. Before, a 100k-deep YAML file (RecursionError in PyYAML's composer) or a `"\\udcff"`
escape (UnicodeEncodeError when the predicate was compiled) ended the whole `--confirm` run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from toollint.contracts.loader import MAX_YAML_DEPTH, load_contracts, parse_contract

from toollint.cli import main

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
GOOD = (BENCH / "contracts" / "withdraw_unchecked.yaml").read_text()

MALFORMED = {
    "deep_flow_list.yaml": "tool: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "deep_flow_map.yaml": "tool: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n",
    "deep_block.yaml": "".join("  " * i + "a:\n" for i in range(3000)) + "  " * 3000 + "b: 1\n",
    "surrogate_predicate.yaml": GOOD.replace("status == 'active'\"", "status == '\\udcff'\""),
    "surrogate_key.yaml": GOOD + '"\\udcff": 1\n',
    "surrogate_quote.yaml": GOOD.replace("note: fixture", 'note: "\\ud800 fixture"', 1),
}


def write_malformed(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in MALFORMED.items():
        (directory / name).write_text(text, encoding="utf-8")


def test_the_fixture_contract_is_edited_as_the_cases_expect() -> None:
    assert "status == 'active'\"" in GOOD and "note: fixture" in GOOD
    assert MALFORMED["surrogate_predicate.yaml"] != GOOD and MALFORMED["surrogate_quote.yaml"] != GOOD


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_each_malformed_contract_is_one_tl300_naming_the_problem(tmp_path: Path, name: str) -> None:
    write_malformed(tmp_path)
    contract, errors = parse_contract(tmp_path / name)
    assert contract is None and len(errors) == 1 and errors[0].code == "TL300", errors
    message = errors[0].message
    if name.startswith("deep"):
        assert message == f"YAML nested more than {MAX_YAML_DEPTH} levels deep"
    else:
        assert "an unpaired surrogate escape, which is not a character" in message
        assert errors[0].line > 1 or name == "surrogate_key.yaml"


def test_the_good_contracts_beside_them_still_load(tmp_path: Path) -> None:
    write_malformed(tmp_path)
    (tmp_path / "good.yaml").write_text(GOOD)
    contracts, errors = load_contracts([tmp_path])
    assert [c.tool_name for c in contracts] == ["withdraw_unchecked"]
    assert sorted(Path(e.path).name for e in errors) == sorted(MALFORMED)


def test_a_confirm_run_reports_them_and_still_confirms_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "proj"
    shutil.copytree(BENCH, root)
    write_malformed(root / "contracts")
    (root / "pyproject.toml").write_text(
        "[tool.toollint]\ncontract-dirs = ['contracts']\ntool-decorators = ['tool']\n"
        "[tool.toollint.confirm]\nadapter = 'toolkit'\nfactory = 'bank:make_bank'\nsys-path = ['.']\n"
        "deadline = 5\n"
    )
    monkeypatch.chdir(root)
    code = main(["check", "--confirm", "--output-format", "json", "bank.py"])
    out = capsys.readouterr()
    assert code == 1, out.err
    findings = json.loads(out.out)
    assert sorted(Path(f["filename"]).name for f in findings if f["code"] == "TL300") == sorted(MALFORMED)
    assert {"TL201", "TL202"} <= {f["code"] for f in findings}  # the other tools were still checked


def test_contracts_check_reports_them_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_malformed(tmp_path)
    assert main(["contracts", "check", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert out.out.count("TL300") == len(MALFORMED) and "Traceback" not in out.err
