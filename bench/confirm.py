"""How long `--confirm-all` takes over the bundled AgentDojo contract library, and how many clause rows it
leaves UNTESTABLE (targets: under 60 s on 2 cores, worker start-up paid once per suite plus one fresh
worker per suite for confirmation; under 10% UNTESTABLE).

    python bench/confirm.py [--python PATH] [--jobs N] [--repeat N]

Without --python it uses (and on first use creates) the cached agentdojo 0.1.35 venv the tests use.
Prints wall time, probes, probes per second, the clause-row verdict counts and the untestable share,
per suite and in total, and the violations found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _corpora import ensure_agentdojo_venv
from toollint.contracts.loader import bundled_library_dir, load_contracts
from toollint.dynamic.confirm import run_confirm

from toollint.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="interpreter of a venv with agentdojo 0.1.35")
    parser.add_argument("--jobs", type=int, default=0, help="suites checked side by side (0: one per CPU)")
    parser.add_argument("--repeat", type=int, default=1, help="runs to time (the best is reported too)")
    args = parser.parse_args()
    python = args.python or str(ensure_agentdojo_venv())
    contracts, errors = load_contracts([bundled_library_dir() / "agentdojo"])
    for e in errors:
        print(f"contract error: {e}")
    settings = Settings(confirm={"jobs": args.jobs} if args.jobs else {})
    times = []
    for _ in range(max(1, args.repeat)):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            run = run_confirm(contracts, settings, python=python, witness_dir=Path(tmp) / "w")
            times.append(time.perf_counter() - start)
    wall = times[-1]
    print(f"contracts: {len(contracts)} tools in {len({r.hello.get('variant') for r in run.reports})} suites")
    by_suite: dict[str, Counter[str]] = {}
    for r in run.reports:
        c = by_suite.setdefault(str(r.hello.get("variant")), Counter())
        c["tools"] += 1
        c["probes"] += len(r.runs)
        for row in r.clause_rows:
            c[row.verdict] += 1
    for suite, c in sorted(by_suite.items()):
        rows = c["CONFORMS"] + c["VIOLATES"] + c["UNTESTABLE"] + c["FLAKY"]
        print(f"  {suite:22s} tools {c['tools']:3d}  probes {c['probes']:4d}  rows {rows:4d}  "
              f"conforms {c['CONFORMS']:4d}  violates {c['VIOLATES']:3d}  untestable {c['UNTESTABLE']:3d}  "
              f"flaky {c['FLAKY']:2d}")
    counts = run.counts()
    rows = sum(counts.values())
    share = counts["UNTESTABLE"] / rows if rows else 0.0
    print(f"wall time: {wall:.1f} s (target < 60 s)" + (f"; best of {len(times)}: {min(times):.1f} s"
                                                         if len(times) > 1 else ""))
    probing = sum(r.elapsed_s for r in run.reports)
    print(f"worker start-ups: {len(run.startup_s)} taking {sum(run.startup_s):.1f} s in all "
          f"(max {max(run.startup_s, default=0):.1f} s; suites run side by side)")
    print(f"probes: {run.probes} ({run.probes / wall:.1f} probes/s over the wall time; "
          f"{run.probes / probing if probing else 0:.0f} probes/s in warm workers, {probing:.1f} s)")
    print(f"clause rows: {rows}  CONFORMS {counts['CONFORMS']}  VIOLATES {counts['VIOLATES']}  "
          f"UNTESTABLE {counts['UNTESTABLE']}  FLAKY {counts['FLAKY']}")
    print(f"UNTESTABLE share: {share:.1%} (target < 10%)")
    untestable = [(r.tool, row.clause_id, row.reason) for r in run.reports for row in r.clause_rows
                  if row.verdict == "UNTESTABLE"]
    for tool, clause, reason in untestable:
        print(f"  untestable: {tool} {clause} ({reason})")
    print(f"violations ({len(run.findings)}):")
    for f in run.findings:
        print(f"  {f.code} {f.tool} {f.properties['clause']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
