"""Derived oracles beside the bundled contract library, finding by finding, in one run.

    python bench/derived.py                      # AgentDojo: library vs derived oracles on every static
                                                 # finding
    python bench/derived.py --tau2               # plus tau2-bench with no contract anywhere (the must-show)
    python bench/derived.py --mutation           # plus the mutation arm on minibank: derived oracles
                                                 # beside authored
    python bench/derived.py --mutation --agentdojo-mutants --budget 4 --json out.json
                                                 # and AgentDojo's modules

Column "library" is `--confirm` with the bundled contracts and no derived oracle; column "derived" is
`--confirm --no-bundled-contracts`, where every flagged tool gets the oracles its findings imply.
Both runs are made here, one after the other, on the same machine; wall times are printed as a
ratio. The figures a test asserts (tests/test_derived_agentdojo.py) come from `agentdojo_comparison`.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _corpora import Unavailable, ensure_agentdojo_venv, ensure_tau2_venv, package_dir, tau2_root
from toollint.contracts.validator import finding_subject
from toollint.dynamic.confirm import ConfirmRun, confirm

from toollint.engine import lint_paths
from toollint.model import Finding
from toollint.settings import Settings

VIOLATES, CONFORMS = "VIOLATES", "CONFORMS"


@dataclass
class Row:
    code: str
    tool: str
    about: str
    library: str
    derived: str
    detail: str = ""  # why the derived verdict is what it is, when it is not VIOLATES

    @property
    def key(self) -> str:
        return f"{self.code} {self.tool} {self.about}"


@dataclass
class Comparison:
    rows: list[Row] = field(default_factory=list)
    library_s: float = 0.0
    derived_s: float = 0.0
    library_rows: dict[str, int] = field(default_factory=dict)
    derived_rows: dict[str, int] = field(default_factory=dict)
    confirmed: dict[str, list[str]] = field(default_factory=dict)  # column -> TL2xx "tool clause code"
    findings: dict[str, list[Finding]] = field(default_factory=dict)  # column -> its TL2xx findings

    @property
    def library_confirmed(self) -> list[Row]:
        return [r for r in self.rows if r.library == VIOLATES]

    @property
    def derived_also(self) -> list[Row]:
        return [r for r in self.library_confirmed if r.derived == VIOLATES]

    @property
    def refuted(self) -> list[Row]:
        return [r for r in self.rows if r.derived == CONFORMS]

    @property
    def derived_only(self) -> list[Row]:
        return [r for r in self.rows if r.derived == VIOLATES and r.library != VIOLATES]

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": [r.__dict__ for r in self.rows],
            "library_confirmed": len(self.library_confirmed),
            "derived_confirms_of_those": len(self.derived_also),
            "refuted": [r.key for r in self.refuted],
            "derived_only": [r.key for r in self.derived_only],
            "library_s": round(self.library_s, 2),
            "derived_s": round(self.derived_s, 2),
            "library_clause_rows": self.library_rows,
            "derived_clause_rows": self.derived_rows,
            "confirmed": self.confirmed,
        }

    def __post_init__(self) -> None:
        self.findings = self.findings or {}


def _lint(paths: list[Path]) -> list[Finding]:
    result = lint_paths(paths, Settings(confidence="low"))  # every finding's oracle, whatever its premise
    return [f for r in result.files for f in r.reported if f.code.startswith("TL1")]


def _run(findings: list[Finding], python: Path, linted: list[str], work: Path, *, derived: bool
         ) -> tuple[list[Finding], ConfirmRun, float]:
    start = time.perf_counter()
    found, run = confirm(
        findings,
        Settings(),
        python=str(python),
        linted=linted,
        witness_dir=work / "witnesses",
        bundled=not derived,
        derive=derived,
    )
    return found, run, time.perf_counter() - start


def compare(paths: list[Path], python: Path, work: Path | None = None) -> Comparison:
    """Both columns over the static findings on `paths`: the library's verdict and the derived one.
    `work`: where the witnesses and derived contracts go (default: a temporary directory)."""
    static = _lint(paths)
    linted = [str(p) for p in paths]
    out = Comparison()
    with tempfile.TemporaryDirectory(prefix="toollint-derived-bench-") as tmp:
        base = work or Path(tmp)
        library = copy.deepcopy(static)
        lib_found, lib_run, out.library_s = _run(library, python, linted, base / "library", derived=False)
        derived = copy.deepcopy(static)
        der_found, der_run, out.derived_s = _run(derived, python, linted, base / "derived", derived=True)
    out.library_rows, out.derived_rows = lib_run.counts(), der_run.counts(derived=True)
    out.findings = {"library": [f for f in lib_found if f.code.startswith("TL2")],
                    "derived": [f for f in der_found if f.code.startswith("TL2")]}
    out.confirmed = {name: sorted(f"{f.tool} {f.properties.get('clause')} {f.code}" for f in found)
                     for name, found in out.findings.items()}
    for lib, der in zip(library, derived):
        out.rows.append(Row(lib.code, str(lib.tool).rsplit(".", 1)[-1], finding_subject(lib) or "reply",
                            str(lib.properties.get("verdict", "no contract")),
                            str(der.properties.get("verdict", "-")),
                            "" if der.properties.get("verdict") == VIOLATES else
                            str(der.properties.get("verdict_detail") or _detail(der, der_run))))
    return out


def _detail(finding: Finding, run: ConfirmRun) -> str:
    if finding.properties.get("verdict") == "UNTESTABLE":  # the reason code first: legality_unknown (...)
        return str(finding.properties.get("verdict_detail") or "")
    clauses = set(finding.properties.get("clauses") or ())
    for report in run.reports:
        for row in report.rows:
            if row.clause_id in clauses and row.detail:
                return row.detail
    return ""


def agentdojo_comparison(python: Path | None = None, work: Path | None = None) -> Comparison:
    python = python or ensure_agentdojo_venv()
    return compare([package_dir(python, "agentdojo") / "default_suites"], python, work)


def tau2_comparison() -> Comparison:
    root = tau2_root()
    return compare([root / "src" / "tau2" / "domains"], ensure_tau2_venv())


def print_comparison(title: str, c: Comparison) -> None:
    print(f"\n=== {title}: bundled library vs derived oracles, per static finding ===")
    width = max((len(r.key) for r in c.rows), default=10)
    print(f"{'finding':<{width}}  {'library':<11}  {'derived':<11}  why (derived, when not VIOLATES)")
    for r in c.rows:
        print(f"{r.key:<{width}}  {r.library:<11}  {r.derived:<11}  {r.detail[:110]}")
    n, m = len(c.library_confirmed), len(c.derived_also)
    print(f"\nfindings the library confirms (VIOLATES): {n}; the derived oracles confirm {m} of them"
          + (f" ({m / n:.0%})" if n else ""))
    missed = [r.key for r in c.library_confirmed if r.derived != VIOLATES]
    if missed:
        print(f"  not confirmed by the derived oracles: {', '.join(missed)}")
    print(f"findings the derived oracles refute (CONFORMS): {len(c.refuted)}"
          + "".join(f"\n  {r.key}: {r.detail[:120]}" for r in c.refuted))
    print(f"confirmed by the derived oracles only: {len(c.derived_only)}"
          + "".join(f"\n  {r.key} (library: {r.library})" for r in c.derived_only))
    print(
        f"TL2xx findings: library {len(c.confirmed.get('library', []))}, "
        f"derived {len(c.confirmed.get('derived', []))}"
    )
    print(f"clause rows: library {c.library_rows}; derived {c.derived_rows}")
    ratio = c.derived_s / c.library_s if c.library_s else float("nan")
    print(
        f"wall time, same run: library {c.library_s:.1f} s, derived {c.derived_s:.1f} s "
        f"(derived/library {ratio:.2f}x)"
    )


MINIBANK = HERE.parent / "tests" / "fixtures" / "mutation" / "minibank"


def mutation_arm(budget: int | None, seed: int, agentdojo: bool) -> dict[str, Any]:
    """The mutation arm on the minibank fixture (every mutant) and, with `agentdojo`, on AgentDojo's
    tool modules (`budget` mutants per module): authored contracts and derived oracles only, per
    defect class, with the negative controls."""
    from toollint.validate.derived import compare_arms
    from toollint.validate.drivers import driver_for
    from toollint.validate.subjects import minibank_subject

    subjects = [minibank_subject(MINIBANK)]
    if agentdojo:
        python = ensure_agentdojo_venv()
        driver = driver_for("agentdojo")
        subjects += driver.subjects(package_dir(python, "agentdojo"), str(python), None,
                                    driver.registered_tools(str(python)))
    minibank = compare_arms(subjects[:1], seed=seed)  # all of minibank's mutants, whatever the budget
    if not agentdojo:
        return minibank
    rest = compare_arms(subjects[1:], budget=budget, seed=seed)
    minibank["subjects"].update(rest["subjects"])
    return minibank


def _summed(tables: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-class tables of several subjects added up (a benchmark's tool modules as one)."""
    keys = ("mutants", "authored", "derived", "flagged", "derived_of_flagged")
    classes: dict[str, dict[str, int]] = {}
    for t in tables:
        for cls, row in t["classes"].items():
            acc = classes.setdefault(cls, dict.fromkeys(keys, 0))
            for k in keys:
                acc[k] += row[k]
    out: dict[str, Any] = {"classes": classes, **{k: sum(t[k] for t in tables) for k in keys}}
    out["controls"] = {k: sum(t["controls"][k] for t in tables) for k in ("authored", "derived", "count")}
    out["authored_s"] = sum(t["authored_s"] for t in tables)
    out["derived_s"] = sum(t["derived_s"] for t in tables)
    return out


