"""Gold replay and constructed paths on the pinned tau2-bench snapshot, through the tau2 profile's
validation driver: every path runs twice (the published tool, its one-hunk fix in an overlay copy),
through tau2's own environment, graded by tau2's own evaluator, with the violated clause evaluated on
the watched call beside it (the independent predicate). The paper's figures:

| figure | paper |
|---|---|
| gold-action tasks calling `refuel_data` / reaching its trigger | 1,120 / 0 |
| C2, published grader, unpatched / patched rewarded | 1,120 / 0 of 1,120 |
| C1 verdict changes / failing both arms | 312 / 808 |
| F3 constructed: verdict changes (the whole-DB hash fails both arms) | 0 |
| F3 constructed: independent predicate | separates them |

(F3 is built on 49 of the 50 airline tasks: task 23's gold path already makes the three bookings
`book_reservation` allows.)

The full run (4,625 rows x 2 arms: every task's gold path, C1, C2, F3; several minutes) is `slow`;
the default run takes the first tasks calling refuel_data and as many that do not, where the same
properties must hold row by row.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toollint.contracts.loader import load_contract

from toollint.profiles.tau2 import PROFILE
from toollint.profiles.tau2.validation import (
    CANCEL,
    FIXES,
    REFUEL,
    Tau2Driver,
    cancel_rows,
    gold_rows,
    refuel_rows,
)
from toollint.validate.drivers import driver_for
from toollint.validate.paths import Fix, FixError, PathRow, TwoArmRun, run_two_arms

CONTRACTS = PROFILE.contracts_dir or Path()
REFUEL_CLAUSE = load_contract(CONTRACTS / "telecom" / "refuel_data.yaml").clause("pre.line_active")
CANCEL_CLAUSE = load_contract(CONTRACTS / "airline" / "cancel_reservation.yaml").clause("eff.seats_released")
SAMPLE = 4  # tasks calling each tool, in the default run


@pytest.fixture(scope="module")
def driver(tau2_checkout: Path) -> Tau2Driver:
    return driver_for("tau2").for_package(tau2_checkout)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def ground_truth(driver: Tau2Driver, tau2_python: Path) -> dict[str, list[dict]]:
    return driver.ground_truths(str(tau2_python), ["telecom", "airline"])


def _rows(ground_truth: dict[str, list[dict]], sample: int | None) -> list[PathRow]:
    """Every task's gold path (or, sampled, the first tasks calling refuel_data and as many that do
    not), C1 and C2 on those calling it, F3 on the airline tasks, gold airline paths in full runs."""
    assert REFUEL_CLAUSE is not None and CANCEL_CLAUSE is not None
    telecom, airline = ground_truth["telecom"], ground_truth["airline"]
    calling = [t for t in telecom if any(c["function"] == "refuel_data" for c in t["calls"])]
    if sample:
        ids = {t["task"] for t in calling}
        telecom = calling[:sample] + [t for t in telecom if t["task"] not in ids][:sample]
    groups = [
        gold_rows(telecom, "telecom", "refuel_data", REFUEL_CLAUSE),
        refuel_rows(telecom, REFUEL_CLAUSE),
        cancel_rows(airline, CANCEL_CLAUSE)[:sample],
    ]
    if not sample:
        groups.append(gold_rows(airline, "airline", "cancel_reservation", CANCEL_CLAUSE))
    return [row for group in groups for row in group]


def _run(driver: Tau2Driver, python: Path, rows: list[PathRow]) -> TwoArmRun:
    layout = driver._layout()
    return run_two_arms(driver, str(python), rows, [FIXES[REFUEL], FIXES[CANCEL]], layout.package)


@pytest.fixture(scope="module")
def sample_run(driver: Tau2Driver, tau2_python: Path, ground_truth: dict[str, list[dict]]) -> TwoArmRun:
    return _run(driver, tau2_python, _rows(ground_truth, SAMPLE))


def test_the_profile_has_a_validation_driver(tau2_checkout: Path) -> None:
    found = driver_for("tau2")
    assert found.check_package(tau2_checkout) is None
    assert found.check_package(Path("/nonexistent")) == (
        "/nonexistent: not a tau2-bench checkout (no src/tau2/domains) or tau2 package (no domains/)")


def test_the_fixes_apply_to_the_pinned_sources_once_each(driver: Tau2Driver, tmp_path: Path) -> None:
    package = driver._layout().package
    for fix in FIXES.values():
        fixed = fix.fixed_source(package)
        assert fixed != (package / fix.file).read_text() and fix.new in fixed
    with pytest.raises(FixError, match="refusing to patch the benchmark itself"):
        FIXES[REFUEL].apply(package, package)
    bad = Fix(REFUEL, "domains/telecom/tools.py", "no such line\n", "x\n")
    with pytest.raises(FixError, match="expects its hunk exactly once, found it 0 times"):
        bad.fixed_source(package)


def test_every_task_calling_refuel_data_gets_a_gold_and_two_constructed_rows(ground_truth: dict) -> None:
    rows = _rows(ground_truth, None)
    counts = {kind: sum(r.kind == kind for r in rows) for kind in ("gold", "C1", "C2", "F3")}
    # the gold replay is every task's (2,285 telecom, 50 airline): which call refuel_data, the run finds
    assert counts == {"gold": 2285 + 50, "C1": 1120, "C2": 1120, "F3": 50}
    assert (
        sum(
            any(c.get("_watch") for c in r.calls) for r in rows if r.kind == "gold" and r.variant == "telecom"
        )
        == 1120
    )
    c1 = next(r for r in rows if r.kind == "C1")
    at = next(i for i, c in enumerate(c1.calls) if c.get("_watch"))
    assert c1.calls[at - 1]["function"] == "suspend_line" and c1.calls[at]["function"] == "refuel_data"
    c2 = next(r for r in rows if r.kind == "C2" and r.task == c1.task)
    assert c2.calls[at + 1]["function"] == "resume_line" and len(c2.calls) == len(c1.calls) + 1
    f3 = next(r for r in rows if r.kind == "F3")
    assert [c["function"] for c in f3.calls[-2:]] == ["book_reservation", "cancel_reservation"]


def test_sample_gold_paths_never_reach_the_trigger_and_the_fix_changes_no_verdict(
    sample_run: TwoArmRun,
) -> None:
    gold = sample_run.figures("gold", "refuel_data")
    assert gold.rows == 2 * SAMPLE and gold.called == SAMPLE  # the replay sees which tasks call it
    assert gold.reached == 0 and gold.verdict_changes == 0 and gold.errors == 0
    assert gold.rewarded_published == gold.rewarded_fixed == 2 * SAMPLE  # the gold paths pass, both arms


def test_sample_c2_is_rewarded_unpatched_and_failed_patched(sample_run: TwoArmRun) -> None:
    c2 = sample_run.figures("C2", "refuel_data")
    assert (c2.rows, c2.rewarded_published, c2.rewarded_fixed) == (SAMPLE, SAMPLE, 0)
    assert (
        c2.reached == SAMPLE and c2.predicate_separates == SAMPLE
    )  # refuel on a Suspended line, refused when fixed
    assert c2.errors == 0  # only the watched refuel fails, and only when fixed


def test_sample_c1_either_changes_its_verdict_or_fails_both_arms(sample_run: TwoArmRun) -> None:
    c1 = sample_run.figures("C1", "refuel_data")
    assert c1.rows == SAMPLE and c1.verdict_changes + c1.fails_both == SAMPLE
    assert c1.rewarded_fixed == 0 and c1.predicate_separates == SAMPLE


def test_sample_f3_the_db_hash_fails_both_arms_the_predicate_separates_them(sample_run: TwoArmRun) -> None:
    f3 = sample_run.figures("F3", "cancel_reservation")
    assert f3.rows == SAMPLE and f3.errors == 0
    assert f3.verdict_changes == 0 and f3.fails_both == SAMPLE
    assert f3.predicate_separates == SAMPLE
    assert f3.predicate_violated_published == SAMPLE and f3.predicate_violated_fixed == 0


@pytest.mark.slow
@pytest.mark.timeout(2400)  # about 4,600 paths x 2 arms: 7-10 minutes on 2 busy cores
def test_the_papers_figures_on_every_task(driver: Tau2Driver, tau2_python: Path, ground_truth: dict) -> None:
    run = _run(driver, tau2_python, _rows(ground_truth, None))
    gold, c1, c2, f3 = (run.figures("gold", "refuel_data"), run.figures("C1", "refuel_data"),
                        run.figures("C2", "refuel_data"), run.figures("F3", "cancel_reservation"))
    assert (gold.rows, gold.called, gold.reached, gold.verdict_changes, gold.errors) == (2285, 1120, 0, 0, 0)
    gold_cancel = run.figures("gold", "cancel_reservation")
    assert (gold_cancel.rows, gold_cancel.called, gold_cancel.verdict_changes) == (50, 7, 0)
    assert (c2.rows, c2.rewarded_published, c2.rewarded_fixed) == (1120, 1120, 0)
    assert (c1.verdict_changes, c1.fails_both) == (312, 808)
    # Task 23's gold path makes three bookings already, book_reservation's limit ("Too many
    # reservations"): F3 cannot be built there, and is counted apart, not as a verdict.
    assert (f3.rows, f3.built, f3.verdict_changes, f3.fails_both, f3.predicate_separates) == (
        50,
        49,
        0,
        49,
        49,
    )
    assert (
        len(f3.not_built) == 1
        and f3.not_built[0].startswith("23: ")
        and "Too many reservations" in f3.not_built[0]
    )


def test_the_mutation_arm_runs_on_tau2s_tool_modules(driver: Tau2Driver, tau2_checkout: Path,
                                                     tau2_python: Path) -> None:
    """`suspend_line`'s "Line must be active to suspend" guard deleted: the dynamic half, hosted by the
    tau2 adapter on an overlay of the package (hosts forked from a warm interpreter), confirms the
    precondition breach; the negative controls of the module flag nothing."""
    from toollint.validate import report
    from toollint.validate.harness import run

    (subject,) = driver.subjects(tau2_checkout, str(tau2_python), ["telecom.tools"])
    assert subject.module_name == "tau2.domains.telecom.tools" and subject.host is not None
    result = run([subject], dynamic=True, operators=["drop-guard"], tools=["TelecomTools.suspend_line"])
    data = report.to_json(result)
    killed = [m for m in data["mutation"]["mutants"] if m["dynamic"] == "killed"]
    assert killed and all(m["function"] == "TelecomTools.suspend_line" for m in killed)
    assert any(v["clause"] == "pre.line_active" and v["code"] == "TL201" for m in killed
               for v in m["dynamic_violations"])
    assert data["controls"]["false_positives"] == []
    assert data["host_starts"]["forked"] > 0
