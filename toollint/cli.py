"""The `toollint` command: arguments in, a typed pipeline run, an exit code out.

`toollint check PATH...` (or just `toollint PATH...`) parses its arguments into one `CheckOptions`
and runs `toollint.pipeline.check.run_check` with the steps in `CHECK_STEPS`. Other parts of toollint
extend it in three marked places: options of `check` go in `add_check_options` (the groups of the
steps in `toollint.pipeline.options.add_step_arguments`), steps that rewrite the result (baseline, fix,
confirm, trace) go in `CHECK_STEPS`, and subcommands that live in another package go in `DELEGATED`
(registered only when their module can be imported). Nothing imports this module.

Exit codes: 0 clean, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

# Only what every command needs: `--version`, `rule` and the delegated subcommands import neither the
# parser's modules nor the check steps'; building the parser of `check` imports those.
from toollint import __version__
from toollint.console import Console
from toollint.errors import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    ConfigError,
    StopCheck,
    ToollintError,
    UsageError,
)

if TYPE_CHECKING:  # the engine is imported only by a run that lints
    import argparse

    from toollint.engine import RunResult
    from toollint.pipeline import CheckStep, StepContext
    from toollint.pipeline.options import CheckOptions

__all__ = ["CHECK_STEPS", "EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "StopCheck", "UsageError", "main"]

EXAMPLES_DIR = Path(__file__).parent / "examples"

# Subcommands implemented elsewhere: name -> (module, function taking argv, help). Each is offered only
# when its module is importable, so nothing half-built shows.
DELEGATED: dict[str, tuple[str, str, str]] = {
    "contracts": ("toollint.contracts.cli", "main", "draft, list and check tool contracts"),
    "validate": (
        "toollint.validate",
        "main",
        "prove the checker: mutation kill rates, controls, gold replay",
    ),
    "replay": ("toollint.dynamic.cli", "replay_main", "replay a recorded witness against a benchmark"),
    "trace": ("toollint.trace.cli", "main", "score at risk: the graded tasks a tool defect exposes"),
    "audit-graders": ("toollint.validate.audit", "main",
                      "run each task's graders on wrong runs: vacuous graders, unchecked effects and fields"),
    "confirm": ("toollint.dynamic.starter", "main", "set up --confirm for a benchmark no profile hosts"),
}

# What runs after linting, in order (see toollint.pipeline): the `benchmark` setting checked against the
# profiles, --diff-base/--baseline/--write-baseline,
# --fix/--diff, --confirm, --audit-graders, --ledger/--report.
def known_benchmark_step(ctx: StepContext, result: RunResult) -> RunResult:
    """The first step of every `toollint check` run: `benchmark = "NAME"` must name a registered
    profile, in a static run too (which never picks one), so a typo is said, not silently kept."""
    name, config = ctx.settings.benchmark, ctx.settings.config_file
    if not name:
        return result
    from toollint import profiles  # the profile registry: only a run whose configuration names one

    if name != profiles.NO_PROFILE and profiles.find_profile(name) is None:
        where = f"'benchmark' in {config} [tool.toollint]" if config else "'benchmark' in [tool.toollint]"
        raise ConfigError(f"{where}: {profiles.unknown_profile_message(name)}")
    return result


class StepOf:
    """The `check_step` of a module, imported when the step has something to do: when an option of its
    group of the run's options (`CheckOptions.<group>`) was given. Each step returns the result as it is
    without one, and a run that asks for no baseline, fix, confirmation, audit or trace imports none."""

    def __init__(self, module: str, group: str) -> None:
        self.module = module
        self.group = group

    def __call__(self, ctx: StepContext, result: RunResult) -> RunResult:
        given = getattr(ctx.options, self.group)
        if given == type(given)():
            return result
        step: CheckStep = importlib.import_module(self.module).check_step
        return step(ctx, result)


CHECK_STEPS: tuple[CheckStep, ...] = (
    known_benchmark_step,
    *(StepOf(module, group) for module, group in (
        ("toollint.baseline", "baseline"), ("toollint.fixes", "fixes"), ("toollint.dynamic.cli", "confirm"),
        ("toollint.pipeline.audit", "audit"), ("toollint.trace.check", "trace"))),
)


# --- parser ---------------------------------------------------------------------------------------


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `command`, only that subcommand's parser: a run parses one command,
    and the others' options and the look-ups of which delegated subcommands exist cost it ~1 ms."""
    import argparse  # here and below: `toollint --version` builds no parser
    parser = argparse.ArgumentParser(
        prog="toollint",
        description="Find where an AI-agent benchmark's tools do not do what they say.",
        epilog="`toollint PATH...` is short for `toollint check PATH...`.",
    )
    parser.add_argument("--version", action="version", version=f"toollint {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add_command in (("check", add_check_command), ("rule", add_rule_command),
                              ("demo", add_demo_command)):
        if command in (None, name):
            add_command(subparsers)
    if command is None:
        add_delegated_commands(subparsers)
    return parser


