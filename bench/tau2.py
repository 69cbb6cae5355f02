"""The paper's tau2-bench figures, reproduced by toollint alone, each printed beside the paper's.

    python bench/tau2.py                 # everything: exposure, gold replay, constructed paths (all tasks)
    python bench/tau2.py --sample 20     # the same on 20 telecom tasks calling refuel_data, 20 others,
                                         # 20 airline
    python bench/tau2.py --trace-only    # the exposure figures only (about a second)
    python bench/tau2.py --json out.json

The snapshot is `TOOLLINT_TAU2` or the pinned shared copy (tau2-bench c3398666); tau2's dependencies
live in a cached venv (`bench/_corpora.py`, shared with the tests). Nothing is written into the
snapshot: the one-hunk fixes go to an overlay copy of its `tau2` package.

Exposure is the tracer on the checkout (`toollint.profiles.tau2.tasks`). Gold replay and constructed
paths run each path twice, with the published tool and with its one-hunk fix, through tau2's own
environment (`get_response` for every call, agent's and user's) and graded by tau2's own evaluator
(`evaluate_simulation(..., ALL)`), with the violated contract clause, evaluated on the watched call,
reported beside the reward as an independent predicate (`toollint.validate.paths`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpora import Unavailable, ensure_tau2_venv, tau2_root
from toollint.contracts.loader import load_contract

from toollint.console import Console
from toollint.profiles.tau2 import PROFILE
from toollint.profiles.tau2.tasks import tasks as tau2_tasks
from toollint.profiles.tau2.validation import (
    CANCEL,
    FIXES,
    REFUEL,
    cancel_rows,
    gold_rows,
    refuel_rows,
)
from toollint.trace.ledger import Ledger, defect_from_clause, tool_writes, trace
from toollint.trace.readsites import ModuleCache
from toollint.trace.tasks import TaskSet
from toollint.validate.drivers import driver_for
from toollint.validate.paths import PathRow, TwoArmRun, run_two_arms, to_text

CONTRACTS = PROFILE.contracts_dir or Path()
REFUEL_CONTRACT = CONTRACTS / "telecom" / "refuel_data.yaml"
CANCEL_CONTRACT = CONTRACTS / "airline" / "cancel_reservation.yaml"


def exposure(checkout: Path) -> tuple[dict[str, Any], TaskSet]:
    """The tracer's figures: refuel_data and cancel_reservation over every domain's tasks."""
    start = time.perf_counter()
    tasks = tau2_tasks(checkout)
    out: dict[str, Any] = {}
    domain = {t.id: t.suite for t in tasks.tasks}
    for name, contract_file, clause in (("refuel_data", REFUEL_CONTRACT, "pre.line_active"),
                                        ("cancel_reservation", CANCEL_CONTRACT, "eff.seats_released")):
        contract = load_contract(contract_file)
        writes = tool_writes(checkout / "src" / "tau2" / contract.source.file, contract.qualname)
        defect = defect_from_clause(f"{name}:{clause}", contract.tool, contract.clause(clause),
                                    writes.canonical(tasks, contract.tool), contract.clauses_of("eff"))
        ledger: Ledger = trace([defect], tasks, ModuleCache())
        home = str(contract.adapter.get("domain"))
        out[name] = {**ledger.totals(defect.id), "fields": list(defect.fields),
                     "cross_domain": sum(domain[r.task] != home for r in ledger.rows),
                     "read_sites": sorted({r.read_site for r in ledger.rows})}
    out["seconds"] = round(time.perf_counter() - start, 2)
    return out, tasks


def paths(python: str, checkout: Path, sample: int | None) -> TwoArmRun:
    driver = driver_for("tau2").for_package(checkout)
    refuel = load_contract(REFUEL_CONTRACT).clause("pre.line_active")
    cancel = load_contract(CANCEL_CONTRACT).clause("eff.seats_released")
    assert refuel is not None and cancel is not None
    found = driver.ground_truths(python, ["telecom", "airline"])
    telecom, airline = found["telecom"], found["airline"]
    if sample:  # the first N telecom tasks whose gold path calls refuel_data and the first N others
        calling = [t for t in telecom if any(c["function"] == "refuel_data" for c in t["calls"])]
        ids = {t["task"] for t in calling}
        telecom = calling[:sample] + [t for t in telecom if t["task"] not in ids][:sample]
        airline = airline[:sample]
    groups = [gold_rows(telecom, "telecom", "refuel_data", refuel), refuel_rows(telecom, refuel),
              gold_rows(airline, "airline", "cancel_reservation", cancel), cancel_rows(airline, cancel)]
    rows: list[PathRow] = [row for group in groups for row in group]
    progress = Console().progress("tau2 paths")
    try:
        return run_two_arms(driver, python, rows, [FIXES[REFUEL], FIXES[CANCEL]], driver._layout().package,
                            progress=progress if progress.enabled else None)
    finally:
        progress.done()


def _line(figure: str, toollint: str, paper: str) -> str:
    return f"{figure:72} {toollint:>22} {paper:>22}"


def report(expo: dict[str, Any], run: TwoArmRun | None, sample: int | None) -> list[str]:
    r, c = expo["refuel_data"], expo["cancel_reservation"]
    lines = [_line("figure", "toollint", "paper"), _line("-" * 72, "-" * 22, "-" * 22),
             _line(f"telecom refuel_data, {r['traced']} tasks: exposed = exact_field + collection_only",
                   f"{r['exposed']:,} = {r['exact_field']:,} + {r['collection_only']}", "1,135 = 1,120 + 15"),
             _line(f"airline cancel_reservation, {c['traced']} tasks: whole_state_hash",
                   f"{c['whole_state_hash']}", "50"),
             _line("cross-domain exposure (both defects)", f"{r['cross_domain'] + c['cross_domain']}", "0")]
    if run is not None:
        gold = run.figures("gold", "refuel_data")
        c1, c2, f3 = run.figures("C1", "refuel_data"), run.figures("C2", "refuel_data"), run.figures(
            "F3", "cancel_reservation")
        of = f" (first {sample} tasks)" if sample else ""
        lines += [
            _line(
                (
                    "gold-action tasks calling refuel_data / reaching its trigger "
                    f"(of {gold.rows:,} replayed){of}"
                ),
                f"{gold.called:,} / {gold.reached}",
                "1,120 / 0",
            ),
            _line(
                "  gold paths rewarded by tau2's evaluator, published / fixed",
                f"{gold.rewarded_published:,} / {gold.rewarded_fixed:,}",
                "-",
            ),
            _line("  gold paths whose verdict changes with the fix", f"{gold.verdict_changes}", "-"),
            _line(
                f"C2, published grader, unpatched / patched rewarded (of {c2.rows:,})",
                f"{c2.rewarded_published:,} / {c2.rewarded_fixed}",
                "1,120 / 0 of 1,120",
            ),
            _line(
                "C1 verdict changes / failing both arms",
                f"{c1.verdict_changes} / {c1.fails_both}",
                "312 / 808",
            ),
            _line(
                (
                    f"F3 constructed ({f3.built} of {f3.rows} built): "
                    "verdict changes (whole-DB hash fails both arms)"
                ),
                f"{f3.verdict_changes} ({f3.fails_both} fail both)",
                "0",
            ),
            _line(
                "F3 independent predicate (eff.seats_released) separates the arms",
                f"{f3.predicate_separates} of {f3.built}",
                "separates them",
            ),
            _line(
                "C1/C2 independent predicate (pre.line_active) separates the arms",
                f"{c1.predicate_separates + c2.predicate_separates} of {c1.rows + c2.rows}",
                "-",
            ),
        ]
        gold_cancel = run.figures("gold", "cancel_reservation")
        lines.append(_line(f"airline gold tasks calling cancel_reservation / reaching eff.seats_released "
                           f"(of {gold_cancel.rows})", f"{gold_cancel.called} / {gold_cancel.reached}", "-"))
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--sample",
        type=int,
        default=None,
        help="paths on the first N telecom tasks calling refuel_data, N others and N airline tasks",
    )
    p.add_argument("--trace-only", action="store_true", help="the exposure figures only")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    try:
        checkout = tau2_root()
        python = None if args.trace_only else str(ensure_tau2_venv())
    except Unavailable as exc:
        print(f"skipped: {exc}")
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"tau2-bench at {checkout}; load average {load:.2f} on {os.cpu_count()} cores")
    expo, _ = exposure(checkout)
    run = None if python is None else paths(python, checkout, args.sample)
    if run is not None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"(load average {load:.2f} at the end of the paths)")
    print("\n".join(report(expo, run, args.sample)))
    print(f"\nexposure: {expo['seconds']:.2f} s")
    if run is not None:
        print("\n" + to_text(run))
    if args.json:
        out: dict[str, Any] = {"exposure": expo}
        if run is not None:
            out["paths"] = run.to_json()
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
