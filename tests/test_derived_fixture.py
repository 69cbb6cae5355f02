"""Derived oracles end to end on a benchmark with no contract at all (tests/fixtures/derived_bench):
every finding gets the verdict its line's annotation says, the derived contracts are written,
load, pass `contracts check` and re-confirm what they confirmed; witnesses replay; derived rows
are counted apart from authored ones."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest
from toollint.contracts.loader import load_contracts
from toollint.contracts.validator import ValidationOptions, validate
from toollint.dynamic.confirm import confirm, summary_lines
from toollint.dynamic.replay import replay
from toollint.rules.tl102_commented_guard import guard_evidence

from toollint.engine import lint_source
from toollint.model import Finding
from toollint.settings import Settings

BENCH = Path(__file__).parent / "fixtures" / "derived_bench"
# Each annotation `# expect: TL10x -> TL20y` / `# expect: TL10x, refuted` / `# expect: TL10x, untestable`
# on a line of the fixture.
EXPECT = re.compile(r"# expect: (TL1\d\d)(?: -> (TL2\d\d)|, (refuted|untestable))?")


def settings(bench: Path) -> Settings:
    return Settings(confirm={"adapter": "toolkit", "factory": "bank:make_bank", "sys_path": [str(bench)],
                             "deadline": 10})


class Fixture:
    def __init__(self, bench: Path, work: Path) -> None:
        self.bench, self.work = bench, work
        source = (bench / "bank.py").read_text()
        self.lines = source.splitlines()
        # every finding gets a derived oracle, those whose premise rests on a type alone too
        self.findings = lint_source(source, str(bench / "bank.py"), Settings(confidence="low")).reported
        self.found, self.run = confirm(self.findings, settings(bench), linted=[str(bench / "bank.py")],
                                       witness_dir=work / "witnesses")

    def finding(self, code: str, tool: str) -> Finding:
        return next(f for f in self.findings if f.code == code and f.tool == f"Bank.{tool}")


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    work = tmp_path_factory.mktemp("derived")
    bench = work / "bench"
    shutil.copytree(BENCH, bench)  # the reset-leak tool's module state must not outlive this test
    return Fixture(bench, work)


def expected(lines: list[str]) -> dict[int, tuple[str, str]]:
    """Line -> (static code, verdict) from the annotations, for lines a finding is reported on."""
    out = {}
    for n, text in enumerate(lines, 1):
        m = EXPECT.search(text)
        if m is None:
            continue
        code, confirmed, other = m.groups()
        if confirmed or other:
            out[n] = (code, "VIOLATES" if confirmed else "CONFORMS" if other == "refuted" else "UNTESTABLE")
    return out


def test_every_annotated_finding_gets_its_verdict(fixture: Fixture) -> None:
    want = expected(fixture.lines)
    got: dict[int, tuple[str, str]] = {}
    for f in fixture.findings:  # each annotation sits on the line its finding is reported on
        got[f.line] = (f.code, str(f.properties.get("verdict")))
    assert got == want and len(want) == 10
    for f in fixture.findings:
        assert f.properties["verdict_oracle"] == "derived"


def test_each_confirmed_violation_has_its_class_and_cites_the_finding(fixture: Fixture) -> None:
    table = sorted(
        (f.tool, f.code, f.properties["clause"]) for f in fixture.found if f.code.startswith("TL2")
    )
    assert table == [
        ("print_statements", "TL205", "reset"),
        ("release_funds", "TL203", "eff.undoes_hold_funds_balance"),
        ("rename", "TL202", "arg.reason"),
        ("set_limit", "TL202", "arg.limit"),
        ("set_limit", "TL202", "eff.limit_written"),
        ("top_up", "TL201", "pre.commented_guard_71"),
    ]
    # an ignored-argument clause's TL202 names its argument, typed (the grader audit joins on it)
    assert sorted((f.tool, f.properties.get("argument", "")) for f in fixture.found if f.code == "TL202") \
        == [("rename", "reason"), ("set_limit", ""), ("set_limit", "limit")]
    top_up = next(f for f in fixture.found if f.tool == "top_up")
    assert top_up.properties["oracle"] == "derived" and top_up.properties["tier"] == "derived"
    assert top_up.properties["derived_from"] == {"code": "TL102", "line": 71,
                                                 "about": "if account.status != 'active':"}
    assert "(where pre.accounts['A2'].status='frozen')" in top_up.message


def test_refutations_say_why(fixture: Fixture) -> None:
    withdraw = next(r for r in fixture.run.reports if r.tool == "withdraw")
    assert "refused by the guard's own error" in withdraw.rows[0].detail
    # close_ticket keeps the closed ticket listed: --confirm used to refute TL105 there ("soft delete");
    # the static rule now knows a closing cancel's history is no obligation, so nothing is flagged
    assert not any(r.tool == "close_ticket" for r in fixture.run.reports)



def test_a_falsy_value_only_its_type_calls_legal_is_not_sent_as_legal(fixture: Fixture) -> None:
    """TL104's premise that the dropped value is legal: from the benchmark's data (set_limit: A3's limit
    0.0 in accounts.json) the oracle tests it; from an annotation alone (`copies: int`, `email: str`)
    it is UNTESTABLE legality_unknown, saying so, and no falsy value is sent as a legal one."""
    limit = fixture.finding("TL104", "set_limit")
    assert limit.properties["verdict"] == "VIOLATES"
    for tool, param in (("print_statements", "copies"), ("update_contact", "email"),
                        ("update_contact", "nickname")):
        f = next(f for f in fixture.findings if f.code == "TL104" and f.tool == f"Bank.{tool}"
                 and f.evidence is not None and f.evidence.parameter == param)
        assert f.properties["verdict"] == "UNTESTABLE"
        assert f.properties["verdict_reason"] == "legality_unknown"
        assert f.properties["verdict_detail"].startswith("legality_unknown (")
        assert "only its annotation" in f.properties["verdict_detail"]
        report = next(r for r in fixture.run.reports if r.tool == tool)
        sent = [r.probe.args.get(param) for r in report.runs if r.probe.varied == param]
        assert sent and all(sent), sent  # every value varied was a truthy one


def test_derived_rows_are_counted_apart(fixture: Fixture) -> None:
    assert fixture.run.counts(derived=False) == {"CONFORMS": 0, "VIOLATES": 0, "UNTESTABLE": 0, "FLAKY": 0}
    derived = fixture.run.counts(derived=True)
    assert derived == fixture.run.counts() and derived["VIOLATES"] == 5
    lines = summary_lines(fixture.run)
    assert lines[0].startswith(
        "confirm: derived oracles: 7 tool(s): 5 VIOLATES, 0 FLAKY, 2 CONFORMS, 0 UNTESTABLE"
    )
    assert not any(line.startswith("confirm: 7 tool(s)") for line in lines)


def test_the_derived_contracts_load_check_clean_and_are_derived(fixture: Fixture) -> None:
    directory = fixture.work / "derived"
    contracts, errors = load_contracts([directory])
    assert errors == []
    assert sorted(c.tool_name for c in contracts) == [
        "print_statements", "release_funds", "rename", "set_limit", "top_up", "update_contact",
        "withdraw"]
    assert all(c.derived for c in contracts)
    assert validate([directory], Settings(), ValidationOptions(roots=[fixture.bench])) == []
    top_up = next(c for c in contracts if c.tool_name == "top_up")
    pre = top_up.clause("pre.commented_guard_71")
    assert (
        pre is not None
        and pre.predicate_source == "get(pre.accounts, args.account_id, None).status == 'active'"
    )
    assert pre.on_violation is not None and pre.on_violation.message == "Account must be active to top up"


def test_a_kept_derived_contract_confirms_the_same_as_an_authored_one(
    fixture: Fixture, tmp_path: Path
) -> None:
    """`contracts draft --from-findings` and `--confirm` write the same files: kept in contract-dirs,
    they are checked as contracts (no new derivation) and still counted as derived."""
    kept = tmp_path / "contracts"
    shutil.copytree(fixture.work / "derived", kept)
    s = settings(fixture.bench)
    s.contract_dirs = [str(kept)]
    found, run = confirm(fixture.findings, s, linted=[str(fixture.bench / "bank.py")],
                         witness_dir=tmp_path / "w", bundled=False)
    assert not run.derived  # every flagged tool now has a contract
    assert all(r.derived for r in run.reports)
    codes = sorted((f.tool, f.properties["clause"]) for f in found if f.code.startswith("TL2"))
    assert codes == sorted(
        (f.tool, f.properties["clause"]) for f in fixture.found if f.code.startswith("TL2")
    )


@pytest.mark.parametrize("tool", ["top_up", "release_funds"])
def test_derived_witnesses_replay(fixture: Fixture, tool: str) -> None:
    witness = next(Path(f.properties["witness"]) for f in fixture.found if f.tool == tool)
    data = json.loads(witness.read_text())
    assert data["clause"]["provenance"]["tier"] == "derived"
    assert data["clause"]["provenance"]["finding"] == ("TL102" if tool == "top_up" else "TL105")
    if tool == "release_funds":
        assert data["probe"]["before"][0]["tool"] == "hold_funds"
    outcome = replay(witness, repeat=1, settings=settings(fixture.bench))  # the project's own host
    assert outcome.code == 1, outcome.sentence


def test_a_finding_with_no_oracle_says_why(tmp_path: Path) -> None:
    source = (
        "def tool(fn):\n    return fn\n\n"
        "class Shop:\n"
        "    def __init__(self):\n        self.items = {}\n\n"
        "    @tool\n"
        "    def restock(self, item_id: str, count: int) -> str:\n"
        "        # if self.items.get(item_id) is None: print('no such item')\n"
        "        self.items[item_id] = count\n"
        "        return 'restocked'\n"
    )
    findings = [Finding("TL102", "commented guard", str(tmp_path / "shop.py"), 10, tool="Shop.restock",
                        evidence=guard_evidence(ast.parse("if self.items.get(item_id) is None:\n"
                                                          "    print('no such item')").body[0]))]
    (tmp_path / "shop.py").write_text(source)
    from toollint.dynamic.derived import derive_tools

    [tool] = derive_tools(findings)
    assert not tool.has_oracles
    assert tool.why_unchecked(findings[0]) == "the commented guard neither raises nor returns"


def test_sarif_results_say_which_oracle_decided(fixture: Fixture) -> None:
    import io

    from toollint.reporters.sarif import SarifOptions, write_sarif

    buf = io.StringIO()
    write_sarif(buf, [*fixture.findings, *fixture.found], SarifOptions(root=fixture.bench))
    results = json.loads(buf.getvalue())["runs"][0]["results"]
    dynamic = [r for r in results if r["ruleId"].startswith("TL2")]
    assert dynamic and all(r["properties"]["oracle"] == "derived" and r["properties"]["tier"] == "derived"
                           for r in dynamic)
    guard = next(r for r in dynamic if r["ruleId"] == "TL201")
    assert guard["properties"]["derived_from"]["code"] == "TL102"
    static = [r for r in results if r["ruleId"].startswith("TL1")]
    assert all(r["properties"]["verdict_oracle"] == "derived" for r in static)
