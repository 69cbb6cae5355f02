"""Autofixes: `--fix`, `--unsafe-fixes`, `--diff`.

A fix is a set of text edits (`model.Fix` of `model.Edit`s), so applying it touches nothing but the
replaced ranges: formatting and comments elsewhere are preserved byte for byte, CRLF included.
Rules may attach a fix to their finding (TL104 does: `if amount:` -> `if amount is not None:` when the
parameter defaults to None, marked safe); fixes no rule attaches are computed here (TL102: uncomment
the guard, marked unsafe because it changes which calls succeed).

Every fixed file is re-parsed with libcst before it is written; a fix whose result does not parse is
dropped, never written. Fixes whose edits overlap an earlier fix's wait for the next run, as in ruff.
"""

from __future__ import annotations

import argparse
import difflib
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toollint.model import Edit, Finding, Fix

if TYPE_CHECKING:
    from toollint.engine import RunResult
    from toollint.settings import Settings

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class FixError(Exception):
    """A file could not be fixed (unreadable, unwritable); one line for the user."""


# --------------------------------------------------------------------------------------------------
# Computing fixes


def _lines(source: str) -> list[str]:
    return _LINE_BREAK.split(source)


def uncomment_guard(finding: Finding, source: str) -> Fix | None:
    """TL102: turn the commented-out guard's lines back into code, at the comment's indentation."""
    lines = _lines(source)
    end_line = finding.end_line or finding.line
    if not 1 <= finding.line <= end_line <= len(lines):
        return None
    numbers = range(finding.line, end_line + 1)
    split = []  # (indentation, comment text) per line
    for number in numbers:
        text = lines[number - 1]
        indent = text[: len(text) - len(text.lstrip())]
        if not text[len(indent) :].startswith("#"):
            return None  # the range is not the run of comment lines the rule reported
        split.append((indent, text[len(indent) + 1 :]))
    # "# " is the usual comment marker; drop its space only when every line has it, so the guard's
    # own relative indentation survives either way.
    marker_space = all(body.startswith(" ") or not body for _, body in split)
    edits = [
        Edit(
            finding.path,
            number,
            1,
            number,
            len(indent) + 1 + len(body) + 1,
            indent + (body[1:] if marker_space else body),
        )
        for number, (indent, body) in zip(numbers, split)
    ]
    guard = str(finding.properties.get("guard", "")).splitlines()
    what = f" `{guard[0]}`" if guard else ""
    fix = Fix(f"Uncomment the guard{what}", tuple(edits), safe=False)
    return fix if parses(apply_edits(source, fix.edits)) else None


COMPUTED = {"TL102": uncomment_guard}


def fix_for(finding: Finding, source: str) -> Fix | None:
    """The rule's own fix, else one computed here, else None."""
    if finding.fix is not None:
        return finding.fix
    compute = COMPUTED.get(finding.code)
    return compute(finding, source) if compute else None


# --------------------------------------------------------------------------------------------------
# Applying fixes


def parses(source: str) -> bool:
    import libcst

    try:
        libcst.parse_module(source)
    except (libcst.ParserSyntaxError, SyntaxError, ValueError):
        return False
    return True


def _offsets(source: str) -> list[int]:
    """Offset of the start of each line (1-based index), plus one past the end."""
    starts = [0, 0]
    starts.extend(m.end() for m in _LINE_BREAK.finditer(source))
    starts.append(len(source))
    return starts


