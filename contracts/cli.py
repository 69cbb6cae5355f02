"""`toollint contracts check [DIR...]`, `toollint contracts list [DIR...]` and
`toollint contracts draft TOOLREF`.

Exit codes follow `toollint check`: 0 clean, 1 findings, 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from pathlib import Path
from typing import TextIO, TypedDict

from toollint.contracts.draft import DraftError, draft_contract
from toollint.contracts.loader import bundled_library_dirs, load_contracts
from toollint.contracts.model import CLAUSE_KINDS
from toollint.contracts.validator import SourceResolver, ValidationOptions, validate

from toollint.config import ConfigError, resolve_settings
from toollint.model import Finding
from toollint.settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2, through our own return path."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own shape: the usage line, then the error (`toollint contracts` alone shows both).
        raise _UsageError(f"{self.format_usage().rstrip()}\n{self.prog}: error: {message}")


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="toollint contracts", description="Validate and draft tool contracts.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = sub.add_parser("check", help="validate contract files (the bundled library by default)")
    check.add_argument("paths", nargs="*", type=Path, metavar="DIR", help="contract files or directories")
    check.add_argument("--output-format", choices=["text", "json", "sarif"], default="text")
    check.add_argument("--package-dir", action="append", default=[], metavar="NAME=DIR",
                       help="where a benchmark package's files are (repeatable)")
    for package in profile_packages():  # `--PACKAGE-src DIR`: the same, one flag per profile's package
        check.add_argument(
            f"--{package}-src",
            dest="package_src",
            action=_PackageSrc,
            type=Path,
            metavar="DIR",
            default=[],
            help=f"same as --package-dir {package}=DIR",
        )
    check.add_argument("--python", metavar="PY",
                       help="the benchmark's interpreter: locates its package and gives the state schema")
    check.add_argument("--src", action="append", type=Path, default=[], metavar="DIR",
                       help="more dirs to resolve cited files against")

    for cmd in (check,):
        cfg = cmd.add_mutually_exclusive_group()
        cfg.add_argument(
            "--config", metavar="FILE", help="read [tool.toollint] (contract-dirs) from this file"
        )
        cfg.add_argument("--isolated", action="store_true", help="ignore configuration files")

    listing = sub.add_parser("list", help="list contracts with their clause counts")
    listing.add_argument("paths", nargs="*", type=Path, metavar="DIR", help="contract files or directories")
    listing.add_argument("--output-format", choices=["text", "json"], default="text")

    draft = sub.add_parser("draft", help="write a draft contract for a tool from its docstring, or derived "
                           "contracts from the static findings (--from-findings)")
    draft.add_argument("tool", metavar="TOOLREF", nargs="?", help="package.module:function")
    draft.add_argument("-o", "--output", type=Path, metavar="FILE",
                       help="write here instead of stdout (with --from-findings: a directory, default "
                            "contracts/derived)")
    draft.add_argument("--from-findings", nargs="+", type=Path, metavar="PATH",
                       help="lint PATH and write, per flagged tool, the contract derived from its findings, "
                            "checked once through the benchmark's host (--python)")
    cfg = draft.add_mutually_exclusive_group()
    cfg.add_argument(
        "--config", metavar="FILE", help="with --from-findings: read [tool.toollint] from this file"
    )
    cfg.add_argument(
        "--isolated", action="store_true", help="with --from-findings: ignore configuration files"
    )
    draft.add_argument("--src", action="append", type=Path, default=[], metavar="DIR",
                       help="dir holding the package (or the package dir itself)")
    draft.add_argument("--python", metavar="PY", help="find the package with this interpreter")
    draft.add_argument("--benchmark", help="benchmark name for the header (default: the package name)")
    return parser


def main(argv: list[str] | None = None, settings: Settings | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        args = build_parser().parse_args(argv)
    except _UsageError as exc:
        err.write(f"{exc}\n")
        return EXIT_ERROR
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    try:
        if args.command == "check":
            if settings is None:
                try:
                    settings = resolve_settings(args.paths, config_file=args.config, isolated=args.isolated)
                except ConfigError as exc:
                    err.write(f"toollint contracts check: {exc}\n")
                    return EXIT_ERROR
            return _check(args, settings, out, err)
        if args.command == "list":
            return _list(args, out)
        return _draft(args, out, err)
    except KeyboardInterrupt:
        err.write("toollint contracts: interrupted\n")
        return EXIT_ERROR


def profile_packages() -> list[str]:
    """The packages the benchmark profiles' contracts cite (`source.package`)."""
    from toollint.profiles import all_profiles

    return sorted({p.package for p in all_profiles() if p.package})


