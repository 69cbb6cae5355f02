"""Running `toollint check`: settings, lint (files or stdin), the steps, the report, the exit code."""

from __future__ import annotations

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
        resolver = SettingsResolver(config_file=options.config, isolated=options.isolated,
                                    override=options.overrides)
        settings = resolver.for_run(_config_targets(options))
        result = lint(options, resolver)
        ctx = StepContext(options, settings, resolver, console)
        for step in steps:
            result = step(ctx, result)
        return report(ctx, result)
    except StopCheck as stop:
        return stop.exit_code
    except ToollintError as exc:
        console.error(str(exc))
        return EXIT_ERROR


def reads_stdin(options: CheckOptions) -> bool:
    return STDIN in options.paths


def _config_targets(options: CheckOptions) -> list[str]:
    """The paths configuration is found from; stdin counts as its `--stdin-filename`."""
    stdin_name = options.stdin_filename or str(Path.cwd() / "stdin.py")
    return [stdin_name if p == STDIN else p for p in options.paths]


def lint(options: CheckOptions, resolver: SettingsResolver) -> RunResult:
    files = [p for p in options.paths if p != STDIN]
    if reads_stdin(options) and (options.fixes.fix or options.fixes.diff):
        raise UsageError("--fix and --diff rewrite files; they cannot be used with stdin (-)")
    cache = _cache(options, resolver) if files else None
    result = lint_paths(files, resolver, jobs=options.jobs, force_exclude=options.force_exclude, cache=cache) \
        if files else RunResult(root=resolver.for_run(_config_targets(options)).project_root)
    if cache is not None:
        cache.save()
    if reads_stdin(options):
        name = options.stdin_filename or STDIN
        settings = resolver.for_path(options.stdin_filename or Path.cwd() / "stdin.py")
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        result.files.append(lint_source(data, name, settings))
    return result


def _cache(options: CheckOptions, resolver: SettingsResolver) -> ResultCache | None:
    """The run's results cache (`toollint.cache`), unless --no-cache or TOOLLINT_NO_CACHE."""
    from toollint.cache import ResultCache, cache_dir_for, disabled_by_environment

    if options.no_cache or disabled_by_environment():
        return None
    return ResultCache(cache_dir_for(resolver.for_run(_config_targets(options))))


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
    for target in result.not_python:
        console.warn(f"{printable(target)}: not a Python file (no .py/.pyi suffix or Python #! line); skipped")
    for ref in unmatched_graders(ctx.settings.graders, result):
        console.warn(f"graders: {ref!r} names no function of the linted files; it was not checked")
    if out.show_tools:
        from toollint.reporters.tools import write_tools

        write_tools(result, sys.stderr)
    if out.show_graders:
        from toollint.reporters.tools import write_graders

        write_graders(result, sys.stderr)
    nothing_tested = ctx.untested is not None and not result.reported
    if nothing_tested:  # said even with --quiet: it is the run's outcome, not a "passed"
        console.write_line(f"{console.style.yellow('Nothing could be tested:')} {ctx.untested}.")
    elif not out.quiet:
        from toollint.reporters.text import summary

        console.write_line(summary(result.reported, result.suppressed_count, checked=result.checked_count,
                                   tools=result.tool_count, writers=result.writer_count,
                                   style=console.style, graders=result.grader_count))
    if result.missing or result.internal_errors or ctx.errors:
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

