"""The tau-bench profile (the original tau-bench, pinned extract in shared/corpus): its task enumerator
(read as syntax) and its driver, whose ground truth and grading run tau-bench's own code in a venv of
its own (`taubench_python`; the checkout on its path, never installed)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest
from toollint.dynamic.protocol import SERVICES

from toollint.profiles import get_profile
from toollint.profiles.api import Interpreter, Task
from toollint.profiles.taubench.validation import HOST_HELPERS, TaubenchDriver

PROFILE = get_profile("taubench")
AIRLINE_CANCEL = "tau_bench.envs.airline.tools.cancel_reservation:CancelReservation.invoke"
SAMPLE = [str(i) for i in range(10, 15)]  # five airline tasks: some write, some do not


def _split_file(checkout: Path, domain: str) -> str:
    return (checkout / "tau_bench" / "envs" / domain / "tasks_test.py").read_text(encoding="utf-8")


def test_the_profile_has_a_task_enumerator_and_a_driver_and_no_adapter() -> None:
    assert PROFILE.part_names() == ["tasks", "validation"]
    assert PROFILE.adapter_file is None and PROFILE.package == "tau_bench"


def test_every_test_split_task_is_listed_with_the_reward_that_grades_it(taubench_checkout: Path) -> None:
    found = PROFILE.task_enumerator()(taubench_checkout)
    assert found.problems == []
    by_suite: dict[str, list[Task]] = {}
    for task in found.tasks:
        by_suite.setdefault(task.suite, []).append(task)
    for domain in ("airline", "retail"):
        text = _split_file(taubench_checkout, domain)
        tasks = by_suite[domain]
        # counted independently: one `Task(` per entry, and the entries whose `outputs` list is not empty
        assert len(tasks) == text.count("    Task(\n")
        assert [t.id for t in tasks] == [f"{domain}/{i}" for i in range(len(tasks))]
        assert all([g.qualname for g in t.graders] == ["Env.calculate_reward"] for t in tasks)
        whole = [s for t in tasks for s in t.sites if s.kind == "whole_state"]
        assert len(whole) == len(tasks) and {(s.path, s.how) for s in whole} == {("data", "hash")}
        answers = [t for t in tasks if any(s.kind == "record" for s in t.sites)]
        assert len(answers) == len(re.findall(r"outputs=\[\s*\"", text))
        assert all(AIRLINE_CANCEL in (t.tools or ()) for t in tasks) == (domain == "airline")
    assert len(by_suite["airline"]) == 50 and len(by_suite["retail"]) == 115
    line = by_suite["airline"][0].line
    assert _split_file(taubench_checkout, "airline").splitlines()[line - 1].strip() == "Task("


def test_another_split_is_its_own_variant(taubench_checkout: Path) -> None:
    found = PROFILE.task_enumerator()(taubench_checkout / "tau_bench", variants=["retail/dev"])
    assert found.tasks and {t.suite for t in found.tasks} == {"retail/dev"}
    assert found.tasks[0].id == "retail/dev/0"


@pytest.mark.parametrize(
    ("where", "variants", "version", "message"),
    [
        ("empty", (), None, "not a tau-bench checkout"),
        ("checkout", ("hotel",), None, "unknown tau-bench domain 'hotel' (domains: airline, retail)"),
        ("checkout", ("airline/train",), None, "unknown tau-bench split 'train' of airline (splits: test)"),
        ("checkout", (), "9.9", "--version 9.9: the checkout at"),
    ],
)
def test_bad_input_is_one_line(taubench_checkout: Path, tmp_path: Path, where: str, variants: tuple[str, ...],
                               version: str | None, message: str) -> None:
    root = tmp_path if where == "empty" else taubench_checkout
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        PROFILE.task_enumerator()(root, version=version, variants=variants)
    assert "\n" not in str(info.value)
    assert TaubenchDriver(PROFILE, SERVICES).check_package(tmp_path) is not None


@pytest.mark.parametrize(
    ("tool", "field"),
    [
        (AIRLINE_CANCEL, "data.reservations[*].status"),  # by reference, the field in the state's form
        ("cancel_reservation", "reservations[*].status"),  # as an agent calls it, the field as its code
    ],
)
def test_trace_puts_every_airline_task_at_risk_through_the_database_hash(
    taubench_checkout: Path, tmp_path: Path, tool: str, field: str
) -> None:
    # the documented command (docs/trace.md): a defect of an airline tool, traced over tau-bench's tasks
    proc = subprocess.run(
        [sys.executable, "-m", "toollint", "trace", "--taubench", str(taubench_checkout), "--tool", tool,
         "--field", field, "--ledger", str(tmp_path / "ledger")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{tool}:defect: 50 of 50 tasks exposed (0 exact_field, 50 whole_state_hash" in proc.stdout
    assert "115 task(s) of environments without the tool not in scope" in proc.stdout
    # calculate_reward -> step -> calculate_reward is a real cycle: said once, not once per task
    assert proc.stderr.count("calls helpers in a cycle") == 1
    rows = (tmp_path / "ledger.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 51
    assert "data.reservations[*].status,airline/0,airline,Env.calculate_reward," in rows[1]
    assert rows[1].endswith("tau_bench/envs/base.py:125,whole_state_hash,high")


def test_a_tool_name_shared_by_both_domains_puts_both_at_risk(taubench_checkout: Path) -> None:
    found = PROFILE.task_enumerator()(taubench_checkout)
    shared = [t for t in found.tasks if t.tools is not None and "get_user_details" in t.tools]
    assert len(shared) == len(found.tasks) == 165
    roots = found.roots_of("get_user_details")
    assert roots is not None and roots.rewrite("users[*].name") == "data.users[*].name"
    assert roots.rewrite("data.orders[*].status") == "data.orders[*].status"


# --- the driver, in tau-bench's own interpreter ---------------------------------------------------------


@pytest.fixture(scope="module")
def driver(taubench_checkout: Path) -> TaubenchDriver:
    return TaubenchDriver(PROFILE, SERVICES).for_package(taubench_checkout)


@pytest.fixture(scope="module")
def warm(driver: TaubenchDriver, taubench_python: Path) -> Iterator[Interpreter]:
    """One interpreter with tau-bench imported (seconds), for the tests that grade in it."""
    with driver.interpreter(str(taubench_python)) as worker:
        yield worker


def test_a_null_run_passes_exactly_the_tasks_whose_gold_run_writes_nothing_and_needs_no_answer(
    driver: TaubenchDriver, warm: Interpreter
) -> None:
    with nullcontext(warm) as worker:
        gold = {g["task"]: g for g in worker.evaluate("tasks(variant)", module=HOST_HELPERS,
                                                      names={"variant": "airline"})}
        effects = worker.evaluate("gold_effects(variant, indices)", module=HOST_HELPERS,
                                  names={"variant": "airline", "indices": [int(t) for t in SAMPLE]})
        null = driver.grade_in(worker, "airline", [{"task": t, "calls": []} for t in SAMPLE])
        replayed = driver.grade_in(worker, "airline",
                                   [{"task": t, "calls": gold[t]["calls"]} for t in SAMPLE])
        tools = worker.evaluate("registered_tools(variants)", module=HOST_HELPERS,
                                names={"variants": ["airline", "retail"]})
    # what tau-bench's environment offers an agent is what the enumerator read from its source
    static = PROFILE.task_enumerator()(driver.layout.checkout if driver.layout else Path())
    for domain in ("airline", "retail"):
        task = next(t for t in static.tasks if t.suite == domain)
        assert set(tools[domain]) == {n for n in task.tools or () if ":" not in n}
    expected = {e["task"]: not e["writes"] and not e["outputs"] for e in effects}
    assert {r["task"]: r["verdict"] for r in null} == expected
    assert set(expected.values()) == {True, False}  # the sample holds both kinds
    # the positive control: the gold run itself passes, with no call failing
    assert all(r["verdict"] and not r["errors"] for r in replayed), replayed
    assert len(gold) == 50
    keys = {"task", "calls", "outputs", "instruction", "source", "grader"}
    assert all(keys <= set(g) for g in gold.values())


def test_the_grader_audits_keys_final_answer_and_state_digests(
    driver: TaubenchDriver, warm: Interpreter, taubench_checkout: Path
) -> None:
    # airline task 2: five flight updates, and an output ("23553") the reward looks for in the answers
    with nullcontext(warm) as worker:
        rows = worker.evaluate("tasks(variant)", module=HOST_HELPERS, names={"variant": "airline"})
        (row,) = [g for g in rows if g["task"] == "2"]
        calls = row["calls"]
        runs = driver.grade_in(worker, "airline", [
            {"task": "2", "calls": calls, "final": "gold", "trace": True},
            {"task": "2", "calls": calls, "trace": "final"},  # no final answer: the output is missing
            {"task": "2", "calls": [], "final": "gold", "trace": True},
            {"task": "2", "calls": calls[:1], "final": "gold", "trace": "final"},
        ])
    gold, silent, null, first = runs
    assert row["outputs"] == ["23553"] and {c["function"] for c in calls} == {"update_reservation_flights"}
    assert gold["verdict"] is True and silent["verdict"] is False and null["verdict"] is False
    assert gold["changed"] == [True] * len(calls)
    assert gold["start_digest"] != gold["digest"] == silent["digest"]
    assert null["changed"] == [] and null["start_digest"] == null["digest"]
    assert first["verdict"] is False and first["digest"] not in (gold["digest"], null["digest"])
    # where the task is written and what grades it: the task file's `Task(` line, Env.calculate_reward
    source, grader = row["source"], row["grader"]
    lines = Path(source["file"]).read_text(encoding="utf-8").splitlines()
    assert Path(source["file"]).name == "tasks_test.py" and lines[source["line"] - 1].strip() == "Task("
    static = PROFILE.task_enumerator()(taubench_checkout, variants=["airline"])
    assert source["line"] == next(t.line for t in static.tasks if t.id == "airline/2")
    assert grader["name"] == "Env.calculate_reward" and Path(grader["file"]).name == "base.py"
    base = (taubench_checkout / "tau_bench" / "envs" / "base.py").read_text(encoding="utf-8").splitlines()
    assert base[grader["line"] - 1].strip().startswith("def calculate_reward(")
    assert driver.audit_variants() == ["airline", "retail"]


def test_the_driver_grades_a_wrong_run_wrong_and_names_a_task_it_does_not_know(
    driver: TaubenchDriver, taubench_python: Path
) -> None:
    # airline task 1's gold run, as its task file writes it, and the same call of a reservation that is not
    cancel = {"function": "cancel_reservation", "args": {"reservation_id": "Z7GOZK"}}
    wrong = {"function": "cancel_reservation", "args": {"reservation_id": "NO_SUCH"}}
    answers = driver.grade(str(taubench_python), "airline",
                           [{"task": "1", "calls": [wrong]}, {"task": "1", "calls": [cancel]},
                            {"task": "500", "calls": []}])
    assert [a["verdict"] for a in answers] == [False, True, None]
    assert answers[0]["errors"] and "Error" in answers[0]["errors"][0]
    assert answers[2]["errors"] == ["no task '500' in airline"]


def test_what_does_not_apply_says_so_in_one_line(driver: TaubenchDriver, taubench_checkout: Path) -> None:
    with pytest.raises(ValueError, match="no host adapter"):
        driver.worker_spec(sys.executable, "airline")
    with pytest.raises(ValueError, match="not an overlay"):
        driver.grade(sys.executable, "airline", [], pythonpath=taubench_checkout)
    assert driver.subjects(taubench_checkout) == []
    with pytest.raises(ValueError, match="needs its checkout first"):
        TaubenchDriver(PROFILE, SERVICES).ground_truth(sys.executable, "airline")


def test_validate_says_the_profile_has_nothing_to_mutate(taubench_checkout: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toollint.validate", "--benchmark", "taubench",
         "--package", str(taubench_checkout)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("no tool module to mutate (its profile hosts none yet)")


def test_a_checkout_that_does_not_import_is_one_line(tmp_path: Path) -> None:
    from toollint.profiles.api import GatewayError

    (tmp_path / "tau_bench" / "envs").mkdir(parents=True)
    (tmp_path / "tau_bench" / "__init__.py").write_text("import no_such_module_here\n", encoding="utf-8")
    (tmp_path / "tau_bench" / "envs" / "base.py").write_text("", encoding="utf-8")
    driver = TaubenchDriver(PROFILE, SERVICES).for_package(tmp_path)
    with pytest.raises(GatewayError) as info:
        driver.ground_truth(sys.executable, "airline")
    assert str(info.value) == (f"tau-bench from {tmp_path.resolve()} does not import: "
                               "ModuleNotFoundError: No module named 'no_such_module_here'")
    with pytest.raises(ValueError, match="^cannot list tau-bench's registered tools with .*_module_here'$"):
        driver.registered_tools(sys.executable)
