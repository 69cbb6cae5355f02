"""Whether a faster toollint still finds what the older one found (issue 26: "the same findings as today").

Runs `toollint check --no-cache --output-format json` with two interpreters — this checkout's and an older
toollint's (`--before-python PY`, e.g. a venv installed from a `git worktree` of the base commit) — over
tau2-bench's `src/`, each code base of `../shared/corpus/` and the standard library, and compares the findings
as a multiset (each finding's JSON without its `url`, which names the checkout's docs) and the closing
summary line (files, tools, writers, graders):

    python bench/same_findings.py --before-python PY [--trees tau2,corpus,stdlib] [--jobs 0]

Prints one row per tree (findings before and after, how many only one side has, whether the summary line
matches) and, for each difference, the findings themselves. Exit 0 when every tree matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import trees  # after the path tweak above

# Where the summary line's counts start: "Checked 261 files, 155 tools (82 writers), 28 graders."
SUMMARY_MARK = "Checked "


def findings(python: str, tree: Path, jobs: int) -> tuple[Counter[str], str]:
    """The findings of one run, each as canonical JSON, and the run's summary line."""
    env = {k: v for k, v in os.environ.items() if k != "TOOLLINT_CACHE_DIR"}
    proc = subprocess.run(
        [python, "-P", "-m", "toollint", "check", "--no-cache", "--exit-zero", "--jobs", str(jobs),
         "--output-format", "json", str(tree)],
        capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"error: {python} failed on {tree} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    rows = json.loads(proc.stdout)
    canonical = Counter(
        json.dumps({k: v for k, v in row.items() if k != "url"}, sort_keys=True) for row in rows
    )
    summary = next((line.strip() for line in proc.stderr.splitlines() if SUMMARY_MARK in line), "")
    summary = summary[summary.find(SUMMARY_MARK):]
    return canonical, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="toollint's findings, this checkout beside an older one")
    parser.add_argument("--before-python", required=True, help="an interpreter with the older toollint")
    parser.add_argument("--trees", default="tau2,corpus,stdlib", help="any of tau2, corpus, stdlib")
    parser.add_argument("--jobs", type=int, default=0, help="toollint's --jobs for both runs")
    args = parser.parse_args(argv)
    chosen = trees(args.trees.split(","))
    if not chosen:
        print(f"error: none of {args.trees} found", file=sys.stderr)
        return 2
    differ = 0
    print(f"{'tree':<28} {'before':>7} {'after':>7} {'only before':>12} {'only after':>11}  summary")
    for name, tree in chosen:
        before, before_summary = findings(args.before_python, tree, args.jobs)
        after, after_summary = findings(sys.executable, tree, args.jobs)
        only_before, only_after = before - after, after - before
        same_summary = before_summary == after_summary
        counts = [sum(side.values()) for side in (before, after, only_before, only_after)]
        print(f"{name:<28} {counts[0]:>7} {counts[1]:>7} {counts[2]:>12} {counts[3]:>11}  "
              f"{'same' if same_summary else 'DIFFERS'}", flush=True)
        if only_before or only_after or not same_summary:
            differ += 1
            for label, side in (("before only", only_before), ("after only", only_after)):
                for row in side.elements():
                    finding = json.loads(row)
                    where = f"{finding['filename']}:{finding['location']['row']}"
                    print(f"    {label}: {where} {finding['code']} {finding['message'][:120]}")
            if not same_summary:
                print(f"    summary before: {before_summary}\n    summary after:  {after_summary}")
    print(f"{len(chosen) - differ} of {len(chosen)} trees give the same findings")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
