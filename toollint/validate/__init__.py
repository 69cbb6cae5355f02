"""`python -m toollint.validate`: measure toollint's own miss and false-alarm rates on injected defects.

    python -m toollint.validate FILE...                    # static half on mutants of any tool modules
    python -m toollint.validate --benchmark NAME --package DIR [--benchmark-python PY] [--confirm]
    python -m toollint.validate --minibank DIR --confirm   # the fixture benchmark
                                                           # (tests/fixtures/mutation/minibank)
    python -m toollint.validate --minibank DIR --confirm --derived   # no contracts: derived oracles only

`--benchmark NAME` is a benchmark profile with a validation driver (`toollint.validate.drivers`);
`--NAME DIR` and `--NAME-python PY` are short for `--benchmark NAME --package DIR` and
`--benchmark NAME --benchmark-python PY`.

`main(argv)` is ready to be a `toollint` subcommand (`toollint validate` is taken by the contract
validator; the prog name shown in messages is a parameter).

Options: --seed N, --budget N (mutants per subject, sampled evenly over classes and operators),
--operators a,b, --json FILE, --html FILE, --fail-under RATE (overall) and --fail-under-class RATE
(per class); exit 1 when a floor is missed or a negative control is flagged, 2 on bad input. See
docs/validation.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toollint import atomic
from toollint.validate.drivers import validating_profiles
from toollint.validate.mutation import OPERATORS_BY_NAME

if TYPE_CHECKING:
    from toollint.validate.harness import Subject

__all__ = ["main"]


PROG = "toollint validate"


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", type=Path, help="tool modules to mutate (static half only)")
    p.add_argument("--benchmark", metavar="NAME", help="the benchmark profile whose tool modules are mutated")
    p.add_argument("--package", type=Path, metavar="DIR", help="the benchmark's installed package directory")
    p.add_argument(
        "--benchmark-python", metavar="PY", help="interpreter of the benchmark's venv (for --confirm)"
    )
    for profile in validating_profiles():
        p.add_argument(f"--{profile.name}", action=_ProfileOption, dest="package", type=Path, metavar="DIR",
                       help=f"same as --benchmark {profile.name} --package DIR")
        p.add_argument(
            f"--{profile.name}-python",
            action=_ProfileOption,
            dest="benchmark_python",
            metavar="PY",
            help=f"same as --benchmark {profile.name} --benchmark-python PY",
        )
    p.add_argument("--modules", help="comma-separated tool modules of the benchmark (default: all)")
    p.add_argument("--minibank", type=Path, metavar="DIR", help="the minibank fixture benchmark directory")
    p.add_argument("--confirm", action="store_true", help="also run the dynamic half on every mutant")
    p.add_argument("--cold", action="store_true",
                   help="start every host afresh instead of forking it from a warm interpreter")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="with --confirm, run N tool modules' dynamic halves at once (default 1)")
    p.add_argument("--derived", action="store_true",
                   help="with --confirm: no contracts, only the oracles each mutant's own findings imply "
                        "(toollint.validate.derived)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=int, default=None, help="mutants per subject (default: all)")
    p.add_argument("--operators", help="comma-separated operator names (default: all)")
    p.add_argument("--json", type=Path, metavar="FILE", help="write the JSON tables here ('-' for stdout)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write the tables as an HTML section here")
    p.add_argument(
        "--fail-under", type=float, default=None, metavar="RATE", help="overall kill-rate floor, 0-1"
    )
    p.add_argument(
        "--fail-under-class", type=float, default=None, metavar="RATE", help="per-class floor, 0-1"
    )
    p.add_argument("--quiet", action="store_true", help="no survivor list in the text output")
    return p


class UsageError(Exception):
    pass


class _ProfileOption(argparse.Action):
    """`--NAME DIR` / `--NAME-python PY`: set the value and remember which profile named it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        name = (option_string or "").removeprefix("--").removesuffix("-python")
        named = [*(getattr(namespace, "profile_options", None) or []), (name, option_string)]
        namespace.profile_options = named


