"""What the graders of the shared benchmarks rest on: live state, or the agent's record.

    python bench/graders.py [--show]

For each benchmark the graders toollint finds with no configuration, counted by basis (reads state
/ reads the record / gated on state but grades the write from the record / reads no live state and
credits no write), and the TL401 findings among them. For MedAgentBench, the 300 task cases of
`data/medagentbench/test_data_v2.json` are joined to the grader functions by id prefix (`task5_12`
is graded by `task5`) and classified beside the paper's figures: 150 query cases with no write; of
the 150 action cases, 60 graded from the record unconditionally, 90 gated on live state but grading
the write from the record, 0 reading the write back from the FHIR server.

MedAgentBench's graders live in `refsol.py`, which is NOT part of the pinned commit (99260117): it
is a post-pin, fork-side file (rushilcs/MedAgentBench d1f3b86, see the snapshot's MANIFEST.md). Its
figures are the fork's reference solution's, not the pin's.

inspect-evals (PyPI) carries its own port of tau2-bench's domains (`inspect_evals/tau2`): the tau2
grader patterns read it as code nobody here wrote, so its row shows whether the graders that read
state stay silent there too.

BFCL (bfcl-eval from PyPI, the Berkeley Function Calling Leaderboard's checkers) has no profile: its
graders are configured as a user would (`graders = [...]`, `BFCL_GRADERS` below), their parameters
taking roles from their names; the line after its row counts the grader rules' findings (TL404: the
multi-turn checker `eval`s the model's decoded calls behind a name denylist).

AgentDojo is the PyPI release (agentdojo==0.1.35, installed into a cached venv; never into
toollint's environment), bfcl-eval likewise (its own files only, never run); tau2-bench and
MedAgentBench come from the nearest `shared/benchmarks` above the project (or TOOLLINT_BENCHMARKS).
A benchmark that cannot be had is skipped with a reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpora import VenvError, ensure_agentdojo_venv, ensure_venv, package_dir  # after the path tweak
from recall import _installed, benchmarks_dir

from toollint.analysis.graders import GraderFact
from toollint.engine import lint_paths
from toollint.settings import Settings

BASES = ("reads_state", "reads_record", "gated_on_state", "no_state")
PAPER = {"query": 150, "reads_record": 60, "gated_on_state": 90, "reads_state": 0}
BFCL = "bfcl-eval==2026.3.23"
INSPECT_EVALS = "inspect-evals==0.26.0"
BFCL_GRADERS = [f"bfcl_eval.eval_checker.{ref}" for ref in (
    "multi_turn_eval.multi_turn_checker:multi_turn_checker",
    "multi_turn_eval.multi_turn_checker:multi_turn_irrelevance_checker",
    "ast_eval.ast_checker:ast_checker",
    "agentic_eval.agentic_checker:agentic_checker",
)]


@dataclass(frozen=True)
class Graded:
    """One benchmark's graders, as `toollint check` reads them."""

    name: str
    graders: list[tuple[str, GraderFact]]  # (file, fact)
    tl401: list[tuple[str, int, str]]  # (file, line, grader)
    smells: list[tuple[str, str, int, str]] = field(
        default_factory=list
    )  # TL402-TL405: (code, file, line, grader)

    def by_basis(self) -> Counter[str]:
        return Counter(fact.basis for _, fact in self.graders)


def graded(name: str, target: Path, configured: list[str] | None = None) -> Graded:
    result = lint_paths([str(target)], Settings(select=["TL4"], graders=configured or []), jobs=1)
    graders = [(r.path, g) for r in sorted(result.files, key=lambda r: r.path) for g in r.graders or []]
    found = [(f.path, f.line, str(f.properties.get("grader"))) for f in result.reported if f.code == "TL401"]
    smells = [(f.code, f.path, f.line, str(f.properties.get("grader"))) for f in result.reported
              if f.code != "TL401"]
    return Graded(name, graders, found, smells)


def inspect_evals_dir() -> Path:
    """The installed `inspect_evals` package (its own files only: read, never run)."""
    return _installed(
        ensure_venv("venv-graders-inspect-evals", [INSPECT_EVALS], no_deps=True), "inspect_evals"
    )


def bfcl_dir() -> Path:
    """The installed `bfcl_eval` package (its own files only: read, never run)."""
    return _installed(ensure_venv("venv-graders-bfcl", [BFCL], no_deps=True), "bfcl_eval")


def medagentbench_cases(root: Path, facts: list[tuple[str, GraderFact]]) -> dict[str, Counter[str]]:
    """Per grader function, the cases it grades; and the cases per class (query, or the write's basis)."""
    cases = json.loads((root / "data" / "medagentbench" / "test_data_v2.json").read_text())
    by_name = {fact.qualname: fact for path, fact in facts if Path(path).name == "refsol.py"}
    per_grader: Counter[str] = Counter()
    per_class: Counter[str] = Counter()
    unmatched = 0
    for case in cases:
        grader = by_name.get(str(case["id"]).split("_", 1)[0])
        if grader is None:
            unmatched += 1
            continue
        per_grader[grader.qualname] += 1
        per_class["query" if not grader.credits_write else grader.basis] += 1
    return {"grader": per_grader, "class": per_class, "total": Counter(cases=len(cases), unmatched=unmatched)}


