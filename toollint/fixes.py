"""Autofixes: `--fix`, `--unsafe-fixes`, `--diff`.

A fix is a set of text edits (`model.Fix` of `model.Edit`s), so applying it touches nothing but the
replaced ranges: formatting and comments elsewhere are preserved byte for byte, CRLF included.
Rules may attach a fix to their finding (TL104 does: `if amount:` -> `if amount is not None:` when the
parameter defaults to None, marked safe); fixes no rule attaches are computed here (TL102: uncomment
the guard, marked unsafe because it changes which calls succeed).

All the fixes of one file are applied together and the result parsed once (Python's own parser);
when it does not parse, the fix at the reported error is dropped and the rest parsed again, so a
file with 400 fixes costs a parse or two, not 400. A fix whose result does not parse is never
written. Fixes whose edits overlap an earlier fix's wait for the next run, as in ruff.

A fix is written only over the very text it was computed from: the engine records a digest of the
bytes it linted; a file that differs by the time `--fix` reads it is linted again first (with a
warning), and one that changes between that read and the write is left alone with an error. Files
are replaced atomically (`toollint.atomic`); one that cannot be written is reported and the others
are still fixed.

Another program may be saving the file meanwhile (an editor writing it in chunks). So a file is
read only when it holds still (`stable_read`: the same size, mtime and inode before and after the
read, and the same bytes when read again, after a short wait for a file modified a moment ago),
checked once more just before it is replaced, and watched through the replace: a write that lands
in the old file during the rename is put back. A file that parsed when linted and no longer parses
when fixed is half-saved: it is left alone with an error (exit 2), never reported clean. Ctrl-C
says how many files were already rewritten (each whole).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import os
import re
import sys
import time
import tokenize
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from toollint import atomic
from toollint.console import printable
from toollint.errors import FixError, StopCheck, UsageError
from toollint.evidence import Confidence
from toollint.model import Edit, Finding, Fix
from toollint.regular import read_regular

if TYPE_CHECKING:
    from toollint.engine import FileResult, RunResult
    from toollint.pipeline import StepContext

__all__ = ["FixError", "apply_edits", "check_step", "fix_source", "parses", "uncomment_guard"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# --------------------------------------------------------------------------------------------------
# Computing fixes


@lru_cache(maxsize=4)
def _lines(source: str) -> list[str]:
    # Cached: every guard of a file asks for the same file's lines (a str caches its own hash).
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
    guard = finding.evidence.guard_statement if finding.evidence is not None else None
    what = f" `{ast.unparse(guard).splitlines()[0]}`" if guard is not None else ""
    fix = Fix(f"Uncomment the guard{what}", tuple(edits), safe=False)
    # The guard on its own must parse; whether it fits where it stands is checked with the file's
    # other fixes, in one parse (see fix_source).
    import textwrap

    return fix if parses(textwrap.dedent("\n".join(e.replacement for e in edits)) + "\n") else None


COMPUTED = {"TL102": uncomment_guard}


LOW_PREMISE = "its premise rests on the parameter's type alone"


def fix_for(finding: Finding, source: str) -> Fix | None:
    """The rule's own fix, else one computed here, else None. A fix whose finding rests on a
    low-confidence premise (`""` legal for a `str` only because of its type) is never safe: whether it
    is right depends on the very premise nobody has evidence for."""
    fix = finding.fix
    if fix is None:
        compute = COMPUTED.get(finding.code)
        fix = compute(finding, source) if compute else None
    if fix is not None and fix.safe and finding.confidence <= Confidence.LOW:
        fix = dataclasses.replace(fix, safe=False, description=f"{fix.description} (unsafe: {LOW_PREMISE})")
    return fix


# --------------------------------------------------------------------------------------------------
# Applying fixes


def syntax_error_line(source: str) -> int | None:
    """The line of the first syntax error in `source`, 0 when it has no line, None when it parses."""
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the audited project's business
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as exc:
        return exc.lineno or 0
    except (ValueError, RecursionError, MemoryError):
        return 0
    return None


def parses(source: str) -> bool:
    return syntax_error_line(source) is None


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
    """Apply non-overlapping edits (1-based positions, exclusive end) to `source`, in one pass."""
    starts = _offsets(source)
    spans = sorted(
        (_offset(starts, e.line, e.col), _offset(starts, e.end_line, e.end_col), e.replacement) for e in edits
    )
    pieces: list[str] = []
    position = 0
    for start, end, replacement in spans:
        pieces.append(source[position:start])
        pieces.append(replacement)
        position = max(position, end)
    pieces.append(source[position:])
    return "".join(pieces)


@dataclass
class FileFixes:
    """The fixes of one file and the content they apply to."""

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
    error_line = syntax_error_line(fixed)
    while accepted and error_line is not None:
        # Each fix parses on its own (or came from a rule), so the one that breaks the file is where it
        # stands: drop the fix nearest above the error and parse again.
        accepted.pop(_culprit(accepted, error_line))
        fixed = apply_edits(source, [e for _, fix in accepted for e in fix.edits])
        error_line = syntax_error_line(fixed)
    outcome.fixed = fixed
    outcome.applied = [f for f, _ in accepted]
    return outcome


def _culprit(accepted: list[tuple[Finding, Fix]], error_line: int) -> int:
    """Which accepted fix (index) most likely causes a syntax error at `error_line` of the fixed text:
    the last one starting at or above it (positions in the fixed text shift by the lines the fixes
    above add or remove)."""
    best = max(range(len(accepted)), key=lambda i: min(e.line for e in accepted[i][1].edits))
    best_start = -1
    shift = 0
    for index, (_, fix) in sorted(
        enumerate(accepted), key=lambda item: min(e.line for e in item[1][1].edits)
    ):
        start = min(e.line for e in fix.edits) + shift
        if best_start <= start <= error_line:
            best, best_start = index, start
        shift += sum(e.replacement.count("\n") - (e.end_line - e.line) for e in fix.edits)
    return best


def unified_diff(outcome: FileFixes) -> str:
    import difflib  # only --diff shows one

    return "".join(
        difflib.unified_diff(
            outcome.original.splitlines(keepends=True),
            outcome.fixed.splitlines(keepends=True),
            fromfile=f"a/{outcome.path}",
            tofile=f"b/{outcome.path}",
        )
    )


def decode(data: bytes, path: str) -> tuple[str, str]:
    """Text and the encoding to write it back with (a BOM or coding cookie is kept)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, UnicodeDecodeError, LookupError):
        raise FixError(f"cannot decode {printable(path)}; not fixing it") from None