def _readable_python(f: Path) -> None:
    """One-line errors for files the operators cannot work on."""
    if not f.is_file():
        raise UsageError(f"{f}: no such file")
    try:
        text = f.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{f}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"{f}: cannot read ({exc.strerror})") from None
    try:
        compile(text, str(f), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise UsageError(f"{f}:{exc.lineno or 1}: not valid Python ({exc.msg})") from None
    except ValueError as exc:  # null bytes
        raise UsageError(f"{f}: not valid Python ({exc})") from None


def _benchmark(args: argparse.Namespace) -> tuple[str | None, str]:
    """The benchmark named by `--benchmark` or a `--NAME...` option (they must agree), and the
    option that gives its interpreter, for messages."""
    named = {name for name, _ in getattr(args, "profile_options", None) or []}
    if args.benchmark:
        named.add(args.benchmark)
    if len(named) > 1:
        raise UsageError(f"options name more than one benchmark: {', '.join(sorted(named))}")
    name = next(iter(named), None)
    python_flag = "--benchmark-python"
    if name and any(opt == f"--{name}" for _, opt in getattr(args, "profile_options", None) or []):
        python_flag = f"--{name}-python"
    return name, python_flag


def _subjects(args: argparse.Namespace) -> list[Subject]:
    from toollint.validate.drivers import driver_for
    from toollint.validate.harness import Subject
    from toollint.validate.subjects import minibank_subject

    out = []
    for f in args.files:
        _readable_python(f)
        out.append(Subject(f.stem, f, f.stem))
    name, python_flag = _benchmark(args)
    if name is not None and args.package is None:
        raise UsageError(f"benchmark {name} needs its package directory (--package DIR)")
    if args.package is not None:
        if name is None:
            raise UsageError("--package needs --benchmark NAME (which benchmark the package is)")
        try:
            driver = driver_for(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        problem = driver.check_package(args.package)
        if problem:
            raise UsageError(problem)
        if hasattr(driver, "for_package"):
            driver = driver.for_package(args.package)
        python = args.benchmark_python if args.confirm else None
        if args.confirm and not python:
            raise UsageError(f"--confirm on {driver.label} needs {python_flag} (its venv's interpreter)")
        modules = args.modules.split(",") if args.modules else None
        # With the venv's interpreter (even static-only) the benchmark says which tools an agent can call.
        registered = None
        if args.benchmark_python:
            try:
                registered = driver.registered_tools(args.benchmark_python)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        found = driver.subjects(args.package, python, modules, registered)
        if not found and not modules:
            raise UsageError(f"{driver.label} at {args.package}: no tool module to mutate (its profile "
                             "hosts none yet)")
        out.extend(found)
    if args.minibank is not None:
        if not (args.minibank / "bank.py").is_file():
            raise UsageError(f"{args.minibank}: not the minibank fixture (no bank.py inside)")
        out.append(minibank_subject(args.minibank.resolve(), dynamic=args.confirm))
    if not out:
        raise UsageError(
            "nothing to validate: give tool modules, --benchmark NAME --package DIR or --minibank DIR"
        )
    return out


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    from toollint.validate import report
    from toollint.validate.harness import run

    parser = _parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed a one-line usage error
        return 0 if exc.code == 0 else 2
    try:
        ops = args.operators.split(",") if args.operators else None
        unknown = [o for o in ops or [] if o not in OPERATORS_BY_NAME]
        if unknown:
            raise UsageError(f"unknown operator(s) {', '.join(unknown)}; known: "
                             f"{', '.join(OPERATORS_BY_NAME)}")
        if args.budget is not None and args.budget < 1:
            raise UsageError("--budget must be at least 1")
        if args.jobs < 1:
            raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
        for name in ("fail_under", "fail_under_class"):
            value = getattr(args, name)
            if value is not None and not 0 <= value <= 1:
                raise UsageError(f"--{name.replace('_', '-')} is a rate between 0 and 1, got {value}")
        subjects = _subjects(args)
        from toollint.console import Console

        progress = Console().progress("validate")  # one line, redrawn, on a terminal only
        if args.derived and not args.confirm:
            raise UsageError("--derived needs --confirm (it replaces the contracts of the dynamic half)")
        runner = None
        if args.derived:
            from toollint.validate.derived import DerivedRunner

            runner = DerivedRunner
        result = run(subjects, seed=args.seed, budget=args.budget, dynamic=args.confirm, operators=ops,
                     progress=progress if progress.enabled else None, warm=not args.cold,
                     jobs=args.jobs, runner=runner)
        progress.done()
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    data = report.to_json(result)
    try:  # whole files or none; a device, a FIFO or a directory is refused, not replaced
        if args.json is not None:
            text = json.dumps(data, indent=2)
            if str(args.json) == "-":
                print(text)
            else:
                atomic.write_text(args.json, text + "\n")
        if args.html is not None:
            atomic.write_text(args.html, report.to_html(data) + "\n")
    except OSError as exc:
        print(f"{prog}: error: cannot write {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json is None or str(args.json) != "-":
        print(report.to_text(result, survivors=not args.quiet))
    failures = report.floor_failures(result, args.fail_under or 0.0, args.fail_under_class or 0.0)
    if data["controls"]["false_positives"]:
        failures.append(f"{len(data['controls']['false_positives'])} negative control flag(s)")
    for f in failures:
        print(f"{prog}: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
