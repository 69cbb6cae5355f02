"""Discovery and precision of the static rules on agent-tool code nobody here wrote.

    python bench/recall.py [--only NAME] [--show-unjudged] [--show-findings] [--record-before]

Each code base is linted as a new user would (`toollint check --isolated`, no configuration; bfcl-eval,
which no profile knows, with its checkers named in `graders = [...]` as its user would name them): per
code base, files, tools found, writers among them, and findings per rule, each finding matched to a
judgement recorded by reading the code (`bench/recall_judgements.json`: true / arguable / false,
with a note). Per rule: precision = (true + arguable) / judged. A finding whose key has no
judgement is counted and listed as unjudged, so a changed finding shows. The target (issues 13, 14):
tools found in every code base, and at least 80% true or arguable per rule, the grader rules (TL4xx)
included. Issue 21 adds the nine code bases of `shared/corpus` (each linted with no configuration at
all) and a stricter figure beside it: the share judged *true* (arguable counts against; target 90%),
printed next to the figures recorded before that issue's changes (`recall_before.json`).

The public packages are pinned below and installed, without their dependencies (they are read,
never run), into a cached venv under ~/.cache/toollint-tests; never into toollint's environment.
The benchmark snapshots come from the nearest `shared/benchmarks` above the project (or
TOOLLINT_BENCHMARKS).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpora import VenvError, ensure_agentdojo_venv, ensure_venv, package_dir  # after the path tweak

from toollint.engine import FileResult, lint_paths
from toollint.settings import Settings

# Exact versions of everything read from PyPI.
PACKAGES = {
    "mcp-server-git": "2026.10.19",
    "mcp-server-time": "2026.10.19",
    "mcp-server-fetch": "2026.10.24",
    "mcp-server-sqlite": "2025.4.25",
    "langchain-community": "0.4.2",
    "crewai-tools": "1.15.30",
}
JUDGEMENTS = Path(__file__).with_name("recall_judgements.json")
BEFORE = Path(__file__).with_name("recall_before.json")  # per-rule tallies before issue 21's changes
CORPUS_FOLDERS = ("tau-bench", "bfcl", "toolsandbox", "agentbench", "mcp-servers", "mcp-python-sdk",
                  "langchain-community", "crewai-tools", "autogen")
VERDICTS = ("true", "arguable", "false")
STATIC_RULES = ("TL101", "TL102", "TL103", "TL104", "TL105", "TL401", "TL402", "TL403", "TL404", "TL405",
                "TL406", "TL407")


@dataclass(frozen=True)
class CodeBase:
    name: str
    root: Path  # what the key's relative paths are relative to
    targets: tuple[Path, ...]
    graders: tuple[str, ...] = ()  # configured as a user would (`graders = [...]`): no profile finds them


def benchmarks_dir() -> Path:
    """TOOLLINT_BENCHMARKS, else the nearest `shared/benchmarks` beside a directory above the project."""
    if os.environ.get("TOOLLINT_BENCHMARKS"):
        return Path(os.environ["TOOLLINT_BENCHMARKS"])
    project = Path(__file__).resolve().parents[1]
    for above in project.parents:
        if (above / "shared" / "benchmarks").is_dir():
            return above / "shared" / "benchmarks"
    return project.parent / "shared" / "benchmarks"


def shared_dir(name: str) -> Path:
    """The nearest `shared/<name>` beside a directory above the project."""
    project = Path(__file__).resolve().parents[1]
    for above in project.parents:
        if (above / "shared" / name).is_dir():
            return above / "shared" / name
    return project.parent / "shared" / name


def shared_corpus() -> tuple[list[CodeBase], list[str]]:
    """The nine code bases of `shared/corpus`, each linted whole as a new user would (no configuration);
    the key's paths are relative to the folder, as the corpus MANIFEST says."""
    root = Path(os.environ["TOOLLINT_CORPUS"]) if os.environ.get("TOOLLINT_CORPUS") else shared_dir("corpus")
    bases: list[CodeBase] = []
    missing: list[str] = []
    for folder in CORPUS_FOLDERS:
        if (root / folder).is_dir():
            bases.append(CodeBase(f"corpus-{folder} @pinned", root / folder, (root / folder,)))
        else:
            missing.append(f"corpus {folder}: no folder at {root / folder}")
    return bases, missing


