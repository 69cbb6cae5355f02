"""How long `--confirm-all` takes over the bundled AgentDojo contract library, and how many clause rows it
leaves UNTESTABLE (targets: under 60 s on 2 cores, worker start-up paid once per suite plus one fresh
worker per suite for confirmation; under 10% UNTESTABLE).

    python bench/confirm.py [--python PATH] [--jobs N] [--repeat N] [--sandbox-overhead]

Without --python it uses (and on first use creates) the cached agentdojo 0.1.35 venv the tests use.
Prints wall time, probes, probes per second, the clause-row verdict counts and the untestable share,
per suite and in total, and the violations found. With --sandbox-overhead it also runs the same check
with predicates evaluated in toollint's own process (no hard limits) side by side, and prints what the
predicate sandbox (contracts/sandbox.py) costs: the wall-time ratio, round trips and evaluations.
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
from toollint.contracts import sandbox
from toollint.contracts.loader import bundled_library_dir, load_contracts
from toollint.contracts.predicate import PredicateTypeError
from toollint.dynamic.confirm import run_confirm

from toollint.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="interpreter of a venv with agentdojo 0.1.35")
    parser.add_argument("--jobs", type=int, default=0, help="suites checked side by side (0: one per CPU)")
    parser.add_argument("--repeat", type=int, default=1, help="runs to time (the best is reported too)")
    parser.add_argument("--sandbox-overhead", action="store_true",
                        help="also time the run with predicates evaluated in-process, and print the ratio")
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
    if args.sandbox_overhead:
        sandbox_overhead(contracts, settings, python, max(1, args.repeat))
    return 0


class InProcess:
    """What the checker did before the sandbox: every predicate in toollint's own process."""

    requests = evaluations = started = 0

    def evaluate_many(self, predicates, pre, post, args, result):  # type: ignore[no-untyped-def]
        out = []
        for p in predicates:
            try:
                out.append(p.evaluate(pre, post, args, result))
            except PredicateTypeError as exc:
                out.append(exc)
        self.requests += 1
        self.evaluations += len(out)
        return out

    def close(self) -> None:
        pass


def sandbox_overhead(contracts, settings, python, repeat):  # type: ignore[no-untyped-def]
    """The same --confirm-all, alternating sandboxed and in-process runs, best of `repeat` each."""
    walls: dict[str, list[float]] = {"sandbox": [], "in-process": []}
    counts: dict[str, tuple[int, int, int]] = {}
    for _ in range(repeat):
        for mode in ("sandbox", "in-process"):
            pool = sandbox.Sandbox() if mode == "sandbox" else InProcess()
            sandbox._DEFAULT[:] = [pool]
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                run_confirm(contracts, settings, python=python, witness_dir=Path(tmp) / "w")
                walls[mode].append(time.perf_counter() - start)
            counts[mode] = (pool.requests, pool.evaluations, pool.started)
            pool.close()
    sandbox._DEFAULT[:] = []
    best = {mode: min(w) for mode, w in walls.items()}
    requests, evaluations, started = counts["sandbox"]
    print(f"sandbox overhead (best of {repeat}): wall {best['sandbox']:.1f} s sandboxed vs "
          f"{best['in-process']:.1f} s in-process = {best['sandbox'] / best['in-process']:.2f}x; "
          f"{evaluations} evaluations in {requests} round trips, {started} sandbox worker(s) started")


if __name__ == "__main__":
    sys.exit(main())
