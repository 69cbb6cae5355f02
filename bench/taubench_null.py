"""tau-bench's do-nothing agent, counted by tau-bench's own reward code, beside the published figure.

    python bench/taubench_null.py                 # airline and retail, test split, every task
    python bench/taubench_null.py --sample 5      # the first 5 tasks of each domain
    python bench/taubench_null.py --witness-dir DIR --json out.json
    python bench/taubench_null.py --replay DIR/TL411-airline-12.json ...   # `toollint replay` each

The Agentic Benchmark Checklist reports that a do-nothing agent passes 38% of tau-bench's airline tasks:
the reward is a hash of the final database against the gold run's, so a task whose gold run writes
nothing and whose reward looks for no output passes for an agent that does nothing.

Everything runs through the tau-bench profile's driver (`toollint.profiles.taubench.validation`), in a
venv holding only tau-bench's dependencies (`bench/_corpora.py`, shared with the tests) with the pinned
checkout (`TOOLLINT_TAUBENCH`, else shared/corpus/tau-bench @ 59a200c6) on its path:

1. null run: each task graded with no call at all (`grade` with `calls: []`): `Env.reset(i)`, then
   `Env.calculate_reward()` on the untouched database, as when the user ends the conversation at once;
2. cross-check, not by the reward code: the tasks whose gold actions, run through the tools' own
   `invoke` on a fresh database, change nothing, and that list no outputs: the tasks a null run should
   pass;
3. the grader audit, as a user runs it: `toollint audit-graders CHECKOUT --python PY --only null`, whose
   TL411 findings (do-nothing passes: the gold run changes nothing, the null run passes) must be the
   tasks of 1. (the count printed is the finding count);
4. witnesses: each finding's sealed witness (under `--witness-dir`) replayed with `toollint replay`
   (exit 1: the do-nothing run still passes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpora import Unavailable, ensure_taubench_venv, taubench_root
from toollint.dynamic.protocol import SERVICES

from toollint.profiles import get_profile
from toollint.profiles.taubench.validation import HOST_HELPERS, TaubenchDriver

DOMAINS = ("airline", "retail")
PUBLISHED = {"airline": 0.38}  # the Agentic Benchmark Checklist's do-nothing agent, airline


def audit(driver: TaubenchDriver, python: str, sample: int | None) -> dict[str, dict[str, Any]]:
    """Per domain: the tasks, the null run's verdicts, and the cross-check's expectation."""
    out: dict[str, dict[str, Any]] = {}
    with driver.interpreter(python) as worker:
        for domain in DOMAINS:
            started = time.perf_counter()
            gold = driver_tasks(worker, domain)[: sample or None]
            null = driver.grade_in(worker, domain, [{"task": g["task"], "calls": []} for g in gold])
            graded = time.perf_counter() - started
            effects = worker.evaluate("gold_effects(variant, indices)", module=HOST_HELPERS,
                                      names={"variant": domain, "indices": [int(g["task"]) for g in gold]})
            out[domain] = {
                "tasks": len(gold),
                "passed": [r["task"] for r in null if r["verdict"]],
                "expected": [e["task"] for e in effects if not e["writes"] and not e["outputs"]],
                "errors": [r["task"] for r in null if r["verdict"] is None],
                "seconds": round(graded, 1),
            }
    return out


def driver_tasks(worker: Any, domain: str) -> list[dict[str, Any]]:
    return list(worker.evaluate("tasks(variant)", module=HOST_HELPERS, names={"variant": domain}))


def toollint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toollint", *args], capture_output=True, text=True,
                          check=False, timeout=3600)


def audit_findings(checkout: Path, python: str, tasks: dict[str, list[str]],
                   witness_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """`toollint audit-graders --only null` on the same tasks: domain -> its TL411 findings."""
    found = witness_dir / "findings.json"
    out: dict[str, list[dict[str, Any]]] = {}
    for domain, ids in tasks.items():
        args = ["audit-graders", str(checkout), "--python", python, "--variant", domain, "--only", "null",
                "--output-format", "json", "-o", str(found), "--witness-dir", str(witness_dir), "-q"]
        run = toollint(*args, *(a for t in ids for a in ("--task", t)))
        if run.returncode not in (0, 1):
            raise SystemExit(f"toollint audit-graders failed (exit {run.returncode}): {run.stderr.strip()}")
        findings = json.loads(found.read_text(encoding="utf-8"))
        out[domain] = sorted((f for f in findings if f["code"] == "TL411"),
                             key=lambda f: int(f["properties"]["task"]))
    return out


def replay_files(files: list[Path]) -> int:
    """`toollint replay` of each witness; 0 when every one still passes (its exit 1)."""
    held = 0
    for f in files:
        run = toollint("replay", str(f))
        held += run.returncode == 1
        print(f"{f.name}: {(run.stdout.strip() or run.stderr.strip())[:160]}")
    print(f"{held} of {len(files)} witness(es) replayed with `toollint replay`: "
          "the do-nothing run still passes")
    return 0 if held == len(files) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="the first N tasks of each domain (default: all)")
    parser.add_argument("--python",
                        help="an interpreter with tau-bench's dependencies (default: the cached venv)")
    parser.add_argument("--witness-dir", type=Path,
                        help="where the audit writes each finding's witness (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--replay", type=Path, nargs="+", metavar="WITNESS",
                        help="`toollint replay` each witness, and nothing else")
    args = parser.parse_args()
    if args.replay:
        return replay_files(args.replay)
    try:
        checkout = taubench_root()
        python = args.python or str(ensure_taubench_venv())
    except Unavailable as exc:
        print(f"skipped: {exc}")
        return 0
    driver = TaubenchDriver(get_profile("taubench"), SERVICES).for_package(checkout)
    started = time.perf_counter()
    figures = audit(driver, python, args.sample)
    with tempfile.TemporaryDirectory() as scratch:
        witness_dir = (args.witness_dir or Path(scratch)).resolve()
        ids = {d: [str(i) for i in range(f["tasks"])] if args.sample else [] for d, f in figures.items()}
        found = audit_findings(checkout, python, ids, witness_dir)
        held: dict[str, list[str]] = {}
        for domain, findings in found.items():
            held[domain] = [f["properties"]["task"] for f in findings
                            if toollint("replay", f["properties"]["witness"]).returncode == 1]
    wall = time.perf_counter() - started
    split = "test split" + (f", first {args.sample} tasks" if args.sample else "")
    print(f"tau-bench @ {checkout} ({split}): a do-nothing agent, graded by Env.calculate_reward")
    print(f"{'domain':<8} {'tasks':>5} {'passed':>6} {'share':>6} {'published':>9} {'cross-check':>11} "
          f"{'TL411':>5} {'replayed':>8} {'grade s':>7}")
    total_tasks = total_passed = 0
    for domain, fig in figures.items():
        passed = len(fig["passed"])
        total_tasks += fig["tasks"]
        total_passed += passed
        published = f"{PUBLISHED[domain]:.0%}" if domain in PUBLISHED else "-"
        agrees = "agrees" if fig["passed"] == fig["expected"] else "DIFFERS"
        share = passed / max(fig["tasks"], 1)
        tl411 = [f["properties"]["task"] for f in found[domain]]
        fig["tl411"] = tl411
        print(f"{domain:<8} {fig['tasks']:>5} {passed:>6} {share:>6.1%} {published:>9} "
              f"{agrees:>11} {len(tl411):>5} {len(held[domain]):>4}/{len(tl411):<3} {fig['seconds']:>7.1f}")
        print(f"         passing tasks: {', '.join(fig['passed']) or 'none'}")
        if fig["passed"] != fig["expected"]:
            print(f"         cross-check expected: {', '.join(fig['expected']) or 'none'}")
        if tl411 != fig["passed"]:
            print(f"         toollint audit-graders' TL411 tasks DIFFER: {', '.join(tl411) or 'none'}")
        if fig["errors"]:
            print(f"         not graded: {', '.join(fig['errors'])}")
    print(f"{'both':<8} {total_tasks:>5} {total_passed:>6} {total_passed / max(total_tasks, 1):>6.1%}")
    same = all(f["tl411"] == f["passed"] for f in figures.values())
    print(f"the passing count {'is' if same else 'is NOT'} `toollint audit-graders --only null`'s TL411 "
          "finding count (do-nothing passes), task for task; replayed: each witness by `toollint replay`")
    print(f"wall: {wall:.0f} s (import, null runs, cross-check, the audit, witness replays)")
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "replayed": held, "published": PUBLISHED,
                                         "wall_s": round(wall, 1)}, indent=1) + "\n", encoding="utf-8")
    ok = same and all(f["passed"] == f["expected"] and len(held[d]) == len(f["passed"])
                      for d, f in figures.items())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