Benchmark = tuple[str, Path, Path | None, list[str] | None]  # name, target, MedAgentBench root, graders


def corpus() -> tuple[list[Benchmark], list[str]]:
    """(name, target, MedAgentBench root or None, configured graders) for each benchmark here, and
    why any is missing."""
    out: list[Benchmark] = []
    missing: list[str] = []
    shared = benchmarks_dir()
    med = shared / "medagentbench"
    if (med / "src").is_dir():
        out.append(("MedAgentBench 99260117 + fork refsol.py", med / "src", med, None))
    else:
        missing.append(f"MedAgentBench: no snapshot at {med}")
    try:
        out.append(("AgentDojo 0.1.35", package_dir(ensure_agentdojo_venv(), "agentdojo"), None, None))
    except (VenvError, OSError) as exc:
        missing.append(f"AgentDojo: {str(exc).splitlines()[0]}")
    tau2 = shared / "tau2-bench" / "src" / "tau2"
    if tau2.is_dir():
        out.append(("tau2-bench c3398666", tau2, None, None))
    else:
        missing.append(f"tau2-bench: no snapshot at {tau2}")
    try:
        out.append(
            (
                f"inspect-evals {INSPECT_EVALS.split('==')[1]} tau2 port",
                inspect_evals_dir() / "tau2",
                None,
                None,
            )
        )
    except (VenvError, OSError) as exc:
        missing.append(f"inspect-evals: {str(exc).splitlines()[0]}")
    try:
        out.append(
            (f"BFCL {BFCL.split('==')[1]} (configured)", bfcl_dir() / "eval_checker", None, BFCL_GRADERS)
        )
    except (VenvError, OSError) as exc:
        missing.append(f"BFCL: {str(exc).splitlines()[0]}")
    return out, missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="list every grader with its basis")
    args = parser.parse_args(argv)
    benchmarks, missing = corpus()
    for reason in missing:
        print(f"(skipped {reason})")
    header = f"{'benchmark':<40} {'graders':>8} " + " ".join(f"{b:>15}" for b in BASES) + f" {'TL401':>6}"
    print(header)
    print("-" * len(header))
    for name, target, med, configured in benchmarks:
        g = graded(name, target, configured)
        counts = g.by_basis()
        print(
            f"{name:<40} {len(g.graders):>8} "
            + " ".join(f"{counts[b]:>15}" for b in BASES)
            + f" {len(g.tl401):>6}"
        )
        silent = [
            f for _, f in g.graders if f.basis == "reads_state" and any(t[2] == f.qualname for t in g.tl401)
        ]
        read_back = sum(1 for _, f in g.graders if f.basis == "reads_state" and f.credits_write)
        print(f"    graders that read state: {counts['reads_state']}, of them with a TL401: {len(silent)}; "
              f"crediting a write the record claims and reading it back (silent): {read_back}")
        for path, line, grader in g.tl401:
            print(f"    TL401 {Path(path).name}:{line} {grader}")
        smells = Counter(code for code, _, _, _ in g.smells)
        print("    TL402-TL405: " + (", ".join(f"{c} {n}" for c, n in sorted(smells.items())) or "none"))
        if configured:
            for code, path, line, grader in g.smells:
                print(f"    {code} {Path(path).name}:{line} {grader}")
        if args.show:
            for path, fact in g.graders:
                print(f"      {Path(path).name}:{fact.line} {fact.qualname} [{fact.basis}] {fact.why}")
        if med is not None:
            split = medagentbench_cases(med, g.graders)
            cls, total = split["class"], split["total"]
            print(
                "    MedAgentBench cases (refsol.py is a post-pin fork file, see MANIFEST.md): "
                f"{total['cases']} in "
                f"test_data_v2.json, {total['unmatched']} without a grader"
            )
            print("      " + ", ".join(f"{q}: {n}" for q, n in sorted(split["grader"].items(),
                                                                         key=lambda kv: int(kv[0][4:]))))
            action = sum(n for k, n in cls.items() if k != "query")
            print(f"      query cases (no write credited): {cls['query']}  [paper: {PAPER['query']}]")
            print(
                f"      action cases: {action}: graded from the record unconditionally {cls['reads_record']} "
                f"[paper: {PAPER['reads_record']}], "
                "gated on live state but grading the write from the record "
                f"{cls['gated_on_state']} [paper: {PAPER['gated_on_state']}], "
                "reading the write back from FHIR "
                f"state {cls['reads_state']} [paper: {PAPER['reads_state']}]"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