class _PackageSrc(argparse.Action):
    """`--PACKAGE-src DIR` -> (PACKAGE, DIR)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        name = (option_string or "").removeprefix("--").removesuffix("-src")
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), (name, values)])


def _package_dirs(args: argparse.Namespace, notes: list[str] | None = None) -> dict[str, Path] | str:
    dirs: dict[str, Path] = {}
    for item in args.package_dir:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            return f"--package-dir expects NAME=DIR, got {item!r}"
        dirs[name] = Path(path)
    for name, path in getattr(args, "package_src", None) or []:
        dirs[name] = path
    for name, path in dirs.items():
        if not path.is_dir():
            return f"package dir for {name!r} is not a directory: {path}"
        dirs[name] = _package_in(name, path, notes if notes is not None else [])
    return dirs


def _package_in(name: str, path: Path, notes: list[str]) -> Path:
    """The package directory `name` at `path`, or inside it when `path` is a checkout's root (`DIR/src/NAME`
    or `DIR/NAME` holding the package): a `--NAME-src` given a checkout's root means its `src/NAME`."""
    if (path / "__init__.py").is_file() or path.name == name:
        return path
    for inner in (path / "src" / name, path / name):
        if (inner / "__init__.py").is_file():
            notes.append(f"package dir for {name!r}: using {inner}, the package inside the checkout {path}")
            return inner
    return path


def _check(args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO) -> int:
    notes: list[str] = []
    dirs = _package_dirs(args, notes)
    if isinstance(dirs, str):
        err.write(f"toollint contracts check: {dirs}\n")
        return EXIT_ERROR
    err.writelines(f"toollint contracts check: note: {note}\n" for note in notes)
    from toollint.dynamic.protocol import SERVICES

    options = ValidationOptions(package_dirs=dirs, python=args.python, services=SERVICES,
                                roots=list(args.src))
    warnings: list[str] = []
    findings = validate(args.paths, settings, options, warn=warnings.append)
    err.writelines(f"toollint contracts check: warning: {message}\n" for message in warnings)
    _report(findings, args.output_format, settings, out, partial=bool(warnings))
    return EXIT_FINDINGS if findings else EXIT_CLEAN


def _report(
    findings: list[Finding], fmt: str, settings: Settings, out: TextIO, partial: bool = False
) -> None:
    if fmt == "json":
        from toollint.reporters import Report
        from toollint.reporters.json_ import write_json

        write_json(Report(findings), out)
    elif fmt == "sarif":
        from toollint.reporters.sarif import SarifOptions, write_sarif

        write_sarif(out, findings, SarifOptions(root=settings.project_root))
    else:
        from toollint.reporters import Report
        from toollint.reporters.text import write_concise

        write_concise(Report(findings), out)
        count = len(findings)
        if count:
            out.write(f"Found {count} contract problem{'s' if count != 1 else ''}.\n")
        else:
            out.write("All contracts passed the checks that could run (see the warnings).\n" if partial
                      else "All contracts passed.\n")


class _ContractRow(TypedDict):
    """One row of `contracts list` (its JSON output's shape)."""

    tool: str
    benchmark: str
    path: str
    clauses: dict[str, int]
    drafts: int
    agent_visible: int
    counted: int


def _list(args: argparse.Namespace, out: TextIO) -> int:
    """One row per loadable contract: tool, benchmark, counted clauses by kind, drafts, agent-visible
    share."""
    contracts, errors = load_contracts(args.paths or bundled_library_dirs())
    rows: list[_ContractRow] = []
    for c in sorted(contracts, key=lambda c: c.tool):
        counted = c.counted_clauses
        rows.append({
            "tool": c.tool, "benchmark": c.benchmark, "path": str(c.path),
            "clauses": {kind: len(c.clauses_of(kind)) for kind in CLAUSE_KINDS if c.clauses_of(kind)},
            "drafts": len(c.clauses) - len(counted),
            "agent_visible": sum(1 for cl in counted if cl.provenance.headline),
            "counted": len(counted),
        })
    if args.output_format == "json":
        json.dump({"contracts": rows, "errors": [str(e) for e in errors]}, out, indent=2)
        out.write("\n")
    else:
        for row in rows:
            kinds = " ".join(f"{k}={n}" for k, n in row["clauses"].items())
            out.write(f"{row['tool']}  [{row['benchmark']}]  {kinds}  agent-visible={row['agent_visible']}/"
                      f"{row['counted']}" + (f"  drafts={row['drafts']}" if row["drafts"] else "") + "\n")
        out.writelines(f"{error}\n" for error in errors)
        out.write(
            f"{len(rows)} contract{'s' if len(rows) != 1 else ''}"
            + (f", {len(errors)} not loadable (run `toollint contracts check`)" if errors else "")
            + "\n"
        )
    return EXIT_FINDINGS if errors else EXIT_CLEAN


