"""tau-bench's do-nothing agent, counted by tau-bench's own reward code, beside the published figure.

    python bench/taubench_null.py                 # airline and retail, test split, every task
    python bench/taubench_null.py --sample 5      # the first 5 tasks of each domain
    python bench/taubench_null.py --witness-dir DIR --json out.json
    python bench/taubench_null.py --replay DIR/airline-12.json ...   # re-grade written witnesses

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
3. witnesses: each passing task's witness (`{"variant", "task", "calls": []}`, written to
   `--witness-dir`) graded again in a fresh interpreter: it replays when the verdict is the same.
"""

from __future__ import annotations

import argparse
import json
import sys
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


def replay(driver: TaubenchDriver, python: str, figures: dict[str, dict[str, Any]],
           witness_dir: Path | None) -> dict[str, list[str]]:
    """Each passing task's witness graded again in a fresh interpreter: the tasks whose verdict held."""
    held: dict[str, list[str]] = {}
    for domain, fig in figures.items():
        witnesses = [{"benchmark": "taubench", "variant": domain, "task": t, "calls": []}
                     for t in fig["passed"]]
        if witness_dir is not None:
            witness_dir.mkdir(parents=True, exist_ok=True)
            for w in witnesses:
                (witness_dir / f"{domain}-{w['task']}.json").write_text(json.dumps(w, indent=1) + "\n",
                                                                        encoding="utf-8")
        answers = driver.grade(python, domain, witnesses) if witnesses else []
        held[domain] = [w["task"] for w, a in zip(witnesses, answers) if a["verdict"] is True]
    return held


def replay_files(driver: TaubenchDriver, python: str, files: list[Path]) -> int:
    """Re-grade each witness file in a fresh interpreter; 0 when every one still passes."""
    by_variant: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            by_variant.setdefault(str(data["variant"]), []).append((f, data))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"{f}: not a witness this script wrote ({type(exc).__name__}: {exc})")
            return 2
    held = 0
    for variant, witnesses in by_variant.items():
        items = [{"task": w["task"], "calls": w["calls"]} for _, w in witnesses]
        answers = driver.grade(python, variant, items)
        for (f, w), a in zip(witnesses, answers):
            held += a["verdict"] is True
            print(f"{f.name}: {variant} task {w['task']}, {len(w['calls'])} call(s): "
                  f"{'passes' if a['verdict'] else 'fails'} (reward {a['reward']})")
    print(f"{held} of {len(files)} witness(es) replayed: the run still passes")
    return 0 if held == len(files) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="the first N tasks of each domain (default: all)")
    parser.add_argument("--python",
                        help="an interpreter with tau-bench's dependencies (default: the cached venv)")
    parser.add_argument("--witness-dir", type=Path, help="write each passing task's witness there")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--replay", type=Path, nargs="+", metavar="WITNESS",
                        help="re-grade witness files this script wrote, and nothing else")
    args = parser.parse_args()
    try:
        checkout = taubench_root()
        python = args.python or str(ensure_taubench_venv())
    except Unavailable as exc:
        print(f"skipped: {exc}")
        return 0
    driver = TaubenchDriver(get_profile("taubench"), SERVICES).for_package(checkout)
    if args.replay:
        return replay_files(driver, python, args.replay)
    started = time.perf_counter()
    figures = audit(driver, python, args.sample)
    held = replay(driver, python, figures, args.witness_dir)
    wall = time.perf_counter() - started
    split = "test split" + (f", first {args.sample} tasks" if args.sample else "")
    print(f"tau-bench @ {checkout} ({split}): a do-nothing agent, graded by Env.calculate_reward")
    print(f"{'domain':<8} {'tasks':>5} {'passed':>6} {'share':>6} {'published':>9} {'cross-check':>11} "
          f"{'replayed':>8} {'grade s':>7}")
    total_tasks = total_passed = 0
    for domain, fig in figures.items():
        passed = len(fig["passed"])
        total_tasks += fig["tasks"]
        total_passed += passed
        published = f"{PUBLISHED[domain]:.0%}" if domain in PUBLISHED else "-"
        agrees = "agrees" if fig["passed"] == fig["expected"] else "DIFFERS"
        share = passed / max(fig["tasks"], 1)
        print(f"{domain:<8} {fig['tasks']:>5} {passed:>6} {share:>6.1%} {published:>9} "
              f"{agrees:>11} {len(held[domain]):>4}/{passed:<3} {fig['seconds']:>7.1f}")
        print(f"         passing tasks: {', '.join(fig['passed']) or 'none'}")
        if fig["passed"] != fig["expected"]:
            print(f"         cross-check expected: {', '.join(fig['expected']) or 'none'}")
        if fig["errors"]:
            print(f"         not graded: {', '.join(fig['errors'])}")
    print(f"{'both':<8} {total_tasks:>5} {total_passed:>6} {total_passed / max(total_tasks, 1):>6.1%}")
    print(f"wall: {wall:.0f} s (import, null runs, cross-check, witness replays in a fresh interpreter)")
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "replayed": held, "published": PUBLISHED,
                                         "wall_s": round(wall, 1)}, indent=1) + "\n", encoding="utf-8")
    ok = all(f["passed"] == f["expected"] and len(held[d]) == len(f["passed"]) for d, f in figures.items())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