def _offset(starts: list[int], line: int, col: int) -> int:
    line = min(max(line, 1), len(starts) - 2)
    return min(starts[line] + col - 1, starts[-1])


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (1-based positions, exclusive end) to `source`."""
    starts = _offsets(source)
    spans = sorted(
        (
            (_offset(starts, e.line, e.col), _offset(starts, e.end_line, e.end_col), e.replacement)
            for e in edits
        ),
        reverse=True,
    )
    out = source
    for start, end, replacement in spans:
        out = out[:start] + replacement + out[end:]
    return out


@dataclass
class FileFixes:
    path: str
    original: str
    fixed: str
    applied: list[Finding] = field(default_factory=list)
    unsafe_skipped: int = 0  # fixes that exist but need --unsafe-fixes


def fix_source(path: str, source: str, findings: Sequence[Finding], unsafe: bool) -> FileFixes:
    """Apply every applicable fix for `findings` in one file."""
    outcome = FileFixes(path, source, source)
    taken: list[tuple[int, int]] = []  # accepted (start, end) offsets, to refuse overlaps
    accepted: list[tuple[Finding, Fix]] = []
    starts = _offsets(source)
    for f in sorted(findings, key=Finding.sort_key):
        if f.suppressed:
            continue
        fix = fix_for(f, source)
        if fix is None or not fix.edits or any(e.path != path for e in fix.edits):
            continue
        if not fix.safe and not unsafe:
            outcome.unsafe_skipped += 1
            continue
        spans = [(_offset(starts, e.line, e.col), _offset(starts, e.end_line, e.end_col)) for e in fix.edits]
        if any((s < te and ts < e) or s == ts for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        accepted.append((f, fix))
    if not accepted:
        return outcome
    fixed = apply_edits(source, [e for _, fix in accepted for e in fix.edits])
    if not parses(fixed):
        # Each fix parses on its own (or came from a rule); keep the largest prefix that still parses.
        while accepted and not parses(fixed):
            accepted.pop()
            fixed = apply_edits(source, [e for _, fix in accepted for e in fix.edits])
    outcome.fixed = fixed
    outcome.applied = [f for f, _ in accepted]
    return outcome


def unified_diff(outcome: FileFixes) -> str:
    return "".join(
        difflib.unified_diff(
            outcome.original.splitlines(keepends=True),
            outcome.fixed.splitlines(keepends=True),
            fromfile=f"a/{outcome.path}",
            tofile=f"b/{outcome.path}",
        )
    )


def _read(path: str) -> tuple[str, str]:
    """Text and the encoding to write it back with (a BOM or coding cookie is kept)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FixError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, UnicodeDecodeError, LookupError):
        raise FixError(f"cannot decode {path}; not fixing it") from None


def _write(path: str, text: str, encoding: str) -> None:
    try:
        Path(path).write_bytes(text.encode(encoding))
    except (OSError, UnicodeEncodeError) as exc:
        raise FixError(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}") from None


# --------------------------------------------------------------------------------------------------
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


def attach_fixes(findings: Iterable[Finding], sources: dict[str, str]) -> None:
    """Give findings the fixes computed here (so SARIF can show them); `sources` by finding path."""
    for f in findings:
        if f.fix is None and f.code in COMPUTED and f.path in sources:
            f.fix = fix_for(f, sources[f.path])


def check_step(args: argparse.Namespace, settings: Settings, result: RunResult) -> RunResult:
    """--fix writes fixes and reports what remains; --diff prints them and ends the run (exit 1 if any)."""
    from toollint.cli import StopCheck, UsageError

    do_fix, do_diff = getattr(args, "fix", False), getattr(args, "diff", False)
    unsafe = getattr(args, "unsafe_fixes", False)
    if not (do_fix or do_diff or unsafe):
        return result
    if do_fix and getattr(args, "command", None) == "demo":
        raise UsageError("--fix would rewrite toollint's bundled examples; use --diff with demo")
    quiet = getattr(args, "quiet", False)
    fixed_count = files_changed = unsafe_skipped = 0
    diffs: list[str] = []
    try:
        for file_result in result.files:
            candidates = [
                f
                for f in file_result.findings
                if not f.suppressed and (f.fix is not None or f.code in COMPUTED)
            ]
            if not candidates:
                continue
            text, encoding = _read(file_result.path)
            attach_fixes(candidates, {file_result.path: text})
            if not (do_fix or do_diff):
                continue  # --unsafe-fixes alone: fixes attached for SARIF only
            outcome = fix_source(file_result.path, text, candidates, unsafe)
            unsafe_skipped += outcome.unsafe_skipped
            if not outcome.applied:
                continue
            fixed_count += len(outcome.applied)
            files_changed += 1
            if do_diff:
                diffs.append(unified_diff(outcome))
            else:
                _write(file_result.path, outcome.fixed, encoding)
                applied = {id(f) for f in outcome.applied}
                file_result.findings = [f for f in file_result.findings if id(f) not in applied]
    except FixError as exc:
        raise UsageError(str(exc)) from None
    more = f"; {unsafe_skipped} more with --unsafe-fixes" if unsafe_skipped else ""
    if do_diff:
        sys.stdout.write("".join(diffs))
        sys.stdout.flush()
        if not quiet:
            sys.stderr.write(
                f"toollint: {fixed_count} fix(es) would be applied in {files_changed} file(s){more}\n"
            )
        raise StopCheck(1 if diffs else 0)
    if do_fix and not quiet and (fixed_count or more):
        sys.stderr.write(f"toollint: fixed {fixed_count} finding(s) in {files_changed} file(s){more}\n")
    return result
