"""`toollint check --add-noqa`: a `# noqa: TLxxx` comment on the line of every current finding, as
ruff's option of the same name (how a rule is adopted on a large code base: new code is held to it,
old findings are marked where they are).

Each line gets the codes of its findings, sorted. A line that has a `# noqa: CODES` comment keeps it
and its codes (another tool's included) and gains the new ones after them, before any reason; a line
with another comment (`# type: ignore`) gets `  # noqa: ...` after it; any other line at its end. A
line that ends inside a string or continues with a backslash cannot carry a comment there: it is
left as it is, with a warning. A second run finds every finding suppressed and changes nothing.

Files are rewritten as `--fix` rewrites them (`toollint.fixes`): only over the bytes that were
linted, in their own encoding and line endings, atomically. File-level problems (TL901-TL904) and
unused-noqa (TL900) findings get no comment: a noqa cannot suppress them on a line.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from toollint import fixes, registry
from toollint.console import printable
from toollint.engine import FileResult, RunResult
from toollint.errors import EXIT_CLEAN, EXIT_ERROR, FixError, StopCheck, UsageError
from toollint.noqa import _CODE, _LINE
from toollint.pipeline import StepContext

NOT_ON_A_LINE = frozenset({"TL900", "TL901", "TL902", "TL903", "TL904"})
_TOKEN = re.compile(r"[^,\s]+")
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # 3.12+: f-strings are several tokens
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass
class Added:
    """What adding noqa comments to one file's text did."""

    text: str
    directives: int = 0  # lines that got codes
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, why) left as they were


def add_noqa(text: str, codes_by_line: dict[int, set[str]]) -> Added:
    """`text` with the codes added to the noqa comment of each line (see the module docstring)."""
    lines = text.splitlines(keepends=True)
    comments, unsafe = _comments_and_unsafe_lines(text)
    out = Added(text)
    for line_no in sorted(codes_by_line):
        if not 1 <= line_no <= len(lines):
            continue
        if line_no in unsafe:
            out.skipped.append((line_no, unsafe[line_no]))
            continue
        line = lines[line_no - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        codes = sorted(codes_by_line[line_no])
        comment = comments.get(line_no)
        if comment is not None:
            col, comment_text = comment
            merged = _merge(comment_text, codes)
            body = (
                body[:col] + merged if merged is not None else f"{body.rstrip()}  # noqa: {', '.join(codes)}"
            )
        else:
            body = f"{body.rstrip()}  # noqa: {', '.join(codes)}"
        lines[line_no - 1] = body + ending
        out.directives += 1
    out.text = "".join(lines)
    return out


def _merge(comment: str, codes: list[str]) -> str | None:
    """The comment with `codes` added to its `# noqa: CODES`; None when it has no such list (then the
    new directive goes after the comment)."""
    match = _LINE.search(comment)
    if match is None or not match["colon"]:
        return None
    listed = match["codes"]
    kept: list[str] = []
    end = 0
    for token in _TOKEN.finditer(listed):
        word = token.group()
        if registry.get(word) is None and not _CODE.fullmatch(word):
            break  # the reason starts here
        kept.append(word)
        end = token.end()
    if not kept:
        return None
    known = {(registry.get(w).code if registry.get(w) else w) for w in kept}  # type: ignore[union-attr]
    new = [c for c in codes if c not in known]
    return comment[: match.start("codes")] + " " + ", ".join([*kept, *new]) + listed[end:]


def _comments_and_unsafe_lines(text: str) -> tuple[dict[int, tuple[int, str]], dict[int, str]]:
    """Each line's comment (column, text), and the lines no comment can be appended to, with why."""
    comments: dict[int, tuple[int, str]] = {}
    unsafe: dict[int, str] = {}
    fstrings: list[int] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = (tok.start[1], tok.string)
        elif tok.type == _FSTRING_START:
            fstrings.append(tok.start[0])
        elif tok.type == _FSTRING_END and fstrings:
            for line in range(fstrings.pop(), tok.end[0]):
                unsafe[line] = "it ends inside a string"
        elif tok.type == tokenize.STRING and tok.start[0] != tok.end[0]:
            for line in range(tok.start[0], tok.end[0]):
                unsafe[line] = "it ends inside a string"
    for number, physical in enumerate(text.splitlines(), 1):
        if physical.endswith("\\") and number not in comments:
            unsafe.setdefault(number, "it continues with a backslash")
    return comments, unsafe


def _codes_by_line(file_result: FileResult) -> dict[int, set[str]]:
    by_line: dict[int, set[str]] = {}
    for finding in file_result.findings:
        if not finding.suppressed and finding.code not in NOT_ON_A_LINE:
            by_line.setdefault(finding.line, set()).add(finding.code)
    return by_line


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """Write the comments, say how many, and end the run (exit 0; 2 if a file could not be written)."""
    if any(r.path == "-" for r in result.files) or "-" in ctx.options.paths:
        raise UsageError("--add-noqa rewrites files; it cannot be used with stdin (-)")
    if ctx.options.command == "demo":
        raise UsageError("--add-noqa would rewrite toollint's bundled examples")
    directives = files = 0
    for file_result in result.files:
        if not _codes_by_line(file_result):
            continue
        try:
            data = fixes._current(ctx, file_result)  # linted again if it changed since
            text, encoding = fixes.decode(data, file_result.path)
            added = add_noqa(text, _codes_by_line(file_result))
            for line, why in added.skipped:
                ctx.console.warn(f"{printable(file_result.path)}:{line}: no noqa comment added: {why}")
            if added.directives:
                fixes.write_fixed(file_result.path, data, added.text, encoding)
        except (FixError, tokenize.TokenError, SyntaxError) as exc:
            ctx.error(str(exc) if isinstance(exc, FixError) else
                      f"cannot add noqa comments to {printable(file_result.path)}: {exc}")
            continue
        directives += added.directives
        files += bool(added.directives)
    ctx.console.note(f"Added {directives} noqa directive{'s' if directives != 1 else ''}"
                     f"{f' to {files} file' + ('s' if files != 1 else '') if files else ''}.")
    raise StopCheck(EXIT_ERROR if ctx.errors else EXIT_CLEAN)
