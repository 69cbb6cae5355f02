"""What a rule sees of one file: its text, its tree, and the shared analysis, computed lazily once."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from toollint.evidence import Evidence
from toollint.model import Finding, Fix, RelatedLocation
from toollint.settings import Settings

if TYPE_CHECKING:
    from toollint.analysis import ModuleAnalysis

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


_UNKNOWN = object()  # a question the syntax tree cannot answer alone


def might_have_noqa(source: str) -> bool:
    """A cheap test that spares files without any suppression comment tokenizing, and a run without one
    importing `toollint.noqa`."""
    return "noqa" in source or "noqa" in source.lower()  # 3x faster than a case-blind regex


@dataclass(frozen=True)
class Comment:
    line: int
    col: int  # 0-based column of the '#'
    text: str  # including the '#'
    own_line: bool  # nothing but white space before it on its line


def _comments_in(source: str, line_offset: int = 0) -> list[Comment]:
    out: list[Comment] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                line, col = tok.start
                out.append(Comment(line + line_offset, col, tok.string, not tok.line[:col].strip()))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _nodes_spanning(node: ast.AST, lines: list[int], strings_whole: bool = False) -> Iterator[ast.AST]:
    """`node` and the nodes below it whose lines take in one of `lines` (sorted): a string covering a
    line lies inside every node around it, so a node that spans none of them is not looked into (most
    of a function's statements). Nodes without a position (`arguments`) are looked into, decorators
    count for the lines above their `def`, and an f-string is taken whole (with its parts, or alone
    when `strings_whole`: the positions of its parts are not to be trusted before Python 3.12)."""
    stack = [node]
    while stack:
        current = stack.pop()
        first = getattr(current, "lineno", None)
        if first is not None:
            first = min([first, *(d.lineno for d in getattr(current, "decorator_list", ()))])
            last = getattr(current, "end_lineno", None) or first
            at = bisect.bisect_left(lines, first)
            if at == len(lines) or lines[at] > last:
                continue
        if isinstance(current, ast.JoinedStr):
            yield from (current,) if strings_whole else ast.walk(current)
            continue
        yield current
        stack.extend(ast.iter_child_nodes(current))


@dataclass
class ModuleContext:
    path: str  # as shown to the user
    source: str
    tree: ast.Module
    settings: Settings = field(default_factory=Settings)
    module_name: str = ""  # dotted name guessed from the path, for `tools = [...]` references

    @cached_property
    def lines(self) -> list[str]:
        # Only \r\n, \r and \n end a line for Python and for AST line numbers; str.splitlines()
        # would also split on form feeds and \u2028 and put rules on the wrong line.
        return _LINE_BREAK.split(self.source.removesuffix("\n").removesuffix("\r")) if self.source else []

    @cached_property
    def analysis(self) -> ModuleAnalysis:
        from toollint.analysis import analyze_module

        return analyze_module(self.tree, self.settings, self.module_name, self.disk_path, self.source)

    @cached_property
    def disk_path(self) -> str:
        """The file on disk, when there is one: helpers imported from other modules are read from there
        (asked once per file: the rules and the engine each ask)."""
        import os

        return self.path if self.path and os.path.isfile(self.path) else ""

    @cached_property
    def comments(self) -> list[Comment]:
        return _comments_in(self.source)

    @cached_property
    def noqa_comments(self) -> list[Comment]:
        """The comments on every line that mentions noqa (all a suppression can be; `comments` holds
        them too). Only the top-level statements holding such a line are tokenized: tokenizing whole
        files was most of what noqa cost. A line outside every statement holds no string, so its
        first `#` starts its comment."""
        wanted = [n for n, text in enumerate(self.lines, 1) if "noqa" in text or "noqa" in text.lower()]
        if not wanted:
            return []
        segments: list[tuple[int, int, list[ast.stmt]]] = []  # top-level statements (with decorators), merged
        for node in self.tree.body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            last = node.end_lineno or node.lineno
            if segments and first <= segments[-1][1]:
                segments[-1] = (segments[-1][0], max(segments[-1][1], last), [*segments[-1][2], node])
            else:
                segments.append((first, last, [node]))
        out: list[Comment] = []
        by_segment: dict[int, list[int]] = {}
        for number in wanted:
            at = next((i for i, (a, b, _) in enumerate(segments) if a <= number <= b), None)
            if at is None:
                text = self.lines[number - 1]
                col = text.find("#")
                if col >= 0:
                    out.append(Comment(number, col, text[col:].rstrip("\r\n"), not text[:col].strip()))
            else:
                by_segment.setdefault(at, []).append(number)
        for at, numbers in by_segment.items():
            first, last, nodes = segments[at]
            found = [self._comment_beside_strings(number, nodes) for number in numbers]
            if all(c is not _UNKNOWN for c in found):
                out += [c for c in found if isinstance(c, Comment)]
            else:  # a line a string spans more of than itself: the statements are tokenized
                out += _comments_in("\n".join(self.lines[first - 1:last]) + "\n", first - 1)
        return sorted(out, key=lambda c: c.line)

    def _comment_beside_strings(self, number: int, nodes: list[ast.stmt]) -> Comment | None | object:
        """The comment on line `number` of these statements, found without tokenizing them: the first
        `#` outside the strings written on that line (a `#` is a comment's or a string's); `_UNKNOWN`
        when a string spans the line and another (a docstring, strings concatenated over lines, which
        may hold a comment between them): tokenizing tells then."""
        text = self.lines[number - 1]
        if "#" not in text:
            return None
        spans: list[tuple[int, int]] = []
        for node in nodes:
            for sub in _nodes_spanning(node, [number], strings_whole=True):
                if isinstance(sub, ast.JoinedStr) or (isinstance(sub, ast.Constant)
                                                      and isinstance(sub.value, (str, bytes))):
                    if sub.lineno != number or (sub.end_lineno or number) != number:
                        return _UNKNOWN
                    spans.append((self.char_col(number, sub.col_offset),
                                  self.char_col(number, sub.end_col_offset or len(text))))
        col = text.find("#")
        while col >= 0 and any(start <= col < end for start, end in spans):
            col = text.find("#", col + 1)
        if col < 0:
            return None
        return Comment(number, col, text[col:], not text[:col].strip())

    def own_line_comments(self, node: ast.AST) -> list[Comment]:
        """Comments standing alone on their lines within `node`'s lines, found without tokenizing
        the file: a line whose text starts with `#`, unless a multi-line string in `node` covers it."""
        first, last = getattr(node, "lineno", 1), getattr(node, "end_lineno", None) or len(self.lines)
        candidates = [n for n in range(first, min(last, len(self.lines)) + 1)
                      if self.lines[n - 1].lstrip().startswith("#")]
        if not candidates:  # most functions: no walk for the strings
            return []
        in_string: set[int] = set()
        for sub in _nodes_spanning(node, candidates):
            if isinstance(sub, (ast.Constant, ast.JoinedStr)) and (sub.end_lineno or sub.lineno) > sub.lineno:
                in_string.update(range(sub.lineno + 1, (sub.end_lineno or sub.lineno) + 1))
        out = []
        for number in candidates:
            if number not in in_string:
                text = self.lines[number - 1]
                stripped = text.lstrip()
                out.append(Comment(number, len(text) - len(stripped), stripped.rstrip(), True))
        return out

    def char_col(self, line: int, byte_offset: int) -> int:
        """AST columns count UTF-8 bytes; findings count characters."""
        if 1 <= line <= len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))
        return byte_offset

    def finding(
        self,
        code: str,
        node: ast.AST | None,
        message: str,
        *,
        line: int | None = None,
        col: int | None = None,
        end_line: int | None = None,
        end_col: int | None = None,
        tool: str | None = None,
        related: list[RelatedLocation] | None = None,
        fix: Fix | None = None,
        evidence: Evidence | None = None,
        **properties: Any,
    ) -> Finding:
        """A finding at `node` (or at explicit 1-based line/col); AST columns are converted to 1-based."""
        if node is not None:
            line = line or int(getattr(node, "lineno", 1))
            col = col or self.char_col(line, getattr(node, "col_offset", 0)) + 1
            end_line = end_line or getattr(node, "end_lineno", None)
            node_end = getattr(node, "end_col_offset", None)
            if end_col is None and node_end is not None and end_line is not None:
                end_col = self.char_col(end_line, node_end) + 1
        return Finding(
            code=code,
            message=message,
            path=self.path,
            line=line or 1,
            col=col or 1,
            end_line=end_line,
            end_col=end_col,
            tool=tool,
            related=related or [],
            fix=fix,
            properties=dict(properties),
            evidence=evidence,
        )
