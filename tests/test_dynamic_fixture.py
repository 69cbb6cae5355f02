"""The dynamic checker on its own fixture benchmark (tests/fixtures/dynamic_bench): every defect class
detected on the defective tool, every conforming twin CONFORMS, bad input gives a clear verdict while
the other tools are still checked; witnesses replay with the documented exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.checker import ToolReport
from toollint.dynamic.cli import replay_main
from toollint.dynamic.confirm import ConfirmRun, run_confirm, summary_lines
from toollint.dynamic.replay import replay

from toollint.settings import Settings

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"


def settings(bench: Path = BENCH) -> Settings:
    return Settings(confirm={"adapter": "toolkit", "factory": "bank:make_bank", "sys_path": [str(bench)],
                             "deadline": 3})


def contracts(*tools: str) -> list:  # type: ignore[type-arg]
    found, errors = load_contracts([BENCH / "contracts"])
    assert errors == []
    return [c for c in found if not tools or c.tool_name in tools]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    return run_confirm(contracts(), settings(), witness_dir=tmp_path_factory.mktemp("witnesses"))


def by_tool(run: ConfirmRun) -> dict[str, ToolReport]:
    return {r.tool: r for r in run.reports}


def violations(report: ToolReport) -> dict[str, str | None]:
    return {r.clause_id: r.code for r in report.violations}


def test_exact_verdict_table(run: ConfirmRun) -> None:
    table = {tool: (r.verdict, violations(r)) for tool, r in by_tool(run).items()}
    assert table == {
        "withdraw_unchecked": ("VIOLATES", {"pre.account_active": "TL201"}),
        "withdraw": ("CONFORMS", {}),
        "set_balance_truthy": ("VIOLATES", {"eff.balance_set": "TL202", "arg.balance": "TL202"}),
        "set_balance": ("CONFORMS", {}),
        "set_balance_flaky": ("CONFORMS", {}),  # not flaky unless the test's counter is set
        "close_account_partial": ("VIOLATES", {"eff.balance_zero": "TL203"}),
        "close_account": ("CONFORMS", {}),
        "archive_account_phantom": ("VIOLATES", {"eff.archived": "TL204", "success": "TL204"}),
        "archive_account": ("CONFORMS", {}),
        "add_audit_note": ("VIOLATES", {"reset": "TL205"}),
        "add_note": ("CONFORMS", {}),
        # The cached session: alone each call conforms, after the earlier calls it writes elsewhere.
        "set_balance_cached": ("VIOLATES", {"eff.balance_set": "TL205", "arg.balance": "TL205"}),
        "rename_owner_noisy": ("VIOLATES", {"frame.other_accounts_and_stats": "TL206"}),
        "rename_owner": ("CONFORMS", {}),
        "chatty_deposit": ("CONFORMS", {}),  # its print went to the log, not the protocol
        "hang": ("UNTESTABLE", {}),
        "attach_handle": ("CONFORMS", {}),  # pre scored; the effect is UNTESTABLE, see below
        "no_such_tool": ("UNTESTABLE", {}),
    }


def test_every_violation_was_confirmed_in_a_fresh_worker(run: ConfirmRun) -> None:
    rows = [row for r in run.reports for row in r.violations]
    assert rows and all(row.rerun and row.rerun["agrees"] and row.rerun["fresh_process"] for row in rows)


def test_bad_input_gives_clear_verdicts(run: ConfirmRun) -> None:
    tools = by_tool(run)
    assert "did not answer within 3 s (worker restarted" in (tools["hang"].error or "")
    hang_effect = next(r for r in tools["hang"].rows if r.clause_id == "eff.nothing")
    assert (hang_effect.verdict, hang_effect.reason) == ("UNTESTABLE", "adapter_unsupported")
    # clauses whose probes were skipped after the hang say so, rather than "no observable state"
    reasons = {r.reason for r in tools["hang"].rows if r.verdict == "UNTESTABLE"}
    assert "adapter_unsupported" in reasons and "no_observable_state" not in reasons
    assert "is not among the 18 tools the toolkit host lists" in (tools["no_such_tool"].error or "")
    # state with no JSON form is left out of the snapshots (the rest is still compared) and said once
    handle = next(r for r in tools["attach_handle"].rows if r.clause_id == "eff.nothing_visible")
    assert handle.verdict == "CONFORMS"
    assert "confirm: state at /accounts/0/handle has no JSON form (object): left out of every snapshot" \
        in summary_lines(run)


def test_untestable_rows_stay_in_the_counts(run: ConfirmRun) -> None:
    counts = run.counts()
    rows = sum(len(r.clause_rows) for r in run.reports)
    assert sum(counts.values()) == rows and counts["UNTESTABLE"] >= 3


def test_probes_vary_effective_arguments_through_their_falsy_values(run: ConfirmRun) -> None:
    report = by_tool(run)["set_balance_truthy"]
    varied = {r.args["balance"] for r in report.runs if r.probe.varied == "balance"}
    assert 0.0 in varied and len(varied) >= 3
    assert report.runs[0].probe.harvested_from["account_id"].startswith("/accounts/")


def test_precondition_violation_is_searched_for_in_other_records(run: ConfirmRun) -> None:
    report = by_tool(run)["withdraw_unchecked"]
    violating = [r for r in report.runs if r.probe.clause == "pre.account_active"]
    assert [r.probe.args["account_id"] for r in violating] == ["A2"]  # the frozen account


def test_findings_and_witness_files(run: ConfirmRun) -> None:
    messages = {f.properties["clause"]: f for f in run.findings}
    tl201 = messages["pre.account_active"]
    assert tl201.code == "TL201" and tl201.path.endswith("bank.py") and tl201.tool == "withdraw_unchecked"
    assert tl201.message.startswith("VIOLATES pre.account_active (TL201 Unenforced Precondition): "
                                    "withdraw_unchecked(account_id='A2', amount=")
    assert "succeeded although pre.account_active was false (where pre.accounts{id=A2}" in tl201.message
    witness = json.loads(Path(tl201.properties["witness"]).read_text())
    assert witness["verdict"] == "VIOLATES" and witness["defect_class"] == "Unenforced Precondition"
    assert witness["probe"]["effective_args"]["account_id"] == "A2"
    assert witness["probe"]["result"]["status"] == "ok"
    assert witness["probe"]["result"]["agent_view"].startswith("Withdrew ")  # what the agent was told
    assert [op["path"] for op in witness["probe"]["diff"]] == ["/accounts/{id=A2}/balance"]
    assert {"expr": "pre.accounts{id=A2}.status", "value": "frozen"} in witness["evaluation"]["bindings"]
    assert witness["clause"]["provenance"]["tier"] == "author-specified"
    assert witness["replay"] == f"toollint replay {tl201.properties['witness']}"


def _witness(run: ConfirmRun, clause: str, tool: str = "set_balance_truthy") -> Path:
    return Path(next(f.properties["witness"] for f in run.findings
                     if f.properties["clause"] == clause and f.tool == tool))


def test_replay_still_violates(run: ConfirmRun, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"  # the project configuration the witness's host must match
    config.write_text(f"[tool.toollint.confirm]\nadapter = 'toolkit'\nfactory = 'bank:make_bank'\n"
                      f"sys-path = [{str(BENCH)!r}]\n")
    assert replay_main([str(_witness(run, "arg.balance")), "--repeat", "1", "--config", str(config)]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("STILL VIOLATES arg.balance (TL202): set_balance_truthy(") and "\n" not in out


def test_replay_fixed(run: ConfirmRun, tmp_path: Path) -> None:
    fixed = tmp_path / "bench"
    shutil.copytree(BENCH, fixed)
    source = (fixed / "bank.py").read_text()
    assert source.count("        if balance:\n") == 1
    (fixed / "bank.py").write_text(
        source.replace("        if balance:\n", "        if balance is not None:\n")
    )
    data = json.loads(_witness(run, "arg.balance").read_text())
    data["worker"]["options"]["sys_path"] = [str(fixed)]
    moved = tmp_path / "w.json"
    moved.write_text(json.dumps(data))
    outcome = replay(moved, repeat=1, settings=settings(fixed))
    assert outcome.code == 0 and outcome.sentence.startswith("FIXED arg.balance (TL202)")


def test_replay_not_faithful(run: ConfirmRun, tmp_path: Path) -> None:
    data = json.loads(_witness(run, "arg.balance").read_text())
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert replay(bad).code == 2 and "is not a toollint witness" in replay(bad).sentence
    assert (
        replay(tmp_path / "missing.json").sentence
        == f"NOT REPLAYED: no witness file {tmp_path / 'missing.json'}"
    )
    other = dict(data, benchmark=dict(data["benchmark"], variant="bank:other_factory"))
    bad.write_text(json.dumps(other))
    outcome = replay(bad, repeat=1, settings=settings())
    assert outcome.code == 2 and "the witness was recorded on 'bank:other_factory'" in outcome.sentence
    gone = dict(data, clause=dict(data["clause"], contract=str(tmp_path / "gone.yaml")))
    bad.write_text(json.dumps(gone))
    assert replay(bad).code == 2


def test_state_kept_outside_the_environment_is_a_reset_leak_found_by_replaying_history(
    run: ConfirmRun,
) -> None:
    # The reset hash cannot see a module global holding the first environment; the order can.
    row = next(r for r in by_tool(run)["set_balance_cached"].violations if r.clause_id == "eff.balance_set")
    assert row.verdict == "VIOLATES" and row.code == "TL205"
    assert row.rerun is not None and row.rerun["agrees"] and row.rerun["history"] >= 1
    assert "only after the" in row.detail and "survives reset" in row.detail
    # The conforming twin with the same contract is not touched by the replay.
    assert by_tool(run)["set_balance"].verdict == "CONFORMS"
    # The witness carries the call sequence, and replaying it in a fresh worker reproduces the leak.
    witness = _witness(run, "eff.balance_set", tool="set_balance_cached")
    data = json.loads(witness.read_text())
    assert len(data["history"]) == row.rerun["history"] + 1 and data["history_positions"] == [
        row.rerun["history"]
    ]
    outcome = replay(witness, repeat=1, settings=settings())
    assert outcome.code == 1 and "after " in outcome.sentence and "earlier call(s)" in outcome.sentence


def test_flaky_violation_is_reported_as_flaky_and_replays_as_flaky(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The flaky tool drops falsy balances only in odd-numbered worker processes.
    monkeypatch.setenv("TOOLLINT_FIXTURE_COUNTER", str(tmp_path / "count"))
    result = run_confirm(contracts("set_balance_flaky"), settings(), witness_dir=tmp_path / "w")
    (report,) = result.reports
    assert report.verdict == "FLAKY"
    assert {r.clause_id: r.verdict for r in report.violations} == {
        "eff.balance_set": "FLAKY",
        "arg.balance": "FLAKY",
    }
    assert all("did not reproduce" in r.detail for r in report.violations)
    witness = _witness(result, "arg.balance", tool="set_balance_flaky")
    outcome = replay(witness, repeat=2, settings=settings())  # process 3 drops it, process 4 does not
    assert outcome.code == 3 and outcome.sentence.startswith("FLAKY arg.balance (TL202)")
    assert "reproduced in 1 of 2 fresh runs" in outcome.sentence


def test_a_history_replay_whose_worker_will_not_start_leaves_a_clear_flaky_row() -> None:
    from toollint.dynamic.checker import CheckOptions, ClauseResult, ProbeRun, Scorer, ToolReport, _History
    from toollint.dynamic.probes import Probe
    from toollint.dynamic.protocol import WorkerError

    class DeadWorker:
        def restart(self, reason: object) -> None:
            raise WorkerError("startup", "host failed to start")

    (contract,) = contracts("set_balance_cached")
    first, second = (ProbeRun(Probe("happy", {"account_id": "A1", "balance": b})) for b in (1.0, 2.0))
    report = ToolReport("set_balance_cached", contract, runs=[first, second])
    row = ClauseResult("eff.balance_set", "eff", "VIOLATES", code="TL203", run=second,
                       rerun={"agrees": False, "differing_paths": []})
    history = _History(DeadWorker(), report, {}, CheckOptions())  # type: ignore[arg-type]
    history.settle(row, Scorer(contract, {}))
    assert row.verdict == "FLAKY" and row.code == "TL203" and not row.history
    assert "the history replay could not run" in row.detail and "host failed to start" in row.detail


def test_every_witness_written_matches_the_witness_schema(run: ConfirmRun) -> None:
    from toollint.dynamic.replay import witness_problem

    paths = {f.properties["witness"] for f in run.findings if f.properties.get("witness")}
    assert len(paths) >= 8  # all six classes, a partner pair, an order-dependent history
    for path in paths:
        assert witness_problem(json.loads(Path(path).read_text())) is None, path
