"""flake8-style text output: `concise` (one line per finding), `full` (with source context and
the fix hint), `--statistics`, and the summary line of every run.

A `--confirm` verdict is shown at the end of a finding's line (`[VIOLATES: WITNESS]`), rendered here
from the finding's properties; the finding's message itself never carries it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TextIO

from toollint import registry
from toollint.console import Style, printable
from toollint.model import Finding
from toollint.reporters import Report, unnoticed_note, verdict_note

LineSource = Callable[[str], "list[str] | None"]
_NEWLINE = re.compile(r"\r\n|\r|\n")  # the parser's line breaks (str.splitlines also splits on \f)


def concise_line(finding: Finding, style: Style | None = None) -> str:
    s = style or Style(False)
    where = (
        f"{s.bold(printable(finding.path))}{s.cyan(':')}{finding.line}{s.cyan(':')}{finding.col}{s.cyan(':')}"
    )
    name = registry.rule_name(finding.code)
    note = verdict_note(finding) + unnoticed_note(finding)
    return f"{where} {s.red(finding.code)} [{name}] {printable(finding.message)}{printable(note)}"


def write_concise(report: Report, stream: TextIO) -> None:
    stream.writelines(concise_line(finding, report.style) + "\n" for finding in report.reported)


def read_lines(path: str) -> list[str] | None:
    """A file's lines as the parser numbers them, or None when it cannot be read or decoded."""
    from toollint.engine import DecodeProblem, decode_source

    try:
        with open(path, "rb") as handle:
            return _NEWLINE.split(decode_source(handle.read()))
    except (OSError, ValueError, DecodeProblem):
        return None


def write_full(report: Report, stream: TextIO, lines_of: LineSource = read_lines) -> None:
    """Each finding, then its source line with the span underlined, the fix hint and related places."""
    style = report.style
    cache: dict[str, list[str] | None] = {}
    for finding in report.reported:
        stream.write(concise_line(finding, style) + "\n")
        if finding.path not in cache:
            cache[finding.path] = lines_of(finding.path)
        lines = cache[finding.path]
        gutter = len(str(finding.line))
        bar = style.cyan("|")
        if lines is not None and 1 <= finding.line <= len(lines):
            text = lines[finding.line - 1].rstrip().replace("\t", " ")
            start = min(max(finding.col - 1, 0), len(text))
            if finding.end_line == finding.line and finding.end_col is not None:
                end = min(max(finding.end_col - 1, start + 1), max(len(text), start + 1))
            else:
                end = max(len(text), start + 1)
            stream.write(f"{' ' * gutter} {bar}\n{style.cyan(str(finding.line))} {bar} {printable(text)}\n")
            stream.write(f"{' ' * gutter} {bar} {' ' * start}{style.red('^' * (end - start))}\n")
        if finding.fix is not None:
            stream.write(f"{' ' * gutter} = {style.bold('help')}: {printable(finding.fix.description)}\n")
        premise = finding.evidence.deciding if finding.evidence is not None else None
        if premise is not None:  # the premise the finding's confidence rests on, with its evidence
            stream.write(f"{' ' * gutter} = {style.bold('premise')} ({finding.confidence.name.lower()} "
                         f"confidence, {premise.kind.value}): {printable(premise.describe())}\n")
        stream.writelines(
            f"{' ' * gutter} = {style.bold('note')}: "
            f"{printable(r.path)}:{r.line}:{r.col}: {printable(r.message)}\n"
            for r in finding.related
        )
        stream.write("\n")


def write_statistics(report: Report, stream: TextIO) -> None:
    """One row per code, most frequent first (ruff's --statistics)."""
    counts = Counter(f.code for f in report.reported)
    if not counts:
        stream.write("No findings.\n")
        return
    width = len(str(max(counts.values())))
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = registry.get(code)
        name = rule.name if rule else code.lower()
        short = rule.short if rule else ""
        stream.write(f"{count:>{width}}\t{code}\t[{name}] {short}\n")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def summary(
    reported: Iterable[Finding], suppressed: int, *, checked: int, tools: int, writers: int | None = None,
    style: Style | None = None, graders: int = 0,
) -> str:
    """The last line of every run, on stderr: what was found, then what was looked at.

    `Found 7 findings in 3 files (2 suppressed). Checked 40 files, 12 tools (5 writers).` or
    `All checks passed! Checked 40 files, 12 tools (5 writers).`; a run that found no tool at all says
    so, since nothing was checked then. The writers are the tools the rules judge: a run that found
    tools but no writer among them had little to check, and the count shows it."""
    s = style or Style(False)
    findings = list(reported)
    looked = f"Checked {_plural(checked, 'file')}, {_plural(tools, 'tool')}"
    looked += f" ({_plural(writers, 'writer')})" if tools and writers is not None else ""
    looked += f", {_plural(graders, 'grader')}." if graders else "."
    if findings:
        files = len({f.path for f in findings})
        head = f"Found {_plural(len(findings), 'finding')} in {_plural(files, 'file')}"
        head += f" ({suppressed:,} suppressed)." if suppressed else "."
        return f"{s.bold(head)} {looked}"
    if checked and not tools and not graders:
        return (f"{s.yellow('No tools found')} in {_plural(checked, 'file')}: nothing was checked "
                "(how toollint finds tools: README, 'How toollint finds tools'; or name them with "
                "`tools`/`tool-decorators` in [tool.toollint]).")
    if not checked:
        return f"{s.yellow('No Python files checked.')}"
    tail = f" ({suppressed:,} suppressed)" if suppressed else ""
    return f"{s.green('All checks passed!')} {looked[:-1]}{tail}."
