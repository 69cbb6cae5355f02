"""Score-at-risk on the pinned tau2-bench snapshot (`TOOLLINT_TAU2`, else the shared c3398666 copy),
through the tau2 profile's task enumerator alone, beside the paper's figures:

- telecom `refuel_data` (its "Line status must be Active" guard commented out) over the 2,285
  telecom tasks: 1,135 exposed = 1,120 `exact_field` (`assert_data_refueling_amount` reads the line's
  `data_refueling_gb`) + 15 `collection_only` (`assert_no_overdue_bill` searches the bills the tool
  appends to, reading a field the tool never writes);
- airline `cancel_reservation` (seats never released): all 50 airline tasks, `whole_state_hash` (the
  evaluator compares the whole agent-DB hash);
- neither exposes a task of another domain.

Nothing of tau2 is imported; the tracer reads its code and data. The whole run takes about a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from toollint.contracts.loader import load_contract

from toollint.profiles.tau2 import PROFILE
from toollint.profiles.tau2.tasks import tasks as tau2_tasks
from toollint.trace.cli import main
from toollint.trace.ledger import Ledger, defect_from_clause, tool_writes, trace
from toollint.trace.readsites import ModuleCache
from toollint.trace.tasks import TaskSet

CONTRACTS = PROFILE.contracts_dir
assert CONTRACTS is not None
REFUEL = CONTRACTS / "telecom" / "refuel_data.yaml"
CANCEL = CONTRACTS / "airline" / "cancel_reservation.yaml"


@pytest.fixture(scope="module")
def all_tasks(tau2_checkout: Path) -> TaskSet:
    return tau2_tasks(tau2_checkout)  # every domain: scoping is what keeps them apart


def _ledger(all_tasks: TaskSet, checkout: Path, contract_file: Path, clause: str) -> Ledger:
    contract = load_contract(contract_file)
    writes = tool_writes(checkout / "src" / "tau2" / contract.source.file, contract.qualname)
    defect = defect_from_clause(f"{contract.tool_name}:{clause}", contract.tool, contract.clause(clause),
                                writes.canonical(all_tasks, contract.tool), contract.clauses_of("eff"))
    return trace([defect], all_tasks, ModuleCache())


@pytest.fixture(scope="module")
def refuel(all_tasks: TaskSet, tau2_checkout: Path) -> Ledger:
    return _ledger(all_tasks, tau2_checkout, REFUEL, "pre.line_active")


@pytest.fixture(scope="module")
def cancel(all_tasks: TaskSet, tau2_checkout: Path) -> Ledger:
    return _ledger(all_tasks, tau2_checkout, CANCEL, "eff.seats_released")


def test_every_domain_is_enumerated(all_tasks: TaskSet) -> None:
    counts = Counter(t.suite for t in all_tasks.tasks)
    assert (
        counts["telecom"] == 2285
        and counts["airline"] == 50
        and counts["retail"] == 114
        and counts["mock"] == 10
    )
    assert all_tasks.problems == []


def test_refuel_data_exposes_1135_telecom_tasks_1120_exact_15_collection_only(refuel: Ledger) -> None:
    defect = refuel.defects[0].id
    assert refuel.totals(defect) == {"exact_field": 1120, "whole_state_hash": 0, "collection_only": 15,
                                     "unresolved": 0, "exposed": 1135, "traced": 2285}
    graders = Counter((r.grader, r.basis) for r in refuel.rows)
    assert graders == {("TelecomTools.assert_data_refueling_amount", "exact_field"): 1120,
                       ("TelecomTools.assert_no_overdue_bill", "collection_only"): 15}
    assert not refuel.untraced


def test_the_tools_appends_put_only_collection_membership_at_risk(refuel: Ledger) -> None:
    defect = refuel.defects[0]
    # `self.db.bills.append(...)` and `customer.bill_ids.append(...)` inside `_apply_one_time_charge`
    assert set(defect.collections) == {"agent_db.bills", "agent_db.customers[*].bill_ids"}
    assert "agent_db.lines[*].data_refueling_gb" in defect.fields
    bill_row = next(r for r in refuel.rows if r.basis == "collection_only")
    assert bill_row.field == "agent_db.bills"


def test_cancel_reservation_exposes_the_50_airline_tasks_through_the_db_hash(cancel: Ledger) -> None:
    defect = cancel.defects[0]
    assert defect.fields == ("agent_db.flights[*].dates[*].available_seats[*]",)
    assert cancel.totals(defect.id) == {"exact_field": 0, "whole_state_hash": 50, "collection_only": 0,
                                        "unresolved": 0, "exposed": 50, "traced": 50}
    # the read site is the evaluator's comparison of the gold and predicted agent-DB hashes
    sites = {(r.grader, r.read_site) for r in cancel.rows}
    assert len(sites) == 1
    grader, site = sites.pop()
    assert grader == "EnvironmentEvaluator.calculate_reward"
    file, line = site.rsplit(":", 1)
    assert file == "src/tau2/evaluator/evaluator_env.py"
    text = (Path(cancel.rows[0].sites[0].source)).read_text().splitlines()[int(line) - 1]
    assert "agent_db_hash == predicted_agent_db_hash" in text


def test_no_defect_exposes_a_task_of_another_domain(
    refuel: Ledger, cancel: Ledger, all_tasks: TaskSet
) -> None:
    domain = {t.id: t.suite for t in all_tasks.tasks}
    assert {domain[r.task] for r in refuel.rows} == {"telecom"}
    assert {domain[r.task] for r in cancel.rows} == {"airline"}


def test_user_side_assertions_read_the_user_database_only(all_tasks: TaskSet) -> None:
    cache = ModuleCache()
    from toollint.trace.tasks import task_sites

    user_task = next(t for t in all_tasks.tasks if t.suite == "telecom" and t.graders
                     and all(g.roots and g.roots.root == "user_db" for g in t.graders))
    sites = task_sites(user_task, cache)
    assert sites and all(
        s.scope == "user_db" and s.path.startswith("user_db") for s in sites if s.kind != "record"
    )


def test_toollint_trace_gives_the_figures_from_the_checkout_alone(tau2_checkout: Path,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    # The tool's source is found in the checkout (no --tool-file); the whole checkout's tasks are read.
    code = main(["--benchmark", "tau2", "--tasks", str(tau2_checkout), "--contract", str(REFUEL),
                 "--clause", "pre.line_active", "--ledger", str(tmp_path / "refuel")])
    out = capsys.readouterr()
    assert code == 0 and out.err == ""
    assert out.out.splitlines()[0] == (
        "refuel_data:pre.line_active: 1135 of 2285 tasks exposed (1120 exact_field, 0 whole_state_hash, "
        "15 collection_only, 0 unresolved); 271 task(s) of environments without the tool not in scope")
    rows = json.loads((tmp_path / "refuel.json").read_text())["rows"]
    assert all(r["read_site"].startswith("src/tau2/domains/telecom/tools.py:") for r in rows)


def test_paths_relative_to_another_root_warn_and_exit_non_zero(tau2_checkout: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    relative = tmp_path / "refuel_data.yaml"
    relative.write_text(REFUEL.read_text().replace("post.agent_db.lines", "post.lines")
                        .replace("pre.agent_db.lines", "pre.lines"))
    code = main(["--benchmark", "tau2", "--tasks", str(tau2_checkout), "--suite", "telecom",
                 "--contract", str(relative), "--clause", "eff.data_added"])
    out = capsys.readouterr()
    assert code == 1
    assert out.out == "refuel_data:eff.data_added: nothing traced (see the warning)\n"
    assert out.err == (
        "toollint trace: warning: refuel_data:eff.data_added: nothing traced: no grader of the "
        "2285 task(s) in scope reads anything under lines (they read agent_db, user_db); did you "
        "mean agent_db.lines[*].data_refueling_gb?\n"
    )


def test_a_tool_no_traced_environment_has_warns_and_exits_non_zero(
    tau2_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--benchmark", "tau2", "--tasks", str(tau2_checkout), "--suite", "airline",
                 "--tool", "refuel_data", "--field", "db.lines[*].data_refueling_gb"])
    out = capsys.readouterr()
    assert code == 1
    assert out.err == ("toollint trace: warning: refuel_data:defect: nothing traced: no traced task's "
                       "environment has the tool refuel_data\n")


def test_a_field_typed_in_the_codes_form_is_put_in_the_snapshots(tau2_checkout: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "--benchmark",
                "tau2",
                "--tasks",
                str(tau2_checkout),
                "--suite",
                "telecom",
                "--tool",
                "refuel_data",
                "--field",
                "db.lines[*].data_refueling_gb",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith(
        "refuel_data:defect: 1120 of 2285 tasks exposed (1120 exact_field"
    )


def test_a_precondition_without_the_tools_source_is_a_usage_error(tau2_checkout: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # a JSON task file, no toolkit that is the tool's file: the write set cannot be known
    tasks = tau2_checkout / "data" / "tau2" / "domains" / "telecom" / "tasks_small.json"
    code = main(["--tasks", str(tasks), "--contract", str(REFUEL), "--clause", "pre.line_active"])
    assert code == 2
    assert capsys.readouterr().err == (
        "toollint trace: error: pre.line_active is a precondition, "
        "so the fields it puts at risk are what the tool "
        "writes, and the tool's source was not found; give --tool-file PATH (or --field PATH)\n"
    )


@pytest.mark.parametrize(("argv", "message"), [
    (["--benchmark", "tau2", "--tasks", "/nonexistent"],
     "/nonexistent: not a tau2-bench checkout (no src/tau2/domains) or tau2 package (no domains/)"),
    (["--benchmark", "tau2", "--suite", "telcom"],
     "unknown tau2 domain 'telcom' (domains: airline, banking_knowledge, mock, retail, telecom)"),
])
def test_bad_checkouts_and_domains_are_one_line(argv: list[str], message: str, tau2_checkout: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    if "--tasks" not in argv:
        argv = [*argv, "--tasks", str(tau2_checkout)]
    assert main([*argv, "--tool", "t", "--field", "f"]) == 2
    assert capsys.readouterr().err == f"toollint trace: error: {message}\n"


def test_a_confirmed_finding_is_traced_with_its_tools_write_set_in_the_snapshots_form(
        tau2_checkout: Path, all_tasks: TaskSet) -> None:
    """What `toollint check --confirm --ledger` does with the TL201 `--confirm` reports on refuel_data:
    the finding names its contract and clause; the tool's write set comes from the file it is on."""
    from toollint.model import Finding
    from toollint.trace.ledger import trace_findings

    tools = tau2_checkout / "src" / "tau2" / "domains" / "telecom" / "tools.py"
    finding = Finding(
        "TL201",
        "refuel_data: a call on a Suspended line succeeds",
        str(tools),
        608,
        1,
        tool="TelecomTools.refuel_data",
        properties={"contract": str(REFUEL), "clause": "pre.line_active"},
    )
    ledger = trace_findings([finding], all_tasks)
    assert ledger.problems == [] and ledger.untraced == {}
    assert ledger.totals("TL201:refuel_data:pre.line_active") == {
        "exact_field": 1120, "whole_state_hash": 0, "collection_only": 15, "unresolved": 0, "exposed": 1135,
        "traced": 2285}
    trace = finding.properties["trace"]
    assert trace["exposed"] == 1135 and trace["exposed_tasks"]["collection_only"] == 15
    assert {r.path for r in finding.related} == {str(tools.resolve())}


