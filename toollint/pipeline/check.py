"""Running `toollint check`: settings, lint (files or stdin), the steps, the report, the exit code."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from toollint import atomic
from toollint.config import SettingsResolver
from toollint.console import Console, Style, printable, use_color
from toollint.engine import RunResult, lint_paths, lint_source
from toollint.errors import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_NOTHING_TESTED,
    StopCheck,
    ToollintError,
    UsageError,
)
from toollint.pipeline import CheckStep, StepContext
from toollint.pipeline.options import CheckOptions
from toollint.reporters import Report, Writer, writer

if TYPE_CHECKING:
    from toollint.cache import ResultCache

STDIN = "-"


def run_check(options: CheckOptions, steps: Sequence[CheckStep], console: Console) -> int:
    """One `toollint check` run; the exit code (0 clean, 1 findings, 2 an error)."""
    try:
        early = _early_cache(options)
        resolver = SettingsResolver(config_file=options.config, isolated=options.isolated,
                                    override=options.overrides)
        settings = resolver.for_run(_config_targets(options))
        outputs = check_outputs(options)
        result = lint(options, resolver, early)
        refuse_overwriting_inputs(outputs, result)
        ctx = StepContext(options, settings, resolver, console)
        for step in steps:
            result = step(ctx, result)
        for note in resolver.notes():
            console.warn(note)
        return report(ctx, result)
    except StopCheck as stop:
        return stop.exit_code
    except ToollintError as exc:
        console.error(str(exc))
        return EXIT_ERROR


def check_outputs(options: CheckOptions) -> list[tuple[str, str]]:
    """Every file the run will write, as (option, path), each checked before any work: a device, a
    FIFO or a directory is refused now, not after a long run."""
    out = options.output
    outputs = [("-o", out.file)] if out.file not in (None, STDIN) else []
    outputs += [("--sarif-output", f) for f in out.sarif_files]
    if options.baseline.write:
        outputs.append(("--write-baseline", options.baseline.write))
    if options.trace.ledger is not None:
        ledger = options.trace.ledger
        base = ledger.with_suffix("") if ledger.suffix in (".csv", ".json") else ledger
        outputs += [("--ledger", str(base.with_name(base.name + suffix))) for suffix in (".csv", ".json")]
    if options.trace.report is not None:
        outputs.append(("--report", str(options.trace.report)))
    for flag, path in outputs:
        try:
            atomic.check_target(path)
        except atomic.NotAFileError as exc:
            raise UsageError(f"{flag} {printable(path)}: {exc.strerror}") from None
    return [(flag, str(path)) for flag, path in outputs]


def refuse_overwriting_inputs(outputs: Sequence[tuple[str, str]], result: RunResult) -> None:
    """A report written over a file being linted would destroy it: `toollint check -o tools.py tools.py`."""
    existing = {}
    for flag, path in outputs:
        identity = _identity(path)
        if identity is not None and not atomic.stream_path(path):
            existing[identity] = (flag, path)
    if not existing:
        return
    for file_result in result.files:
        clash = existing.get(_identity(file_result.path) or (-1, -1))
        if clash is not None:
            flag, path = clash
            raise UsageError(
                f"{flag} {printable(path)} is {printable(file_result.path)}, a file being linted; "
                "refusing to write over it (choose another output file)"
            )


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def reads_stdin(options: CheckOptions) -> bool:
    return STDIN in options.paths


def _config_targets(options: CheckOptions) -> list[str]:
    """The paths configuration is found from; stdin counts as its `--stdin-filename`."""
    stdin_name = options.stdin_filename or str(Path.cwd() / "stdin.py")
    return [stdin_name if p == STDIN else p for p in options.paths]


def lint(options: CheckOptions, resolver: SettingsResolver, early: ResultCache | None = None) -> RunResult:
    files = [p for p in options.paths if p != STDIN]
    if reads_stdin(options) and (options.fixes.fix or options.fixes.diff):
        raise UsageError("--fix and --diff rewrite files; they cannot be used with stdin (-)")
    cache = _cache(options, resolver, early) if files else None
    result = (
        lint_paths(files, resolver, jobs=options.jobs, force_exclude=options.force_exclude, cache=cache)
        if files
        else RunResult(root=resolver.for_run(_config_targets(options)).project_root)
    )
    if cache is not None:
        out = options.output
        if result.checked_count and not result.tool_count and \
                (out.show_tools or (not out.quiet and not result.grader_count)):  # the report names them
            from toollint.reporters.tools import find_candidates

            find_candidates(result)  # before the cache is saved: kept with the results
        cache.save()
    if reads_stdin(options):
        name = options.stdin_filename or STDIN
        settings = resolver.for_path(options.stdin_filename or Path.cwd() / "stdin.py")
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        result.files.append(lint_source(data, name, settings))
    return result


def _cache(
    options: CheckOptions, resolver: SettingsResolver, early: ResultCache | None
) -> ResultCache | None:
    """The run's results cache (`toollint.cache`), unless --no-cache or TOOLLINT_NO_CACHE."""
    if options.no_cache:  # (before the import: a run without the cache needs neither it nor pickle)
        return None
    from toollint.cache import ResultCache, cache_dir_for, disabled_by_environment

    if disabled_by_environment():
        return None
    directory = cache_dir_for(resolver.for_run(_config_targets(options)))
    return early if early is not None and early.directory == directory else ResultCache(directory)