def _draft(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.from_findings:
        if args.tool:
            err.write("toollint contracts draft: give a TOOLREF or --from-findings PATH, not both\n")
            return EXIT_ERROR
        return _draft_from_findings(args, out, err)
    if not args.tool:
        err.write(
            "toollint contracts draft: give a TOOLREF (package.module:function) or --from-findings PATH\n"
        )
        return EXIT_ERROR
    from toollint.dynamic.protocol import SERVICES

    resolver = SourceResolver(python=args.python, services=SERVICES)
    try:
        text = draft_contract(args.tool, list(args.src), resolver, args.benchmark)
    except DraftError as exc:
        err.write(f"toollint contracts draft: {exc}\n")
        return EXIT_ERROR
    if args.output is None:
        out.write(text)
        return EXIT_CLEAN
    try:
        from toollint import atomic  # a device, a FIFO or a directory is refused, not replaced

        atomic.write_text(args.output, text)
    except OSError as exc:
        err.write(f"toollint contracts draft: cannot write {args.output}: {exc.strerror or exc}\n")
        return EXIT_ERROR
    err.write(f"wrote {args.output}\n")
    return EXIT_CLEAN


def _draft_from_findings(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Lint the paths, derive each flagged tool's contract, check it once with the benchmark's host,
    and write it; say per tool what it confirms, and per finding why no clause was derived."""
    from toollint.dynamic.confirm import draft_derived
    from toollint.dynamic.protocol import WorkerError

    from toollint.engine import lint_paths
    from toollint.errors import SelectionError

    prog = "toollint contracts draft"
    paths = [str(p) for p in args.from_findings]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        err.write(f"{prog}: {missing[0]}: no such file or directory\n")
        return EXIT_ERROR
    if args.python is not None and not Path(args.python).exists() and shutil.which(args.python) is None:
        err.write(f"{prog}: --python {args.python}: no such file (the benchmark's interpreter)\n")
        return EXIT_ERROR
    try:
        settings = resolve_settings(paths, config_file=args.config, isolated=args.isolated)
        # every premise, the type-only ones too: a drafted contract is how a weak premise gets checked
        result = lint_paths(paths, dataclasses.replace(settings, confidence="low"))
    except (ConfigError, SelectionError) as exc:
        err.write(f"{prog}: {exc}\n")
        return EXIT_ERROR
    findings = [f for r in result.files for f in r.reported]
    directory = args.output or (settings.project_root or Path.cwd()) / "contracts" / "derived"
    if directory.exists() and not directory.is_dir():
        err.write(f"{prog}: -o {directory}: not a directory\n")
        return EXIT_ERROR
    try:
        run = draft_derived(findings, settings, out_dir=directory, python=args.python,
                            linted=[r.path for r in result.files])
    except (ConfigError, WorkerError, OSError) as exc:
        err.write(f"{prog}: {exc}\n")
        return EXIT_ERROR
    by_path = {str(r.contract.path): r for r in run.reports if r.contract is not None}
    written = 0
    for check in run.derived:
        report = by_path.get(str(check.path))
        if check.contract is not None and report is not None:
            written += 1
            confirmed = sorted({f"{row.code} {row.clause_id}" for row in report.violations if row.code})
            untested = [f"{row.clause_id} ({row.reason})" for row in report.clause_rows
                        if row.verdict == "UNTESTABLE" and row.reason]
            if confirmed:
                what = f"confirms {', '.join(confirmed)}"
            elif untested:  # a clause that could not be tested refutes nothing
                what = f"{report.verdict}: confirms nothing"
            elif report.verdict == "CONFORMS":
                what = "CONFORMS: confirms nothing, the findings it tests are refuted"
            else:
                what = f"{report.verdict}: confirms nothing yet"
            if untested:
                what += f"; not tested: {', '.join(untested)}"
            out.write(f"wrote {check.path}: {len(check.contract.counted_clauses)} clause(s); {what}\n")
        elif report is not None and report.error:
            err.write(f"{prog}: {check.tool.qualname}: {report.error}\n")
        for f in check.tool.findings:
            why = check.why_unchecked(f)
            if why:
                err.write(f"  {f.code} {f.path}:{f.line} ({check.tool.qualname}): no derived clause: {why}\n")
    err.writelines(f"{note}\n" for note in run.notes)
    if not findings:
        err.write(f"{prog}: no static finding on {', '.join(paths)}: nothing to derive\n")
    return EXIT_CLEAN if written else EXIT_FINDINGS


if __name__ == "__main__":
    raise SystemExit(main())