# --------------------------------------------------------------------------------------------------
# Reading and replacing a file another program may be writing

SETTLE = 0.05  # seconds: a file modified more recently than this may be mid-save; it is read again after
STABLE_TRIES = 40  # reads before a file that keeps changing is given up on (about two seconds)


def _shape(st: os.stat_result) -> tuple[int, int, int, int]:
    """What a write changes: size and mtime (and a replace: the inode)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def stable_read(path: str) -> bytes:
    """The file's bytes, once it holds still: unchanged size, mtime and inode across the read, and
    the same bytes read again after `SETTLE` seconds when it was modified less than that ago.
    FixError when it keeps changing; OSError when it cannot be read."""
    for attempt in range(STABLE_TRIES):
        before = os.stat(path)
        data = read_regular(path)
        after = os.stat(path)
        if _shape(before) == _shape(after) and len(data) == after.st_size:
            wait = SETTLE - (time.time() - after.st_mtime)
            if wait <= 0:
                return data
            time.sleep(min(wait, SETTLE))
            again = read_regular(path)
            if again == data and _shape(os.stat(path)) == _shape(after):
                return data
        time.sleep(min(0.005 * (attempt + 1), SETTLE))
    raise FixError(
        f"{printable(path)} keeps changing (another program is writing it); not fixed (run --fix again)"
    )


def write_fixed(path: str, linted: bytes, text: str, encoding: str) -> None:
    """Replace the file with `text` if it still holds exactly `linted` and holds still; atomically."""
    shown = printable(path)
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise FixError(
            f"cannot write {shown}: the fix is not representable in {encoding} ({exc.reason})"
        ) from None
    changed = FixError(f"{shown} changed while it was being fixed; not written (run --fix again)")
    try:
        if stable_read(path) != linted:
            raise changed
        if not os.access(path, os.W_OK):  # a rename would replace a read-only file: respect it
            raise FixError(f"cannot write {shown}: permission denied (the file is read-only)")
        with open(path, "rb") as old:  # held through the replace: a write into it is seen
            before = _shape(os.fstat(old.fileno()))
            if old.read() != linted or _shape(os.stat(path)) != before:
                raise changed
            atomic.write_bytes(path, data)
            if _shape(os.fstat(old.fileno()))[2:] != before[2:]:
                _put_back(path, old, data)
                raise FixError(f"{shown} was written by another program while it was being fixed; "
                               "its new content is kept, not fixed (run --fix again)")
    except OSError as exc:
        raise FixError(f"cannot write {shown}: {exc.strerror or exc}") from None


def _put_back(path: str, old: io.BufferedReader, ours: bytes) -> None:
    """Another program wrote into the file just as it was replaced (its writes went to the old
    file): once those writes stop, their content replaces the fix, unless the path has been
    written again meanwhile."""
    shape = None
    for _ in range(STABLE_TRIES):
        time.sleep(SETTLE)
        now = _shape(os.fstat(old.fileno()))
        if now == shape:
            break
        shape = now
    content = os.pread(old.fileno(), shape[2] if shape else 0, 0)
    with open(path, "rb") as current:
        if current.read() == ours:
            atomic.write_bytes(path, content)


# --------------------------------------------------------------------------------------------------
# Command line


def attach_fixes(findings: Iterable[Finding], sources: dict[str, str]) -> None:
    """Give findings the fixes computed here (so SARIF can show them); `sources` by finding path."""
    for f in findings:
        if f.fix is None and f.code in COMPUTED and f.path in sources:
            f.fix = fix_for(f, sources[f.path])


def _candidates(file_result: FileResult) -> list[Finding]:
    return [f for f in file_result.findings if not f.suppressed and (f.fix is not None or f.code in COMPUTED)]


def _current(ctx: StepContext, file_result: FileResult) -> bytes:
    """The file's bytes now; when they are not what was linted, the file is linted again from them
    (its findings replaced), so fixes are computed from the text they will be applied to."""
    from toollint.engine import SYNTAX_ERROR, digest, lint_source

    try:
        data = stable_read(file_result.path)
    except OSError as exc:
        raise FixError(f"cannot read {printable(file_result.path)}: {exc.strerror or exc}") from None
    if file_result.digest is not None and digest(data) != file_result.digest:
        fresh = lint_source(data, file_result.path, ctx.resolver.for_path(file_result.path),
                            file_result.module_name)
        if any(f.code == SYNTAX_ERROR for f in fresh.findings) and \
                not any(f.code == SYNTAX_ERROR for f in file_result.findings):
            # Parsed when linted, does not parse now: most likely half-saved. Its findings stand.
            raise FixError(f"{printable(file_result.path)} changed since it was linted and no longer parses "
                           "(half-saved?); left alone (run --fix again once it is saved)")
        ctx.console.warn(f"{file_result.path} changed since it was linted; linted again before fixing")
        file_result.findings, file_result.digest = fresh.findings, fresh.digest
    return data


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """--fix writes fixes and reports what remains; --diff prints them and ends the run (exit 1 if any)."""
    options, console = ctx.options.fixes, ctx.console
    if not options.requested:
        return result
    if options.fix and ctx.options.command == "demo":
        raise UsageError("--fix would rewrite toollint's bundled examples; use --diff with demo")
    fixed_count = files_changed = unsafe_skipped = 0
    failed: list[str] = []
    diffs: list[str] = []
    try:
        for file_result in result.files:
            if not _candidates(file_result):
                continue
            try:
                data = _current(ctx, file_result)
                text, encoding = decode(data, file_result.path)
            except FixError as exc:
                ctx.error(str(exc))
                failed.append(file_result.path)
                continue
            candidates = _candidates(file_result)
            attach_fixes(candidates, {file_result.path: text})
            if not (options.fix or options.diff):
                continue  # --unsafe-fixes alone: fixes attached for SARIF only
            outcome = fix_source(file_result.path, text, candidates, options.unsafe)
            unsafe_skipped += outcome.unsafe_skipped
            if not outcome.applied:
                continue
            if options.diff:
                diffs.append(unified_diff(outcome))
            else:
                try:
                    write_fixed(file_result.path, data, outcome.fixed, encoding)
                except FixError as exc:
                    ctx.error(str(exc))  # the other files are still fixed; this one keeps its findings
                    failed.append(file_result.path)
                    continue
                applied = {id(f) for f in outcome.applied}
                file_result.findings = [f for f in file_result.findings if id(f) not in applied]
            fixed_count += len(outcome.applied)
            files_changed += 1
    except KeyboardInterrupt:
        if options.fix:  # every file is replaced whole, so the count is the whole story
            console.error(
                f"--fix interrupted after rewriting {files_changed} file(s) ({fixed_count} fix(es)); "
                "the files not yet rewritten are unchanged"
            )
        raise
    more = f"; {unsafe_skipped} more with --unsafe-fixes" if unsafe_skipped else ""
    if failed:
        more += f"; {len(failed)} file(s) not fixed: {', '.join(printable(p) for p in failed)}"
    if options.diff:
        sys.stdout.write(printable("".join(diffs)))
        sys.stdout.flush()
        console.note(f"toollint: {fixed_count} fix(es) would be applied in {files_changed} file(s){more}")
        raise StopCheck(2 if ctx.errors else 1 if diffs else 0)
    if options.fix and (fixed_count or more):
        console.note(f"toollint: fixed {fixed_count} finding(s) in {files_changed} file(s){more}")
    return result
