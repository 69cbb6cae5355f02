"""flake8-style text output: `concise` (one line per finding), `full` (with source context and
the fix hint), `--statistics`, and the summary line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TextIO

from toollint import registry
from toollint.model import Finding

LineSource = Callable[[str], "list[str] | None"]
_NEWLINE = re.compile(r"\r\n|\r|\n")  # the parser's line breaks (str.splitlines also splits on \f)


def concise_line(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}:{finding.col}: {finding.code} [{finding.name}] {finding.message}"


def write_concise(findings: Iterable[Finding], stream: TextIO) -> None:
    stream.writelines(concise_line(finding) + "\n" for finding in findings)


def read_lines(path: str) -> list[str] | None:
    """A file's lines as the parser numbers them, or None when it cannot be read or decoded."""
    from toollint.engine import DecodeProblem, decode_source

    try:
        with open(path, "rb") as handle:
            return _NEWLINE.split(decode_source(handle.read()))
    except (OSError, DecodeProblem):
        return None


def write_full(findings: Iterable[Finding], stream: TextIO, lines_of: LineSource = read_lines) -> None:
    """Each finding, then its source line with the span underlined, the fix hint and related places."""
    cache: dict[str, list[str] | None] = {}
    for finding in findings:
        stream.write(concise_line(finding) + "\n")
        if finding.path not in cache:
            cache[finding.path] = lines_of(finding.path)
        lines = cache[finding.path]
        gutter = len(str(finding.line))
        if lines is not None and 1 <= finding.line <= len(lines):
            text = lines[finding.line - 1].rstrip().replace("\t", " ")
            start = min(max(finding.col - 1, 0), len(text))
            if finding.end_line == finding.line and finding.end_col is not None:
                end = min(max(finding.end_col - 1, start + 1), max(len(text), start + 1))
            else:
                end = max(len(text), start + 1)
            stream.write(f"{' ' * gutter} |\n{finding.line} | {text}\n")
            stream.write(f"{' ' * gutter} | {' ' * start}{'^' * (end - start)}\n")
        if finding.fix is not None:
            stream.write(f"{' ' * gutter} = help: {finding.fix.description}\n")
        stream.writelines(
            f"{' ' * gutter} = note: {r.path}:{r.line}:{r.col}: {r.message}\n" for r in finding.related
        )
        stream.write("\n")


def write_statistics(findings: Iterable[Finding], stream: TextIO) -> None:
    """One row per code, most frequent first (ruff's --statistics)."""
    counts = Counter(f.code for f in findings)
    if not counts:
        stream.write("No findings.\n")
        return
    width = len(str(max(counts.values())))
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = registry.get(code)
        name = rule.name if rule else code.lower()
        short = rule.short if rule else ""
        stream.write(f"{count:>{width}}\t{code}\t[{name}] {short}\n")


def summary(reported: list[Finding], suppressed: int) -> str:
    """`Found 7 findings in 3 files (2 suppressed)`."""
    files = len({f.path for f in reported})
    line = (
        f"Found {len(reported)} finding{'s' if len(reported) != 1 else ''} "
        f"in {files} file{'s' if files != 1 else ''}"
    )
    return line + (f" ({suppressed} suppressed)" if suppressed else "")