def add_check_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = subparsers.add_parser("check", help="lint tool implementations (the default command)")
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files or directories (default: .); - reads the file from stdin")
    add_check_options(check)
    show = check.add_argument_group("what a run would use (print it and exit 0, linting nothing)")
    show.add_argument(
        "--show-settings",
        action="store_true",
        help="the configuration file and resolved settings of the first file, and the codes enabled",
    )
    show.add_argument("--show-files", action="store_true", help="each file the run would lint, one a line")
    check.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: CODES` to the line of every current finding (kept codes stay; "
                            "after --baseline/--diff-base, only on what they let through) and exit 0")
    check.set_defaults(handler=run_check_command)


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `check` and `demo`."""
    from toollint.pipeline.options import add_step_arguments
    from toollint.reporters import FORMATS

    out = parser.add_argument_group("output")
    out.add_argument("--output-format", choices=tuple(FORMATS), default="concise",
                     help="; ".join(f"{name}: {what}" for name, (_, _, what) in FORMATS.items()))
    out.add_argument("--show-source", action="store_true", help="same as --output-format full")
    out.add_argument("-o", "--output-file", metavar="FILE", help="write the report here instead of stdout")
    out.add_argument("--statistics", action="store_true", help="count findings per code instead of listing")
    out.add_argument("-q", "--quiet", action="store_true", help="no summary or warnings on stderr")
    out.add_argument("--show-tools", action="store_true", help="list each tool (writes? why?) on stderr")
    out.add_argument(
        "--show-graders",
        action="store_true",
        help="list each grader and what its verdict rests on (state or the agent's record) on stderr",
    )
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour the text report and messages (auto: on a terminal, honouring NO_COLOR "
                     "and FORCE_COLOR)")
    out.add_argument("--sarif-output", action="append", metavar="FILE", help="also write SARIF to FILE")
    out.add_argument("--sarif-category", metavar="ID", help="SARIF automationDetails.id (GitHub category)")
    out.add_argument("--sarif-include-suppressed", action="store_true", help="keep noqa'd findings in SARIF")
    add_step_arguments(parser)
    sel = parser.add_argument_group("rule selection (codes, prefixes such as TL1, or kebab-case names)")
    sel.add_argument("--select", type=_selection, metavar="CODES", help="replace the selected rules")
    sel.add_argument("--ignore", type=_selector_list, metavar="CODES", help="add to the ignored rules")
    sel.add_argument("--extend-select", type=_selector_list, metavar="CODES", help="add to the selection")
    sel.add_argument("--confidence", choices=("low", "medium", "high"),
                     help="report findings whose premise has at least this confidence (default: medium; "
                     "low adds premises read from a type or a name alone)")
    cfg = parser.add_argument_group("configuration")
    where = cfg.add_mutually_exclusive_group()
    where.add_argument("--config", metavar="FILE", help="read [tool.toollint] from this file")
    where.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    cfg.add_argument(
        "--force-exclude", action="store_true", help="apply exclusions to paths given explicitly"
    )
    cfg.add_argument("--no-respect-gitignore", action="store_true",
                     help="lint files that .gitignore files ignore too")
    cfg.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="the file name stdin (-) is linted under: its configuration and how findings name it",
    )
    cfg.add_argument("--jobs", "-j", type=_jobs, default=0, metavar="N",
                     help="processes to use (default 0: one per idle CPU, serial for small runs)")
    cfg.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the results cache (.toollint_cache; also TOOLLINT_NO_CACHE=1)",
    )


def add_rule_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rule = subparsers.add_parser("rule", help="show a rule's documentation, or list all rules")
    what = rule.add_mutually_exclusive_group(required=True)
    what.add_argument("code", nargs="?", help="a code (TL104) or name (truthiness-on-falsy-legal-arg)")
    what.add_argument("--all", action="store_true", help="list every code")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")
    rule.set_defaults(handler=run_rule)


def add_demo_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser(
        "demo", help="lint the bundled example benchmark: each tool rule and a grader rule firing"
    )
    add_check_options(demo)
    demo.set_defaults(handler=run_demo)


def add_delegated_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    import argparse
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


def _selection(text: str) -> list[str]:
    """--select: an empty one would run no rule and pass every file."""
    import argparse

    selectors = _selector_list(text)
    if not selectors:
        raise argparse.ArgumentTypeError(
            "names no rule; give codes such as TL1,TL4 or leave --select out for the default rules"
        )
    return selectors


def _jobs(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or more")
    return value


# --- main -----------------------------------------------------------------------------------------


# The cyclic GC's thresholds for a run. Start-up makes ~30k objects (modules, classes, the rules' tables)
# that live as long as the run: at the default (700) they cause ~25 young collections that free nothing,
# 5 ms of a small tree's run (mypy raises its thresholds for the same reason). The engine turns the
# collector off while it lints; `python -m toollint` sets these before its first import.
RUN_GC_THRESHOLDS = (100_000, 50, 100)


def main(argv: Sequence[str] | None = None) -> int:
    thresholds = gc.get_threshold()
    gc.set_threshold(*RUN_GC_THRESHOLDS)
    try:
        return _main(argv)
    finally:
        gc.set_threshold(*thresholds)  # a caller that goes on (a test session) keeps its own


def run() -> None:
    """The `toollint` command (console script and `python -m toollint`): `main`, then out of the process
    without tearing its heap down. Freeing every module, class and tree one by one is 20-40 ms after the
    work is done (mypy leaves the same way); the exit handlers still run and the streams are flushed, and a
    process with another thread still running, under a profiler or tracer (which writes its data after the
    program, `python -m cProfile -m toollint`), or whose output cannot be flushed, ends the usual way."""
    code = main()
    import atexit

    threading = sys.modules.get("threading")  # not imported (most runs): no thread was started through it
    if (threading is None or threading.active_count() == 1) and sys.getprofile() is None \
            and sys.gettrace() is None:
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:  # (None: started with the descriptor closed, `toollint >&-`)
                    stream.flush()
        except (OSError, ValueError):
            sys.exit(code)  # Python's own ending reports (or silences) what the flush met
        atexit._run_exitfuncs()  # what sys.exit would run first: the dynamic half's hosts are stopped here
        os._exit(code)
    sys.exit(code)


def _main(argv: Sequence[str] | None) -> int:
    _tolerant_streams()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # without building the parser (and importing every step's options)
        print(f"toollint {__version__}")
        return EXIT_CLEAN
    if args_list and args_list[0] in DELEGATED and _importable(DELEGATED[args_list[0]][0]):
        # The same error path as every other subcommand (broken pipe, interrupt, internal error).
        return _guarded(lambda: run_delegated(args_list[0], args_list[1:]), Console())
    commands = {"check", "rule", "demo", *DELEGATED}
    if not args_list or (args_list[0] not in commands and args_list[0] not in ("-h", "--help", "--version")):
        if (hint := _misspelt_command(args_list[0] if args_list else "", commands)) is not None:
            Console().error(hint)
            return EXIT_ERROR
        args_list = ["check", *args_list]
    parser = build_parser(args_list[0] if args_list[0] in ("check", "rule", "demo") else None)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse has printed usage and a one-line error
        return EXIT_CLEAN if exc.code in (0, None) else EXIT_ERROR
    console = Console(quiet=bool(getattr(args, "quiet", False)), color=getattr(args, "color", "auto"))
    return _guarded(lambda: int(args.handler(args, console)), console)


def _misspelt_command(word: str, commands: set[str]) -> str | None:
    """`toollint chek .`: a first word that is no path but close to a command is a misspelt command,
    not a missing file (`toollint PATH...` still means `check`)."""
    if not word or word.startswith("-") or os.path.lexists(word) or any(c in word for c in "/\\."):
        return None
    import difflib

    close = difflib.get_close_matches(word, sorted(commands), n=1, cutoff=0.6)
    if not close:
        return None
    return f"'{word}' is neither a command nor a file or directory; did you mean `toollint {close[0]}`?"


def _guarded(run: Callable[[], int], console: Console) -> int:
    """Run a subcommand with the CLI's one error path: a closed pipe (`toollint ... | head`) ends the
    run silently with exit 0, as ruff does (the reader stopped reading); an interrupt or any other
    failure is one line on stderr and exit 2, never a traceback unless TOOLLINT_DEBUG is set."""
    try:
        code = run()
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except KeyboardInterrupt:
        console.error("interrupted")
        return EXIT_ERROR
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_CLEAN
    except ToollintError as exc:
        console.error(str(exc))
        return EXIT_ERROR
    except Exception as exc:  # no traceback reaches the user unless asked for
        if os.environ.get("TOOLLINT_DEBUG"):
            raise
        console.error(f"internal error: {type(exc).__name__}: {exc} (set TOOLLINT_DEBUG=1 for a traceback)")
        return EXIT_ERROR


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does not print
    "Exception ignored ... BrokenPipeError" (the recipe of Python's signal module documentation)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind stdout (a test's StringIO)
        pass


def _tolerant_streams() -> None:
    """Whatever the terminal's encoding, a report never dies on a character it cannot show."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a detached or closed stream
                pass


def run_delegated(name: str, argv: list[str]) -> int:
    module_name, function, _ = DELEGATED[name]
    entry = getattr(importlib.import_module(module_name), function, None)
    if entry is None:
        Console().error(f"'{name}' is not available in this installation")
        return EXIT_ERROR
    return int(entry(argv) or 0)


# --- check ----------------------------------------------------------------------------------------


def check_options(args: argparse.Namespace, command: str = "check") -> CheckOptions:
    """The options object of a run, built once; the only reader of the parsed namespace."""
    import dataclasses

    from toollint.pipeline.options import CheckOptions

    options = CheckOptions.from_namespace(args, command)
    if not options.paths:
        options = dataclasses.replace(options, paths=("-",) if options.stdin_filename else (".",))
    return options


def run_check_command(args: argparse.Namespace, console: Console) -> int:
    from toollint.pipeline.check import run_check  # the engine: not for --help, `rule` or a subcommand

    if args.show_settings or args.show_files:
        from toollint.pipeline.show import run_show

        return run_show(check_options(args), console, settings=args.show_settings, files=args.show_files)
    if args.add_noqa:
        from toollint import add_noqa, baseline

        return run_check(check_options(args), (baseline.check_step, add_noqa.check_step), console)
    return run_check(check_options(args), CHECK_STEPS, console)


def run_demo(args: argparse.Namespace, console: Console) -> int:
    if not any(EXAMPLES_DIR.glob("**/*.py")):
        console.error(f"the bundled examples are missing from {EXAMPLES_DIR}")
        return EXIT_ERROR
    import dataclasses

    options = check_options(args, "demo")
    # The demo shows the defaults, whatever the working directory's configuration; and toollint's own
    # files are no user's to ignore: Python 3.13's venv writes a `.gitignore` of `*` into the venv.
    options = dataclasses.replace(options, paths=(str(EXAMPLES_DIR),), isolated=True, config=None,
                                  overrides=dataclasses.replace(options.overrides, respect_gitignore=False),
                                  no_cache=True)
    from toollint.pipeline.check import run_check

    return run_check(options, CHECK_STEPS, console)


# --- rule -----------------------------------------------------------------------------------------


def run_rule(args: argparse.Namespace, console: Console) -> int:
    from toollint import registry
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
        console.error(f"unknown rule '{args.code}'; `toollint rule --all` lists them")
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
    import json

    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    sys.exit(main())