def print_mutation(data: dict[str, Any]) -> None:
    subjects = dict(data["subjects"])
    by_benchmark: dict[str, list[dict[str, Any]]] = {}
    for name, table in subjects.items():
        if ":" in name:
            by_benchmark.setdefault(name.split(":", 1)[0], []).append(table)
    for bench, tables in by_benchmark.items():
        if len(tables) > 1:
            subjects[f"{bench} (all {len(tables)} modules)"] = _summed(tables)
    for subject, table in subjects.items():
        print(f"\n=== mutation arm, {subject}: dynamic kills per class (static kills apart) ===")
        print(
            f"{'class':<26} {'mutants':>7} {'authored':>9} {'derived':>8}   "
            f"{'flagged':>7} {'derived of flagged':>18}"
        )
        for cls, row in [*sorted(table["classes"].items()), ("all", table)]:
            print(f"{cls:<26} {row['mutants']:>7} {row['authored']:>9} {row['derived']:>8}   "
                  f"{row['flagged']:>7} {row['derived_of_flagged']:>18}")
        print(
            "(flagged: a static rule reports a finding the original lacks, the ground a derived oracle needs)"
        )
        print(f"negative controls flagged: authored {table['controls']['authored']}, "
              f"derived {table['controls']['derived']} (of {table['controls']['count']})")
        print(f"wall time: authored {table['authored_s']:.1f} s, derived {table['derived_s']:.1f} s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tau2", action="store_true", help="also tau2-bench with no contract anywhere")
    p.add_argument("--mutation", action="store_true", help="also the mutation arm, derived beside authored")
    p.add_argument(
        "--agentdojo-mutants", action="store_true", help="with --mutation: AgentDojo's tool modules too"
    )
    p.add_argument("--budget", type=int, default=None, help="mutants per AgentDojo module (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-agentdojo", action="store_true")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    out: dict[str, Any] = {}
    if not args.skip_agentdojo:
        c = agentdojo_comparison()
        print_comparison("AgentDojo 0.1.35", c)
        out["agentdojo"] = c.to_json()
    if args.tau2:
        try:
            t = tau2_comparison()
        except Unavailable as exc:
            print(f"\ntau2-bench skipped: {exc}")
        else:
            print_comparison("tau2-bench c3398666", t)
            out["tau2"] = t.to_json()
    if args.mutation:
        data = mutation_arm(args.budget, args.seed, args.agentdojo_mutants)
        print_mutation(data)
        out["mutation"] = data
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
