"""The typed options of one `toollint check` run, built once from the parsed command line.

Each group belongs to one step (output, baselines, fixes, confirm, trace); a step reads its own
group and nothing else of the command line. `CheckOptions.from_namespace` is the only place that
knows argparse's attribute names, and `add_step_arguments` declares the options of the steps after
linting here beside them: building the parser imports no step's module, and a run imports a step's
module only when an option of its group was given (`toollint.cli.StepOf`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toollint.config import SettingsOverride


@dataclass(frozen=True)
class OutputOptions:
    """How the report is written: its format and file, the SARIF outputs, and what goes to stderr."""

    format: str = "concise"  # a key of toollint.reporters.FORMATS
    file: str | None = None  # -o; None or "-" is stdout
    statistics: bool = False
    quiet: bool = False
    exit_zero: bool = False
    color: str = "auto"  # auto, always, never
    sarif_files: tuple[str, ...] = ()  # --sarif-output, besides the report
    sarif_category: str | None = None
    sarif_include_suppressed: bool = False
    show_tools: bool = False  # --show-tools: each tool, whether it writes and why, on stderr
    show_graders: bool = False  # --show-graders: each grader and its basis, on stderr


@dataclass(frozen=True)
class BaselineOptions:
    """--baseline, --write-baseline and --diff-base."""

    write: str | None = None  # --write-baseline FILE
    read: str | None = None  # --baseline FILE
    diff_base: str | None = None  # --diff-base REF


@dataclass(frozen=True)
class FixOptions:
    """--fix, --diff and --unsafe-fixes."""

    fix: bool = False
    unsafe: bool = False
    diff: bool = False

    @property
    def requested(self) -> bool:
        return self.fix or self.diff or self.unsafe


@dataclass(frozen=True)
class ConfirmOptions:
    """--confirm (--confirm-all) and the interpreter, witness folder and contracts it uses."""

    confirm: bool = False
    confirm_all: bool = False
    python: str | None = None
    witness_dir: Path | None = None
    bundled: bool = True  # --no-bundled-contracts: False

    @property
    def requested(self) -> bool:
        return self.confirm or self.confirm_all


@dataclass(frozen=True)
class TraceOptions:
    """--ledger and --report: the tasks a confirmed defect puts at risk."""

    ledger: Path | None = None
    report: Path | None = None


@dataclass(frozen=True)
class AuditOptions:
    """--audit-graders."""

    graders: bool = False  # --audit-graders: the grader audit of the benchmark tree given as PATH


@dataclass(frozen=True)
class CheckOptions:
    """Everything one `toollint check` (or `demo`) run was asked, read once from the command line."""

    command: str = "check"  # or "demo"
    paths: tuple[str, ...] = (".",)
    stdin_filename: str | None = None  # the name stdin (`-`) is linted under
    config: str | None = None
    isolated: bool = False
    force_exclude: bool = False
    jobs: int = 0
    no_cache: bool = False  # --no-cache: neither read nor write the results cache
    overrides: SettingsOverride = field(default_factory=SettingsOverride)
    output: OutputOptions = field(default_factory=OutputOptions)
    baseline: BaselineOptions = field(default_factory=BaselineOptions)
    fixes: FixOptions = field(default_factory=FixOptions)
    confirm: ConfirmOptions = field(default_factory=ConfirmOptions)
    trace: TraceOptions = field(default_factory=TraceOptions)
    audit: AuditOptions = field(default_factory=AuditOptions)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace, command: str = "check") -> CheckOptions:
        a: dict[str, Any] = vars(ns)
        output_format = (
            "full" if a["show_source"] and a["output_format"] in ("concise", "text") else a["output_format"]
        )
        return cls(
            command=command,
            paths=tuple(a.get("paths") or ()),  # demo has none: it lints the examples
            stdin_filename=a["stdin_filename"],
            config=a["config"],
            isolated=a["isolated"],
            force_exclude=a["force_exclude"],
            jobs=a["jobs"],
            no_cache=a.get("no_cache", False),
            overrides=SettingsOverride(
                select=tuple(a["select"]) if a["select"] is not None else None,
                extend_select=tuple(a["extend_select"] or ()),
                ignore=tuple(a["ignore"] or ()),
                respect_gitignore=False if a["no_respect_gitignore"] else None,
                confidence=a.get("confidence"),
            ),
            output=OutputOptions(
                format="concise" if output_format == "text" else output_format,
                file=a["output_file"],
                statistics=a["statistics"],
                quiet=a["quiet"],
                exit_zero=a["exit_zero"],
                color=a["color"],
                sarif_files=tuple(a["sarif_output"] or ()),
                sarif_category=a["sarif_category"],
                sarif_include_suppressed=a["sarif_include_suppressed"],
                show_tools=a.get("show_tools", False),
                show_graders=a.get("show_graders", False),
            ),
            baseline=BaselineOptions(write=a["write_baseline"], read=a["baseline"], diff_base=a["diff_base"]),
            fixes=FixOptions(fix=a["fix"], unsafe=a["unsafe_fixes"], diff=a["diff"]),
            confirm=ConfirmOptions(
                confirm=a["confirm"],
                confirm_all=a["confirm_all"],
                python=a["python"],
                witness_dir=Path(a["witness_dir"]) if a["witness_dir"] else None,
                bundled=not a.get("no_bundled_contracts", False),
            ),
            trace=TraceOptions(ledger=a["ledger"], report=a["report"]),
            audit=AuditOptions(graders=a.get("audit_graders", False)),
        )


def add_step_arguments(parser: argparse.ArgumentParser) -> None:
    """The option groups of the steps after linting: baselines (`toollint.baseline`), fixes
    (`toollint.fixes`), confirmation (`toollint.dynamic.cli`), score at risk (`toollint.trace.check`) and
    the grader audit (`toollint.pipeline.audit`)."""
    group = parser.add_argument_group("adopting toollint on existing code")
    which = group.add_mutually_exclusive_group()
    which.add_argument(
        "--write-baseline", metavar="FILE", help="record the current findings in FILE and exit 0"
    )
    which.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in FILE")
    group.add_argument(
        "--diff-base", metavar="REF", help="report only findings that are new since git revision REF"
    )

    group = parser.add_argument_group("fixes")
    group.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    group.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply (with --fix/--diff) and show in SARIF fixes that change behaviour",
    )
    group.add_argument(
        "--diff", action="store_true", help="print the fixes as a unified diff; change nothing"
    )

    group = parser.add_argument_group("dynamic confirmation")
    group.add_argument(
        "--confirm",
        action="store_true",
        help="probe flagged tools that have a contract and attach verdicts (needs the benchmark)",
    )
    group.add_argument(
        "--confirm-all", action="store_true", help="probe every contracted tool, flagged or not"
    )
    group.add_argument("--no-bundled-contracts", action="store_true",
                       help="leave the benchmark profiles' bundled contracts out: configured contracts and "
                            "oracles derived from the findings only")
    group.add_argument("--python", metavar="PATH", help="the benchmark's interpreter for --confirm")
    group.add_argument(
        "--witness-dir", metavar="DIR", help="where witnesses go (default .toollint/witnesses)"
    )

    # --ledger / --report trace the TL2xx findings --confirm produces
    group = parser.add_argument_group("score at risk (traces the TL2xx findings of --confirm)")
    group.add_argument(
        "--ledger", type=Path, metavar="FILE", help="write the ledger as FILE.csv and FILE.json"
    )
    group.add_argument("--report", type=Path, metavar="FILE", help="write a self-contained HTML report")

    group = parser.add_argument_group("grader audit (findings TL408-TL411)")
    group.add_argument("--audit-graders", action="store_true",
                       help="also run each task's graders on wrong runs (nothing done, a gold call dropped, "
                            "a gold argument changed) over the benchmark tree given as PATH, in the "
                            "benchmark's interpreter (--python); `toollint audit-graders` picks suites")