def _early_cache(options: CheckOptions) -> ResultCache | None:
    """The results cache where it is unless `cache-dir` moves it, read before the configuration: the rule
    table it holds lets a configuration's selectors (`select = [...]`) be checked without importing every
    rule and the analysis (a third of a run the cache answers). Any cache file of this toollint holds the
    same table, so a wrong guess costs only the look."""
    if options.no_cache or options.isolated or reads_stdin(options):
        return None
    from toollint.cache import ResultCache, cache_dir_in, disabled_by_environment
    from toollint.config import find_config

    if disabled_by_environment():
        return None
    config = Path(os.path.abspath(options.config)) if options.config else \
        find_config(_config_targets(options))
    early = ResultCache(cache_dir_in(config.parent if config is not None else None))
    early.read()  # now: it hands its rule table to the registry
    return early


# --------------------------------------------------------------------------------------------------
# Report


def report(ctx: StepContext, result: RunResult) -> int:
    """Write the report (stdout or -o), any --sarif-output files, then on stderr the problems and the
    summary line; choose the exit code."""
    out, console = ctx.options.output, ctx.console
    findings = result.findings
    root = ctx.settings.project_root or result.root
    write: Writer
    if out.statistics:
        from toollint.reporters import json_, text

        write = json_.write_statistics_json if out.format == "json" else text.write_statistics
    else:
        write = writer(out.format)
    with _output(out.file) as stream:
        colored = out.format in ("concise", "full") and stream is sys.stdout and use_color(stream, out.color)
        write(Report(findings, root, Style(colored), console.warn, out.sarif_category,
                     out.sarif_include_suppressed, ctx.options.fixes.unsafe), stream)
    if out.sarif_files:  # several outputs in one run; the SARIF is rendered once
        from toollint.reporters.sarif import SarifOptions, render_sarif

        sarif_options = SarifOptions(root=root, category=out.sarif_category,
                                     include_suppressed=out.sarif_include_suppressed,
                                     unsafe_fixes=ctx.options.fixes.unsafe)
        rendered = render_sarif(findings, sarif_options, warn=console.warn)
        for sarif_file in out.sarif_files:
            with _output(sarif_file) as stream:
                stream.write(rendered + "\n")
    for target in result.missing:
        console.error(f"{printable(target)}: no such file or directory")
    for target in result.no_python:
        console.warn(f"no Python files found under {printable(target)}")
    for target, why in result.unusable:
        console.error(f"{printable(target)}: {why}")
    for folder in result.unlisted:
        console.error(
            f"{printable(folder)}: the folder could not be read (TL903); the files in it were not checked"
        )
    for target, what in result.not_regular:
        console.warn(f"{printable(target)}: {what}, not a regular file; skipped")
    for target in result.not_python:
        console.warn(
            f"{printable(target)}: not a Python file (no .py/.pyi suffix or Python #! line); skipped"
        )
    for ref in unmatched_graders(ctx.settings.graders, result):
        console.warn(f"graders: {ref!r} names no function of the linted files; it was not checked")
    if out.show_tools:
        from toollint.reporters.tools import write_tools

        write_tools(result, sys.stderr)
    if out.show_graders:
        from toollint.reporters.tools import write_graders

        write_graders(result, sys.stderr)
    nothing_tested = ctx.untested is not None and not result.reported
    if not out.quiet and not out.show_tools and result.checked_count and not result.tool_count \
            and not result.grader_count and not nothing_tested:
        from toollint.reporters.tools import write_candidates

        write_candidates(result, sys.stderr)  # before "No tools found": what to name, and how
    if nothing_tested:  # said even with --quiet: it is the run's outcome, not a "passed"
        console.write_line(f"{console.style.yellow('Nothing could be tested:')} {ctx.untested}.")
    elif not out.quiet:
        from toollint.reporters.text import summary

        console.write_line(summary(result.reported, result.suppressed_count, checked=result.checked_count,
                                   tools=result.tool_count, writers=result.writer_count,
                                   style=console.style, graders=result.grader_count))
    for line in ctx.closing:
        console.note(line)
    if result.missing or result.unusable or result.unlisted or result.internal_errors or ctx.errors:
        return EXIT_ERROR
    if nothing_tested:
        return EXIT_NOTHING_TESTED
    return EXIT_FINDINGS if result.reported and not out.exit_zero else EXIT_CLEAN


def unmatched_graders(refs: Sequence[str], result: RunResult) -> list[str]:
    """The `graders = [...]` entries no linted file holds (a typo, or a file left out of the run)."""
    found = {(r.module_name, g.qualname) for r in result.files for g in r.graders or []
             if g.found_by == "configured in `graders`"}
    out = []
    for ref in refs:
        module, _, qualname = ref.partition(":")
        if not any(q == qualname and (m == module or m.endswith("." + module) or module.endswith("." + m))
                   for m, q in found):
            out.append(ref)
    return out if result.checked_count else []


@contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """stdout, or a file written whole or not at all (two runs writing it never mix)."""
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        with atomic.atomic_text(path, errors="backslashreplace") as stream:
            yield stream
    except OSError as exc:
        raise UsageError(f"cannot write {printable(path)}: {exc.strerror or exc}") from None

