"""TL411 (do-nothing-passes): the grader audit's null run passes a task whose gold run changes nothing,
so the task cannot tell an agent that does nothing from a right one. On the fixture benchmark (its
`lookup` task grades the state only), with its negative control (a grader that reads the answer), and
on tau-bench (original, pinned extract), whose reward is a hash of the database against the gold
run's: a sample of the airline test split in the default run, both domains whole in the slow run
(airline 19 of 50 = 38%, the published do-nothing score; retail 7 of 115). The CLI runs as README.md and
docs/grader-audit.md show it, and each witness replays with `toollint replay` (exit 1: still passes;
0 once fixed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from profile_fixtures import registered
from toollint.dynamic.protocol import SERVICES

from toollint import cli
from toollint.profiles import get_profile
from toollint.profiles.taubench.validation import HOST_HELPERS, TaubenchDriver
from toollint.validate.graders import audit_variant, batch_grader

BENCH = Path(__file__).parent / "fixtures" / "audit_bench"
sys.path.insert(0, str(BENCH))

from audit_driver import PROFILE, MiniDriver
from minibench import tasks as mini_tasks

AIRLINE_SAMPLE = [str(i) for i in range(10, 15)]  # both kinds: tasks that write, tasks that do not


@pytest.fixture
def driver() -> MiniDriver:
    return MiniDriver(PROFILE, SERVICES, BENCH)


@pytest.fixture
def minibench(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with registered(monkeypatch, PROFILE):
        yield


def _answers_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The negative control: `lookup` graded on its answer (what is on the calendar), not the state."""
    monkeypatch.setitem(mini_tasks.TASKS, "lookup", {
        **mini_tasks.TASKS["lookup"], "answer": "dentist at 08:00",
        "grader": lambda pre, post, answer: post == pre and "dentist" in answer})


def test_a_read_only_task_graded_on_the_state_alone_is_reported(driver: MiniDriver) -> None:
    audit = audit_variant(driver, sys.executable, "main", batch_grader(driver, sys.executable, "main"),
                          kinds=["null"])
    (found,) = [f for f in audit.findings if f.code == "TL411"]
    assert (found.task, found.kind, found.run, found.final) == ("lookup", "null", (), "empty")
    assert "gold run changes nothing" in found.message and "refusing" in found.message
    assert audit.no_state_change == 1 and audit.do_nothing == 1 and audit.vacuous == 1  # spotify: TL408


