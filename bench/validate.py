"""Full run of the mutation arm and the negative controls; prints the tables the closing note quotes.

    python bench/validate.py                       # minibank (static + dynamic), AgentDojo static,
                                                   # all mutants
    python bench/validate.py --agentdojo-budget 8  # plus AgentDojo dynamic, 8 mutants per tool module
    python bench/validate.py --agentdojo-budget 0  # plus AgentDojo dynamic on every mutant
                                                   # (minutes; --jobs N)
    python bench/validate.py --gold-replay         # plus arm 3: AgentDojo's gold paths vs confirmed defects
    python bench/validate.py --constructed         # plus arm 4: constructed paths for AgentDojo's
                                                   # falsy defects
    python bench/validate.py --warm-vs-cold 8      # the same 8 AgentDojo mutants with warm hosts, then cold
    python bench/validate.py --tau2-budget 0       # plus tau2-bench's tool modules, static + dynamic,
                                                   # all mutants
    python bench/validate.py --json out.json

AgentDojo runs in its own cached venv (bench/_corpora.py, shared with the tests), tau2-bench's
dependencies in another (with the pinned snapshot's source). Hosts are forked from a warm,
pre-imported interpreter (`toollint.dynamic.forkserver`) unless `--cold`; `--warm-vs-cold N` times
one sample both ways, side by side in one run, and prints the ratio (the machine is shared: quote
ratios, not seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _corpora import ensure_agentdojo_venv, package_dir
from toollint.contracts.loader import load_contracts

from toollint.profiles import get_profile
from toollint.validate import constructed, replay, report
from toollint.validate.drivers import driver_for
from toollint.validate.harness import ValidationRun, run
from toollint.validate.subjects import minibank_subject

MINIBANK = HERE.parent / "tests" / "fixtures" / "mutation" / "minibank"


def _section(title: str, result: ValidationRun) -> dict[str, object]:
    print(f"\n=== {title} ===")
    print(report.to_text(result, survivors=True))
    return report.to_json(result)


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def warm_vs_cold(driver: object, src: Path, python: str, registered: frozenset[str], n: int,
                 seed: int) -> dict[str, object]:
    """The same mutants of one module, warm hosts then cold, back to back; outcomes must agree."""
    subjects = driver.subjects(src, python, ["banking_client"], registered)  # type: ignore[attr-defined]
    timings: dict[str, float] = {}
    outcomes = {}
    for mode in ("warm", "cold"):
        result = run(subjects, seed=seed, budget=n, dynamic=True, warm=mode == "warm")
        timings[mode] = result.elapsed_s
        data = report.to_json(result)
        outcomes[mode] = [(m["id"], m["killed"], m["dynamic"]) for m in data["mutation"]["mutants"]]
        print(
            f"{mode}: {len(result.mutants)} mutants in {result.elapsed_s:.1f} s "
            f"({len(result.mutants) / result.elapsed_s:.2f} mutants/s), load {_load():.1f}, "
            f"hosts {result.host_starts}"
        )
    same = outcomes["warm"] == outcomes["cold"]
    print(
        f"warm/cold wall time: {timings['warm'] / timings['cold']:.2f} "
        f"(cold is {timings['cold'] / timings['warm']:.1f}x "
        f"slower); outcomes identical: {same}"
    )
    return {"seconds": timings, "same_outcomes": same}


def tau2_arm(budget: int | None, seed: int, cold: bool, jobs: int = 1) -> dict[str, object]:
    """The mutation arm and negative controls on tau2-bench's tool modules (the pinned snapshot)."""
    from _corpora import Unavailable, ensure_tau2_venv, tau2_root

    try:
        checkout, python = tau2_root(), ensure_tau2_venv()
    except Unavailable as exc:
        print(f"tau2: skipped: {exc}")
        return {"skipped": str(exc)}
    tau2 = driver_for("tau2").for_package(checkout)  # type: ignore[attr-defined]
    registered = tau2.registered_tools(str(python))
    result = run(tau2.subjects(checkout, str(python), registered=registered), seed=seed, budget=budget,
                 dynamic=True, warm=not cold, jobs=jobs)
    return _section(
        f"tau2-bench tool modules, static + dynamic, {budget or 'all'} mutants per module (seed {seed}, "
        f"{jobs} job(s), load {_load():.1f})",
        result,
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--agentdojo-budget", type=int, default=None,
                   help="run AgentDojo's dynamic arm with this many mutants per module (0: all)")
    p.add_argument("--gold-replay", action="store_true", help="also replay AgentDojo's ground-truth calls")
    p.add_argument(
        "--constructed", action="store_true", help="also run constructed paths (AgentDojo banking)"
    )
    p.add_argument("--skip-mutation", action="store_true", help="skip the mutation arm")
    p.add_argument("--cold", action="store_true", help="start every host afresh (no fork server)")
    p.add_argument("--warm-vs-cold", type=int, default=None, metavar="N",
                   help="time N AgentDojo banking_client mutants with warm hosts, then cold")
    p.add_argument("--tau2-budget", type=int, default=None,
                   help="also run tau2-bench's tool modules, static + dynamic, N mutants per module (0: all)")
    p.add_argument("--jobs", type=int, default=2, metavar="N",
                   help="tool modules whose dynamic halves run at once (default 2, the cores of the target)")
    p.add_argument("--json", type=Path)
    args = p.parse_args()

    start = time.perf_counter()
    python = ensure_agentdojo_venv()
    profile = get_profile("agentdojo")
    driver = driver_for(profile.name)
    src = package_dir(python, str(profile.package))
    registered = driver.registered_tools(str(python))
    out: dict[str, object] = {}
    if not args.skip_mutation:
        out["minibank"] = _section("minibank, every mutant, static + dynamic",
                                   run([minibank_subject(MINIBANK)], seed=args.seed, dynamic=True))
        out["agentdojo_static"] = _section("AgentDojo v1 tool modules, every mutant, static half",
                                           run(driver.subjects(src, registered=registered), seed=args.seed))
    if args.agentdojo_budget is not None and not args.skip_mutation:
        budget = args.agentdojo_budget or None
        out["agentdojo_dynamic"] = _section(
            f"AgentDojo v1 tool modules, static + dynamic, {budget or 'all'} mutants per module "
            f"(seed {args.seed}, "
            f"{'cold' if args.cold else 'warm'} hosts, {args.jobs} job(s), load {_load():.1f})",
            run(
                driver.subjects(src, str(python), registered=registered),
                seed=args.seed,
                budget=budget,
                dynamic=True,
                warm=not args.cold,
                jobs=args.jobs,
            ),
        )
    if args.warm_vs_cold:
        out["warm_vs_cold"] = warm_vs_cold(driver, src, str(python), registered, args.warm_vs_cold, args.seed)
    if args.tau2_budget is not None:
        out["tau2"] = tau2_arm(args.tau2_budget or None, args.seed, args.cold, args.jobs)
    if args.gold_replay:
        contracts, _ = load_contracts([profile.contracts_dir] if profile.contracts_dir else [])
        replay_start = time.perf_counter()
        results = replay.gold_replay(driver, python, contracts)
        print("\n=== Gold replay (arm 3) ===")
        print(replay.to_text(results))
        print(f"{time.perf_counter() - replay_start:.1f} s")
        out["gold_replay"] = replay.to_json(results)
    if args.constructed:
        arm_start = time.perf_counter()
        print("\n=== Constructed paths (arm 4) ===")
        built: list[dict[str, object]] = []
        for module, suite in driver.constructed_modules:
            paths = constructed.constructed_paths(driver, str(python), src, module, suite)
            print(constructed.to_text(paths))
            built.extend(p.to_json() for p in paths)
        print(f"{time.perf_counter() - arm_start:.1f} s")
        out["constructed_paths"] = built
    print(f"\ntotal wall time {time.perf_counter() - start:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
