"""The grader audit over whole benchmarks: per suite or domain, the tasks, how many were audited (their
gold run passes), the do-nothing passes (TL411), vacuous graders (TL408), unchecked effects (TL409) and
unchecked fields (TL410), and the wall time, beside the load average the run met.

    python bench/grader_audit.py                          # AgentDojo (v1.2.2), tau2 and tau-bench
    python bench/grader_audit.py --benchmark agentdojo    # one benchmark
    python bench/grader_audit.py --only null              # the null run alone (the cheapest)
    python bench/grader_audit.py --sample telecom=200     # the first 200 telecom tasks (of 2,285)
    python bench/grader_audit.py --json out.json          # every finding too
    python bench/grader_audit.py --workers 1              # one interpreter (default: a CPU each, two at most)

Each finding is looked up in bench/recall_judgements.json (key: `judgement_key`); the unjudged ones
are listed, and the verdicts counted per code.

AgentDojo runs in its cached venv (agentdojo 0.1.35), tau2 on the pinned snapshot in tau2's venv,
tau-bench (airline and retail, test split) on the pinned extract in a venv of its dependencies
(`bench/_corpora.py`, shared with the tests); tau-bench's do-nothing passes are the tasks
`bench/taubench_null.py` counts (airline: 38% published). Each suite or domain is audited by
`toollint.validate.graders.audit_variant` through the profile's validation driver, as
`toollint audit-graders` does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpora import (
    Unavailable,
    ensure_agentdojo_venv,
    ensure_tau2_venv,
    ensure_taubench_venv,
    package_dir,
    tau2_root,
    taubench_root,
)

from toollint.validate.audit import KINDS, summary_table
from toollint.validate.drivers import driver_for
from toollint.validate.graders import AuditFinding, VariantAudit, audit_variant, default_workers, warm_grader


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def _benchmarks(chosen: list[str]) -> list[tuple[str, Path, str]]:
    out = []
    if not chosen or "agentdojo" in chosen:
        python = ensure_agentdojo_venv()
        out.append(("agentdojo", package_dir(python, "agentdojo"), str(python)))
    if not chosen or "tau2" in chosen:
        try:
            out.append(("tau2", tau2_root(), str(ensure_tau2_venv())))
        except Unavailable as exc:
            print(f"tau2 skipped: {exc}", file=sys.stderr)
    if not chosen or "taubench" in chosen:
        try:
            out.append(("taubench", taubench_root(), str(ensure_taubench_venv())))
        except Unavailable as exc:
            print(f"tau-bench skipped: {exc}", file=sys.stderr)
    return out


JUDGEMENTS = Path(__file__).with_name("recall_judgements.json")
CORPUS_KEYS = {"taubench": "corpus-tau-bench"}  # a benchmark from shared/corpus/: its folder's key


def judgement_key(name: str, tree: Path, f: AuditFinding) -> str:
    """The finding's key in bench/recall_judgements.json: `benchmark:grader file:grader:code:detail`,
    the file relative to the tree's parent (the package's site-packages, the checkout), the detail
    `variant/task/call/field` (no line numbers)."""
    where = f.grader.file if f.grader is not None else str(tree)
    try:
        base = tree.resolve().parent if name == "agentdojo" else tree.resolve()  # a package; a checkout
        rel = Path(where).resolve().relative_to(base)
    except ValueError:
        rel = Path(Path(where).name)
    grader = f.grader.name if f.grader is not None else ""
    index = "" if f.index is None else str(f.index + 1)
    prefix = CORPUS_KEYS.get(name, name)
    return f"{prefix}:{rel.as_posix()}:{grader}:{f.code}:{f.variant}/{f.task}/{index}/{f.field}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", action="append", default=[], choices=("agentdojo", "tau2", "taubench"))
    p.add_argument("--variant", action="append", default=[], help="only these suites or domains")
    p.add_argument("--only", default=",".join(KINDS), help="null,ablation,mutation (default all)")
    p.add_argument("--sample", action="append", default=[], metavar="VARIANT=N",
                   help="audit the first N tasks of a variant (repeatable)")
    p.add_argument("--json", type=Path, help="write the counts and findings here")
    p.add_argument("--workers", type=int, default=default_workers(),
                   help="benchmark interpreters grading at once (default: %(default)s)")
    p.add_argument("--show-findings", action="store_true",
                   help="list every finding with its judgement (unjudged ones are always listed)")
    args = p.parse_args()
    kinds = [k for k in args.only.split(",") if k]
    samples = {k: int(v) for k, _, v in (s.partition("=") for s in args.sample)}
    audits: list[VariantAudit] = []
    judged = json.loads(JUDGEMENTS.read_text()) if JUDGEMENTS.is_file() else {}
    verdicts: dict[str, dict[str, int]] = {}
    for name, tree, python in _benchmarks(args.benchmark):
        driver = driver_for(name).for_package(tree)
        for variant in driver.audit_variants():  # type: ignore[attr-defined]
            short = variant.rpartition("/")[2]
            if args.variant and variant not in args.variant and short not in args.variant:
                continue
            tasks: list[str] = []
            n = samples.get(variant) or samples.get(variant.rpartition("/")[2])
            if n:
                tasks = [str(r["task"]) for r in driver.ground_truth(python, variant)][:n]
            load = os.getloadavg()[0]
            with warm_grader(driver, python, variant, workers=args.workers) as grade:
                a = audit_variant(driver, python, variant, grade, tasks=tasks, kinds=kinds,
                                  progress=_progress)
            for f in a.findings:
                key = judgement_key(name, tree, f)
                verdict = judged.get(key, {}).get("verdict", "unjudged")
                verdicts.setdefault(f.code, {}).setdefault(verdict, 0)
                verdicts[f.code][verdict] += 1
                if args.show_findings or verdict == "unjudged":
                    print(f"    {verdict:>8}  {key}  {f.message[:120]}", flush=True)
            a.variant = f"{name}:{variant}" + (f" (first {n})" if n else "")
            audits.append(a)
            print(f"{a.variant}: {a.tasks} tasks in {a.seconds:.1f} s (load average {load:.1f} at the start, "
                  f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} CPUs, {args.workers} "
                  f"interpreter(s)): {a.vacuous} vacuous, {a.unchecked_effects} unchecked effects, "
                  f"{a.unchecked_fields} unchecked fields", flush=True)
    print()
    print(summary_table(audits))
    total = sum(a.tasks for a in audits)
    print(f"\n{total} tasks audited ({', '.join(kinds)}) in {sum(a.seconds for a in audits) / 60:.1f} min")
    for code, counts in sorted(verdicts.items()):
        print(f"{code}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if args.json:
        args.json.write_text(json.dumps([asdict(a) for a in audits], indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