def corpus() -> tuple[list[CodeBase], list[str]]:
    """The code bases that can be had here, and a one-line reason for each that cannot."""
    bases: list[CodeBase] = []
    missing: list[str] = []
    try:
        agentdojo = package_dir(ensure_agentdojo_venv(), "agentdojo")
        bases.append(CodeBase("agentdojo 0.1.35", agentdojo.parent, (agentdojo,)))
    except (VenvError, OSError) as exc:
        missing.append(f"agentdojo: {str(exc).splitlines()[0]}")
    try:
        py = ensure_venv(
            "venv-recall-corpus", [f"{n}=={v}" for n, v in sorted(PACKAGES.items())], no_deps=True
        )
        for dist, module, sub in (
            ("mcp-server-git", "mcp_server_git", ""), ("mcp-server-time", "mcp_server_time", ""),
            ("mcp-server-fetch", "mcp_server_fetch", ""), ("mcp-server-sqlite", "mcp_server_sqlite", ""),
            ("langchain-community", "langchain_community", "tools"), ("crewai-tools", "crewai_tools", ""),
        ):
            where = _installed(py, module)
            bases.append(CodeBase(f"{dist} {PACKAGES[dist]}", where.parent, (where / sub if sub else where,)))
    except (VenvError, OSError) as exc:
        missing.append(f"PyPI packages: {str(exc).splitlines()[0]}")
    from graders import BFCL, BFCL_GRADERS, bfcl_dir  # here: bench/graders.py imports this module

    try:
        where = bfcl_dir()
        bases.append(CodeBase(f"bfcl-eval {BFCL.split('==')[1]}", where.parent, (where / "eval_checker",),
                              tuple(BFCL_GRADERS)))
    except (VenvError, OSError) as exc:
        missing.append(f"bfcl-eval: {str(exc).splitlines()[0]}")
    shared = benchmarks_dir()
    for name, root, target in (
        ("tau2-bench c3398666", "tau2-bench/src", "tau2-bench/src/tau2/domains"),
        ("MedAgentBench 99260117", "medagentbench/src", "medagentbench/src"),
        ("MM-ToolSandbox 1e8e9324", "mm-toolsandbox", "mm-toolsandbox/mmtoolsandbox"),
    ):
        if (shared / target).is_dir():
            bases.append(CodeBase(name, shared / root, (shared / target,)))
        else:
            missing.append(f"{name}: no snapshot at {shared / target}")
    more, gone = shared_corpus()
    return bases + more, missing + gone


def _installed(py: Path, module: str) -> Path:
    site = Path(py).parents[1] / "lib"
    found = sorted(site.glob(f"python*/site-packages/{module}"))
    if not found:
        raise VenvError(f"{module} is not installed in {site.parent}")
    return found[0]


def finding_key(base: CodeBase, path: str, tool: str | None, code: str, detail: str) -> str:
    """Stable across line moves: code base, file, tool, rule, and the parameter or field it names."""
    try:
        rel = Path(path).resolve().relative_to(base.root.resolve()).as_posix()
    except ValueError:
        rel = Path(path).name
    return f"{base.name.split()[0]}:{rel}:{tool or '-'}:{code}:{detail}"


def detail_of(properties: dict[str, object]) -> str:
    for key in ("param", "field", "guard", "detail", "basis"):
        value = properties.get(key)
        if value:
            return str(value).splitlines()[0][:60]
    return ""