def test_negative_control_a_grader_that_reads_the_answer(driver: MiniDriver,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _answers_lookup(monkeypatch)
    audit = audit_variant(driver, sys.executable, "main", batch_grader(driver, sys.executable, "main"))
    assert audit.do_nothing == 0 and audit.no_state_change == 1
    assert "lookup" not in {f.task for f in audit.findings} and audit.vacuous == 1


def test_a_null_run_passed_without_its_llm_judged_part_is_counted_not_reported(driver: MiniDriver) -> None:
    def grade(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = driver.grade(sys.executable, "main", items)
        return [{**a, "unjudged": ["NL_ASSERTION"]} if not i["calls"] else a for i, a in zip(items, answers)]

    audit = audit_variant(driver, sys.executable, "main", grade, kinds=["null"])
    assert audit.do_nothing == 0 and audit.unjudged_null == 1


def test_a_task_that_lists_outputs_the_grader_ignores_says_so(driver: MiniDriver) -> None:
    class ListsOutputs(MiniDriver):
        def ground_truth(self, python: str, variant: str) -> list[dict[str, Any]]:
            rows = super().ground_truth(python, variant)
            return [{**r, "outputs": ["dentist"]} if r["task"] == "lookup" else r for r in rows]

    lists = ListsOutputs(PROFILE, SERVICES, BENCH)
    audit = audit_variant(lists, sys.executable, "main", batch_grader(lists, sys.executable, "main"),
                          kinds=["null"], tasks=["lookup"])
    (found,) = audit.findings
    assert found.code == "TL411" and "the outputs the task lists are not checked" in found.message


def test_cli_reports_a_warning_whose_witness_replays_until_the_grader_reads_the_answer(
        minibench: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    sarif = tmp_path / "audit.sarif"
    page = tmp_path / "audit.html"
    assert cli.main(["audit-graders", str(BENCH), "--python", sys.executable, "--only", "null", "-q",
                     "--output-format", "sarif", "-o", str(sarif), "--report", str(page)]) == 1
    html = page.read_text()
    assert "<th>do-nothing passes (TL411)</th>" in html
    assert "<td>main</td><td>7</td><td>7</td><td>1</td>" in html
    table = capsys.readouterr().out
    assert "do-nothing passes" in table.splitlines()[0]
    share = f"{1 / len(mini_tasks.TASKS):.0%} of the tasks"
    assert f"main: 1 whose gold run changes no state (1 of them pass the null run: TL411, {share})" in table
    run = json.loads(sarif.read_text())["runs"][0]
    (result,) = [r for r in run["results"] if r["ruleId"] == "TL411"]
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "TL411")
    assert result["level"] == "warning" and rule["name"] == "do-nothing-passes"
    assert result["properties"]["task"] == "lookup"
    witness = tmp_path / ".toollint" / "witnesses" / "grader-audit" / "TL411-main-lookup.json"
    assert json.loads(witness.read_text())["run"] == {"calls": [], "final": "empty"}
    assert cli.main(["replay", str(witness)]) == 1
    assert "STILL PASSES (TL411): main task lookup" in capsys.readouterr().out
    _answers_lookup(monkeypatch)
    assert cli.main(["replay", str(witness)]) == 0
    assert "FIXED (TL411)" in capsys.readouterr().out


def test_the_rule_doc_says_a_refusal_task_may_mean_it() -> None:
    from toollint.registry import get

    rule = get("TL411")
    assert rule is not None and rule.level == "warning" and get("TL408").level == "error"  # type: ignore[union-attr]
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in rule.doc
    assert "refus" in rule.doc and "38%" in rule.doc


# --- tau-bench ----------------------------------------------------------------------------------------


def _expected(checkout: Path, python: Path, domain: str, tasks: list[str] | None) -> list[str]:
    """Not by the reward code: the tasks whose gold actions, run through the tools' own `invoke`, change
    nothing, and that list no outputs (`bench/taubench_null.py`'s cross-check)."""
    driver = TaubenchDriver(get_profile("taubench"), SERVICES).for_package(checkout)
    with driver.interpreter(str(python)) as worker:
        indices = [int(t) for t in tasks] if tasks else list(range(len(worker.evaluate(
            "tasks(variant)", module=HOST_HELPERS, names={"variant": domain}))))
        effects = worker.evaluate("gold_effects(variant, indices)", module=HOST_HELPERS,
                                  names={"variant": domain, "indices": indices})
    return [e["task"] for e in effects if not e["writes"] and not e["outputs"]]


def _audit_cli(checkout: Path, python: Path, cwd: Path, domain: str,
               tasks: list[str]) -> list[dict[str, Any]]:
    args = [sys.executable, "-m", "toollint", "audit-graders", str(checkout), "--python", str(python),
            "--variant", domain, "--only", "null", "--output-format", "json", "-o", "found.json", "-q"]
    for t in tasks:
        args += ["--task", t]
    run = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=1800, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    found: list[dict[str, Any]] = json.loads((cwd / "found.json").read_text())
    assert {f["code"] for f in found} == {"TL411"}, found  # tau-bench's hash never passes a state change
    return found


def _replays(cwd: Path, found: list[dict[str, Any]]) -> None:
    for f in found:
        witness = f["properties"]["witness"]
        replay = subprocess.run([sys.executable, "-m", "toollint", "replay", witness], capture_output=True,
                                text=True, cwd=cwd, timeout=600, check=False)
        assert replay.returncode == 1 and "STILL PASSES (TL411)" in replay.stdout, replay.stdout


@pytest.mark.timeout(900)  # three tau-bench interpreters and a replay; a minute on idle cores
def test_taubench_airline_sample_through_the_cli(taubench_checkout: Path, taubench_python: Path,
                                                 tmp_path: Path) -> None:
    found = _audit_cli(taubench_checkout, taubench_python, tmp_path, "airline", AIRLINE_SAMPLE)
    tasks = sorted(f["properties"]["task"] for f in found)
    assert tasks == _expected(taubench_checkout, taubench_python, "airline", AIRLINE_SAMPLE)
    assert 0 < len(tasks) < len(AIRLINE_SAMPLE)
    assert all(Path(f["filename"]).name == "base.py" for f in found)  # at Env.calculate_reward
    _replays(tmp_path, found[:1])


@pytest.mark.slow
@pytest.mark.timeout(3600)  # the domain's null and gold runs, then a replay per witness: 5-15 minutes
@pytest.mark.parametrize(("domain", "tasks", "passing"), [("airline", 50, 19), ("retail", 115, 7)])
def test_taubench_whole_test_split(taubench_checkout: Path, taubench_python: Path, tmp_path: Path,
                                   domain: str, tasks: int, passing: int) -> None:
    """airline: 19 of 50 (38%), the Agentic Benchmark Checklist's published do-nothing score."""
    found = _audit_cli(taubench_checkout, taubench_python, tmp_path, domain, [])
    ids = sorted((f["properties"]["task"] for f in found), key=int)
    assert ids == _expected(taubench_checkout, taubench_python, domain, None) and len(ids) == passing
    assert round(100 * passing / tasks) == {"airline": 38, "retail": 6}[domain]
    _replays(tmp_path, found)