def test_bench_tau2_prints_the_exposure_figures_beside_the_papers(
    tau2_checkout: Path, tmp_path: Path
) -> None:
    """`python bench/tau2.py --trace-only`: the lines the must-show table quotes, toollint's figure
    then the paper's, and the same numbers in its JSON."""
    bench = Path(__file__).resolve().parents[1] / "bench" / "tau2.py"
    out = tmp_path / "tau2.json"
    proc = subprocess.run(
        [sys.executable, str(bench), "--trace-only", "--json", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TOOLLINT_TAU2": str(tau2_checkout)},
    )
    assert proc.returncode == 0, proc.stderr
    lines = {line.split("  ")[0]: line.split() for line in proc.stdout.splitlines()}
    refuel = next(v for k, v in lines.items() if k.startswith("telecom refuel_data, 2285 tasks"))
    assert " ".join(refuel).endswith("1,135 = 1,120 + 15 1,135 = 1,120 + 15")  # toollint's, then the paper's
    cancel = next(v for k, v in lines.items() if k.startswith("airline cancel_reservation, 50 tasks"))
    cross = next(v for k, v in lines.items() if k.startswith("cross-domain exposure"))
    assert cancel[-2:] == ["50", "50"] and cross[-2:] == ["0", "0"]
    figures = json.loads(out.read_text())["exposure"]
    assert {
        k: figures["refuel_data"][k] for k in ("exposed", "exact_field", "collection_only", "traced")
    } == {"exposed": 1135, "exact_field": 1120, "collection_only": 15, "traced": 2285}
    assert figures["cancel_reservation"]["whole_state_hash"] == 50
    assert figures["refuel_data"]["cross_domain"] == figures["cancel_reservation"]["cross_domain"] == 0


def test_a_task_graded_by_calls_of_a_signalling_tool_is_not_an_ungrounded_oracle(
        tau2_checkout: Path, tmp_path: Path) -> None:
    """`toollint check --ledger FILE` on the checkout, no configuration. banking_knowledge's tasks
    004/008/012/014 are graded only by a call of `transfer_to_human_agents` (`ToolType.GENERIC`: it
    changes no state, so there is nothing to read back); the tasks whose gold actions call writing
    tools (`call_discoverable_agent_tool`, `log_verification`: `ToolType.WRITE`) still are TL401."""
    ledger = tmp_path / "ledger"
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--ledger", str(ledger),
                           str(tau2_checkout)], capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stderr
    flagged = {line.split("task ", 1)[1].split(":", 1)[0] for line in proc.stdout.splitlines()
               if " TL401 " in line}
    assert flagged == {f"banking_knowledge/task_0{n}" for n in ("32", "33", "34", "35", "83")}, flagged
    tasks = {t.id: t for t in tau2_tasks(tau2_checkout).tasks}
    assert [(s.how, s.detail) for s in tasks["banking_knowledge/task_004"].sites if s.kind == "record"] == [
        ("signal", "transfer_to_human_agents")]
    assert ("action", "call_discoverable_agent_tool") in {
        (s.how, s.detail) for s in tasks["banking_knowledge/task_035"].sites}
