"""Suppression comments, flake8-compatible, and the unused-noqa check (TL900).

Forms understood:

- `# noqa: TL104` on the line a finding is reported on; several codes or kebab-case rule names
  separated by commas or spaces (`# noqa: TL104, log-only-argument`); anything after the codes is a
  reason and ignored (`# noqa: TL104 -- amount 0 is rejected upstream`). Codes of other tools
  (`E501`) may share the comment.
- bare `# noqa` (or a `# noqa:` with no recognisable code) suppresses everything on its line, as in
  flake8.
- file-level, anywhere in the file: `# toollint: noqa` (everything) or `# toollint: noqa: TL101`.

Only the line a finding is reported on counts, also for statements spanning several lines.
Suppressed findings are kept with `suppressed=True`; reporters leave them out.

TL900 (unused-noqa) is on by default, unlike ruff's opt-in RUF100: it only ever looks at `TL` codes
(other tools' codes and bare `# noqa` are never reported, so it coexists with flake8 and ruff), and a
`TL` code in a noqa comment exists only for toollint, so a stale one means a rule stopped firing there
and the comment now hides nothing but misleads readers. Codes not enabled for the file in this run are
not reported. Unknown `TL` codes are. Silence it with `--ignore TL900`, or `# noqa: TL900` on the line.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from toollint import registry
from toollint.context import Comment
from toollint.model import Finding

UNUSED_NOQA = "TL900"
_LINE = re.compile(r"#\s*noqa\b(?P<colon>\s*:)?(?P<codes>.*)", re.IGNORECASE)
_FILE = re.compile(r"#\s*toollint\s*:\s*noqa\b(?P<colon>\s*:)?(?P<codes>.*)", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]{1,3}[0-9]{1,4}")
_SEPARATOR = re.compile(r"[,\s]+")


@dataclass
class Directive:
    line: int
    col: int  # 1-based column of the comment's '#'
    end_col: int  # exclusive, end of the comment
    codes: tuple[str, ...] | None  # None: everything
    file_level: bool = False
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


def parse_codes(text: str) -> tuple[str, ...] | None:
    """The codes at the start of `text`, names mapped to codes; None when there are none."""
    codes: list[str] = []
    for token in _SEPARATOR.split(text.strip()):
        if not token:
            continue
        known = registry.get(token)
        if known is not None:
            codes.append(known.code)
        elif _CODE.fullmatch(token):
            codes.append(token)
        else:
            break  # the reason starts here
    return tuple(dict.fromkeys(codes)) or None


def parse_directives(comments: Iterable[Comment]) -> tuple[dict[int, Directive], list[Directive]]:
    """Line directives by line number, and file-level directives."""
    by_line: dict[int, Directive] = {}
    file_level: list[Directive] = []
    for comment in comments:
        end_col = comment.col + 1 + len(comment.text)
        match = _FILE.search(comment.text)
        if match:
            codes = parse_codes(match["codes"]) if match["colon"] else None
            file_level.append(Directive(comment.line, comment.col + 1, end_col, codes, file_level=True))
            continue
        match = _LINE.search(comment.text)
        if match:
            codes = parse_codes(match["codes"]) if match["colon"] else None
            by_line[comment.line] = Directive(comment.line, comment.col + 1, end_col, codes)
    return by_line, file_level


def apply(
    findings: list[Finding],
    comments: Iterable[Comment],
    enabled: Collection[str],
    path: str,
) -> list[Finding]:
    """Mark suppressed findings in place; return the TL900 findings (when TL900 is enabled)."""
    by_line, file_level = parse_directives(comments)
    if not by_line and not file_level:
        return []
    for finding in findings:
        directive = by_line.get(finding.line)
        if directive is not None and directive.covers(finding.code):
            finding.suppressed = True
            directive.used.add(finding.code)
            continue
        for file_directive in file_level:
            if file_directive.covers(finding.code):
                finding.suppressed = True
                file_directive.used.add(finding.code)
                break
    if UNUSED_NOQA not in enabled:
        return []
    unused: list[Finding] = []
    file_silences_unused = any(d.covers(UNUSED_NOQA) for d in file_level)
    for directive in [*by_line.values(), *file_level]:
        if directive.codes is None or UNUSED_NOQA in directive.codes or file_silences_unused:
            continue
        stale = [c for c in directive.codes if _is_stale(c, directive, enabled)]
        if stale:
            unused.append(_unused_finding(directive, stale, path))
    return unused


def _is_stale(code: str, directive: Directive, enabled: Collection[str]) -> bool:
    if not code.upper().startswith("TL") or code in directive.used:
        return False
    return registry.get(code) is None or code in enabled


def _unused_finding(directive: Directive, stale: list[str], path: str) -> Finding:
    parts = [c if registry.get(c) is not None else f"{c} (unknown code)" for c in stale]
    where = "in this file" if directive.file_level else "on this line"
    message = f"unused noqa: {', '.join(parts)} {'is' if len(parts) == 1 else 'are'} not reported {where}"
    return Finding(
        code=UNUSED_NOQA,
        message=message,
        path=path,
        line=directive.line,
        col=directive.col,
        end_line=directive.line,
        end_col=directive.end_col,
        properties={"unused_codes": stale},
    )
