"""The `toollint` command.

`toollint check PATH...` (or just `toollint PATH...`) runs as: parse arguments -> settings ->
`lint_paths` -> post-process steps (`CHECK_STEPS`) -> report. Other parts of toollint extend it in
three marked places: options of `check` go in `add_check_options`, steps that rewrite the result
(baseline, diff-base, fix, confirm) go in `CHECK_STEPS`, and subcommands that live in another
package go in `DELEGATED` (registered only when their module can be imported).

Exit codes: 0 clean, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from toollint import __version__, baseline, fixes, registry
from toollint.config import ConfigError, resolve_settings
from toollint.dynamic import cli as confirm_cli
from toollint.engine import RunResult, SelectionError, lint_paths
from toollint.settings import Settings
from toollint.trace import check as trace_cli

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ("concise", "text", "full", "json", "sarif")  # "text" is an alias of concise (flake8's word)
EXAMPLES_DIR = Path(__file__).parent / "examples"

# Subcommands implemented elsewhere: name -> (module, function taking argv, help). Each is offered only
# when its module is importable, so nothing half-built shows.
DELEGATED: dict[str, tuple[str, str, str]] = {
    "contracts": ("toollint.contracts.cli", "main", "draft, list and check tool contracts"),
    "validate": ("toollint.validate", "main", "prove the checker: mutation kill rates, controls, gold replay"),
    "replay": ("toollint.dynamic.cli", "replay_main", "replay a recorded witness against a benchmark"),
    "trace": ("toollint.trace.cli", "main", "score at risk: the graded tasks a tool defect exposes"),
}

# Post-processing of a check run, in order: (args, settings, result) -> result. Baseline, diff-base,
# fix and confirm append themselves here (and their options in `add_check_options`).
CheckStep = Callable[[argparse.Namespace, Settings, RunResult], RunResult]
CHECK_STEPS: list[CheckStep] = [baseline.check_step, fixes.check_step, confirm_cli.check_step, trace_cli.check_step]


class UsageError(Exception):
    """Bad arguments found after parsing; reported in one line with exit code 2."""


class StopCheck(Exception):
    """Raised by a check step that has produced the run's whole output (--write-baseline, --diff)."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


def error(message: str) -> None:
    sys.stderr.write(f"toollint: error: {message}\n")


def warn(message: str) -> None:
    sys.stderr.write(f"toollint: warning: {message}\n")