def run(bases: list[CodeBase], judgements: dict[str, dict[str, str]], show_unjudged: bool,
        show_findings: bool, confidence: str = "medium") -> dict[str, Counter[str]]:
    per_rule: dict[str, Counter[str]] = {code: Counter() for code in STATIC_RULES}
    header = (
        f"{'code base':<28} {'files':>6} {'tools':>6} {'writers':>8}  "
        "findings per rule (true/arguable/false/unjudged)"
    )
    print(header)
    print("-" * len(header))
    for base in bases:
        result = lint_paths(
            [str(t) for t in base.targets],
            Settings(select=["TL1", "TL4", "TL9"], graders=list(base.graders), confidence=confidence),
            jobs=1,
        )
        tools = sum(len(r.tools or []) for r in result.files)
        writers = sum(len(r.writers) for r in result.files)
        cells = []
        for code in STATIC_RULES:
            tally: Counter[str] = Counter()
            for f in _findings(result.files, code):
                key = finding_key(base, f.path, f.tool, f.code, detail_of(f.properties))
                verdict = judgements.get(key, {}).get("verdict", "unjudged")
                tally[verdict] += 1
                per_rule[code][verdict] += 1
                if show_findings or (show_unjudged and verdict == "unjudged"):
                    print(f"    {verdict:>8}  {key}  ({Path(f.path).name}:{f.line}) {f.message[:140]}")
            if tally:
                cells.append(
                    f"{code} {sum(tally.values())} ({tally['true']}/{tally['arguable']}/{tally['false']}"
                    f"/{tally['unjudged']})"
                )
        errors = sum(1 for r in result.files for f in r.reported if f.code in ("TL904", "TL905"))
        note = f"  [{errors} TL904/TL905]" if errors else ""
        print(
            f"{base.name:<28} {len(result.files):>6} {tools:>6} {writers:>8}  {', '.join(cells) or '-'}{note}"
        )
    return per_rule


def _findings(files: list[FileResult], code: str) -> list:  # type: ignore[type-arg]
    return sorted((f for r in files for f in r.reported if f.code == code), key=lambda f: (f.path, f.line))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="code bases whose name contains this")
    parser.add_argument("--show-unjudged", action="store_true", help="list findings with no judgement")
    parser.add_argument("--show-findings", action="store_true", help="list every finding with its judgement")
    parser.add_argument("--confidence", choices=("low", "medium", "high"), default="medium",
                        help="the least confidence of the findings counted (default: toollint's own default)")
    parser.add_argument(
        "--record-before",
        action="store_true",
        help=f"write the per-rule tallies to {BEFORE.name} (the figures later runs are printed beside)",
    )
    args = parser.parse_args(argv)
    judgements = json.loads(JUDGEMENTS.read_text()) if JUDGEMENTS.is_file() else {}
    bases, missing = corpus()
    for reason in missing:
        print(f"(skipped {reason})")
    if args.only:
        bases = [b for b in bases if args.only.lower() in b.name.lower()]
    per_rule = run(bases, judgements, args.show_unjudged, args.show_findings, args.confidence)
    if args.record_before:
        BEFORE.write_text(
            json.dumps({c: dict(t) for c, t in per_rule.items()}, indent=1, sort_keys=True) + "\n"
        )
    before = {c: Counter(t) for c, t in json.loads(BEFORE.read_text()).items()} if BEFORE.is_file() else {}
    print("\nper rule: precision = (true + arguable) / judged; true share = true / judged (target 90%)")
    print(f"  {'rule':<6} {'now: findings t/a/f/u':>24} {'precision':>9} {'true share':>10}   "
          f"{'before: findings t/a/f/u':>26} {'true share':>10}")
    for code, tally in per_rule.items():
        was = before.get(code, Counter())
        print(f"  {code:<6} {_cells(tally):>24} {_share(tally, True):>9} {_share(tally):>10}   "
              f"{_cells(was) if was else '-':>26} {_share(was) if was else '-':>10}")
    return 0


def _cells(tally: Counter[str]) -> str:
    return (f"{sum(tally.values())}: {tally['true']}/{tally['arguable']}/{tally['false']}"
            f"/{tally['unjudged']}")


def _share(tally: Counter[str], arguable_counts: bool = False) -> str:
    """true / judged (arguable against), or (true + arguable) / judged."""
    judged = tally["true"] + tally["arguable"] + tally["false"]
    good = tally["true"] + (tally["arguable"] if arguable_counts else 0)
    return f"{good / judged:.0%}" if judged else "-"


if __name__ == "__main__":
    sys.exit(main())
