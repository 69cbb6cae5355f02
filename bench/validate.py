"""Full run of the mutation arm and the negative controls; prints the tables the closing note quotes.

    python bench/validate.py                       # minibank (static + dynamic), AgentDojo static, all mutants
    python bench/validate.py --agentdojo-budget 8  # plus AgentDojo dynamic, 8 mutants per tool module
    python bench/validate.py --agentdojo-budget 0  # plus AgentDojo dynamic on every mutant (about an hour)
    python bench/validate.py --gold-replay         # plus arm 3: AgentDojo's gold paths vs confirmed defects
    python bench/validate.py --constructed         # plus arm 4: constructed paths for AgentDojo's falsy defects
    python bench/validate.py --json out.json

AgentDojo runs in its own cached venv (bench/_corpora.py, shared with the tests); each AgentDojo mutant
costs a host start (about 3 s) plus a confirmation worker, so the dynamic arm there is budgeted.
"""

from __future__ import annotations

import argparse
import json
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--agentdojo-budget", type=int, default=None,
                   help="run AgentDojo's dynamic arm with this many mutants per module (0: all)")
    p.add_argument("--gold-replay", action="store_true", help="also replay AgentDojo's ground-truth calls")
    p.add_argument("--constructed", action="store_true", help="also run constructed paths (AgentDojo banking)")
    p.add_argument("--skip-mutation", action="store_true", help="skip the mutation arm")
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
            f"AgentDojo v1 tool modules, static + dynamic, {budget or 'all'} mutants per module (seed {args.seed})",
            run(driver.subjects(src, str(python), registered=registered), seed=args.seed, budget=budget,
                dynamic=True))
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