# --- parser ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toollint",
        description="Find where an AI-agent benchmark's tools do not do what they say.",
        epilog="`toollint PATH...` is short for `toollint check PATH...`.",
    )
    parser.add_argument("--version", action="version", version=f"toollint {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_check_command(subparsers)
    add_rule_command(subparsers)
    add_demo_command(subparsers)
    add_delegated_commands(subparsers)
    return parser


def add_check_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = subparsers.add_parser("check", help="lint tool implementations (the default command)")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories")
    add_check_options(check)
    check.set_defaults(handler=run_check)


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `check` and `demo`."""
    out = parser.add_argument_group("output")
    out.add_argument("--output-format", choices=OUTPUT_FORMATS, default="concise")
    out.add_argument("--show-source", action="store_true", help="same as --output-format full")
    out.add_argument("-o", "--output-file", metavar="FILE", help="write the report here instead of stdout")
    out.add_argument("--statistics", action="store_true", help="count findings per code instead of listing")
    out.add_argument("-q", "--quiet", action="store_true", help="no summary or warnings on stderr")
    out.add_argument("--show-tools", action="store_true", help="list each tool (writes? why?) on stderr")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    out.add_argument("--sarif-output", action="append", metavar="FILE", help="also write SARIF to FILE")
    out.add_argument("--sarif-category", metavar="ID", help="SARIF automationDetails.id (GitHub category)")
    out.add_argument("--sarif-include-suppressed", action="store_true", help="keep noqa'd findings in SARIF")
    baseline.add_arguments(parser)
    fixes.add_arguments(parser)
    confirm_cli.add_arguments(parser)
    trace_cli.add_check_options(parser)
    sel = parser.add_argument_group("rule selection (codes, prefixes such as TL1, or kebab-case names)")
    sel.add_argument("--select", type=_selector_list, metavar="CODES", help="replace the selected rules")
    sel.add_argument("--ignore", type=_selector_list, metavar="CODES", help="add to the ignored rules")
    sel.add_argument("--extend-select", type=_selector_list, metavar="CODES", help="add to the selection")
    cfg = parser.add_argument_group("configuration")
    where = cfg.add_mutually_exclusive_group()
    where.add_argument("--config", metavar="FILE", help="read [tool.toollint] from this file")
    where.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    cfg.add_argument("--force-exclude", action="store_true", help="apply exclusions to paths given explicitly")
    cfg.add_argument("--jobs", "-j", type=_jobs, default=0, metavar="N",
                     help="processes to use (default 0: one per CPU, serial for small runs)")


def add_rule_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rule = subparsers.add_parser("rule", help="show a rule's documentation, or list all rules")
    what = rule.add_mutually_exclusive_group(required=True)
    what.add_argument("code", nargs="?", help="a code (TL104) or name (truthiness-on-falsy-legal-arg)")
    what.add_argument("--all", action="store_true", help="list every code")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")
    rule.set_defaults(handler=run_rule)


def add_demo_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser("demo", help="lint the bundled example benchmark and show every rule firing")
    add_check_options(demo)
    demo.set_defaults(handler=run_demo)


def add_delegated_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, (module, _, help_text) in DELEGATED.items():
        if _importable(module):
            sub = subparsers.add_parser(name, help=help_text, add_help=False)
            sub.add_argument("args", nargs=argparse.REMAINDER)


def _importable(module: str) -> bool:
    """Whether the module exists, without importing it or its package (some are slow to import)."""
    package, _, leaf = module.rpartition(".")
    try:
        spec = importlib.util.find_spec(package) if package else importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    if spec is None or not package:
        return spec is not None
    return any(
        (Path(loc) / f"{leaf}.py").is_file() or (Path(loc) / leaf / "__init__.py").is_file()
        for loc in (spec.submodule_search_locations or ())
    )


def _selector_list(text: str) -> list[str]:
    return [s for s in (part.strip() for part in text.replace(" ", ",").split(",")) if s]


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or more")
    return value


# --- main -----------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in DELEGATED and _importable(DELEGATED[args_list[0]][0]):
        return run_delegated(args_list[0], args_list[1:])
    parser = build_parser()
    commands = {"check", "rule", "demo", *DELEGATED}
    if not args_list or (args_list[0] not in commands and args_list[0] not in ("-h", "--help", "--version")):
        args_list = ["check", *args_list]
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse has printed usage and a one-line error
        return EXIT_CLEAN if exc.code in (0, None) else EXIT_ERROR
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        error("interrupted")
        return EXIT_ERROR
    except BrokenPipeError:  # `toollint ... | head`
        sys.stderr.close()
        return EXIT_ERROR
    except Exception as exc:  # no traceback reaches the user unless asked for
        if os.environ.get("TOOLLINT_DEBUG"):
            raise
        error(f"internal error: {type(exc).__name__}: {exc} (set TOOLLINT_DEBUG=1 for a traceback)")
        return EXIT_ERROR


def run_delegated(name: str, argv: list[str]) -> int:
    module_name, function, _ = DELEGATED[name]
    entry = getattr(importlib.import_module(module_name), function, None)
    if entry is None:
        error(f"'{name}' is not available in this installation")
        return EXIT_ERROR
    return int(entry(argv) or 0)


# --- check ----------------------------------------------------------------------------------------


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Configuration file (found, given or none), then the command line over it."""
    settings = resolve_settings(args.paths, config_file=args.config, isolated=args.isolated)
    if args.select is not None:
        settings.select = args.select
    if args.extend_select:
        settings.extend_select = [*settings.extend_select, *args.extend_select]
    if args.ignore:
        settings.ignore = [*settings.ignore, *args.ignore]
    return settings


def run_check(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
        result = lint_paths(args.paths, settings, jobs=args.jobs, force_exclude=args.force_exclude)
        for step in CHECK_STEPS:
            result = step(args, settings, result)
        return report(args, settings, result)
    except StopCheck as stop:
        return stop.exit_code
    except (ConfigError, SelectionError, UsageError) as exc:
        error(str(exc))
        return EXIT_ERROR


def run_demo(args: argparse.Namespace) -> int:
    if not any(EXAMPLES_DIR.glob("**/*.py")):
        error(f"the bundled examples are missing from {EXAMPLES_DIR}")
        return EXIT_ERROR
    args.paths = [str(EXAMPLES_DIR)]
    args.isolated, args.config = True, None  # the demo shows the defaults, whatever the CWD's config
    return run_check(args)


def report(args: argparse.Namespace, settings: Settings, result: RunResult) -> int:
    """Write the report, the warnings and summary (stderr), and choose the exit code."""
    reported = result.reported
    write = choose_writer(args, settings, result)  # before opening -o, so a bad format leaves no file
    with _output(args.output_file) as stream:
        write(stream)
    sarif_files = getattr(args, "sarif_output", None) or []  # several outputs in one run
    if sarif_files:
        write_sarif_file = sarif_writer(args, settings, result)
        for sarif_file in sarif_files:
            with _output(sarif_file) as stream:
                write_sarif_file(stream)
    for target in result.missing:
        error(f"{target}: no such file or directory")
    if getattr(args, "show_tools", False):
        from toollint.reporters.tools import write_tools

        write_tools(result, sys.stderr)
    if not args.quiet:
        from toollint.reporters.text import summary

        for target in result.no_python:
            warn(f"no Python files found under {target}")
        if reported or args.statistics:
            sys.stderr.write(summary(reported, result.suppressed_count) + "\n")
    if result.missing or result.internal_errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if reported and not args.exit_zero else EXIT_CLEAN


def choose_writer(args: argparse.Namespace, settings: Settings, result: RunResult) -> Callable[[TextIO], None]:
    reported = result.reported
    output_format = "concise" if args.output_format == "text" else args.output_format
    if args.show_source and output_format == "concise":
        output_format = "full"
    if args.statistics:
        if output_format == "json":
            from toollint.reporters.json_ import write_statistics_json

            return lambda stream: write_statistics_json(reported, stream)
        from toollint.reporters.text import write_statistics

        return lambda stream: write_statistics(reported, stream)
    if output_format == "sarif":
        return sarif_writer(args, settings, result)
    if output_format == "json":
        from toollint.reporters.json_ import write_json

        return lambda stream: write_json(reported, stream)
    from toollint.reporters.text import write_concise, write_full

    return lambda stream: (write_full if output_format == "full" else write_concise)(reported, stream)


def sarif_writer(args: argparse.Namespace, settings: Settings, result: RunResult) -> Callable[[TextIO], None]:
    try:
        from toollint.reporters.sarif import SarifOptions, render_sarif
    except ImportError:
        raise UsageError("sarif output is not available in this installation") from None
    options = SarifOptions(
        root=settings.project_root,
        category=getattr(args, "sarif_category", None),
        include_suppressed=getattr(args, "sarif_include_suppressed", False),
        unsafe_fixes=getattr(args, "unsafe_fixes", False),
    )
    rendered: list[str] = []

    def write(stream: TextIO) -> None:
        if not rendered:  # once, however many files it goes to (and its warnings once)
            # All findings: the SARIF writer drops suppressed ones unless its options ask for them.
            rendered.append(render_sarif(result.findings, options, warn=warn))
        stream.write(rendered[0] + "\n")

    return write


@contextmanager
def _output(path: str | None):  # type: ignore[no-untyped-def]
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    with stream:
        yield stream


# --- rule -----------------------------------------------------------------------------------------


def run_rule(args: argparse.Namespace) -> int:
    from toollint.reporters.json_ import rule_to_dict

    as_json = args.output_format == "json"
    if args.all:
        rules = registry.all_rules()
        if as_json:
            _print_json([rule_to_dict(r) for r in rules])
        else:
            name_width = max(len(r.name) for r in rules)
            for r in rules:
                print(f"{r.code}  {r.name:<{name_width}}  {r.short}")
        return EXIT_CLEAN
    found = registry.get(args.code)
    if found is None:
        error(f"unknown rule '{args.code}'; `toollint rule --all` lists them")
        return EXIT_ERROR
    if as_json:
        _print_json(rule_to_dict(found))
    else:
        doc = found.doc.strip()
        if not doc.startswith("# "):  # rule modules start with their own title
            doc = f"# {found.name} ({found.code})\n\n{doc}"
        hint = f" Hints at: {found.hint}." if found.hint else ""
        print(f"{doc}\n\nLevel: {found.level}. Precision: {found.precision}.{hint}")
    return EXIT_CLEAN


def _print_json(value: object) -> None:
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    sys.exit(main())
