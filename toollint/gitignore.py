"""`.gitignore` matching in the standard library, for walking directories as git would.

Implemented here rather than by asking `git check-ignore`: a walk must decide for every directory
before entering it (so an ignored `data/` with 100,000 files is never listed), which a subprocess
per directory or one `git` round trip per batch makes slow for a pre-commit run of one file; and
toollint must behave the same in a source tarball or a CI checkout without git installed.

What is read: every `.gitignore` from the repository root (the nearest directory above holding
`.git`) down to the directory in question, and `.git/info/exclude`. Outside a repository, the
`.gitignore` files from the walked target down. Not read: the user's global `core.excludesFile`.

The pattern language is git's (gitignore(5)): `#` comments, `!` negation (the last matching pattern
wins, and a deeper file wins over a shallower one), a trailing `/` for directories only, a `/` at
the start or in the middle anchoring the pattern to its file's directory, `*`, `?`, `[...]` (ranges,
`!`/`^` negation, POSIX classes such as `[[:digit:]]`, as git's wildmatch reads them), `**`
(`**/x`, `x/**`, `a/**/b`), and backslash escapes. A file inside an ignored directory stays ignored
whatever a later `!` says, as in git (the walk never enters the directory).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from toollint.memos import file_memo
from toollint.regular import read_regular


@dataclass(frozen=True)
class Pattern:
    """One .gitignore line, as a regex over `/`-separated relative paths."""

    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def _translate(glob: str) -> str:
    """A gitignore glob (already without `!`, the trailing `/` and a leading `/`) as a regex body
    over `/`-separated relative paths."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        ch = glob[i]
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:.*/)?")  # zero or more directories
            i += 3
        elif glob.startswith("**", i) and i + 2 == n and (i == 0 or glob[i - 1] == "/"):
            out.append(".*")  # everything inside
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            bracket = _bracket(glob, i)
            if bracket is None:  # no closing `]`: git's wildmatch matches nothing then
                return "(?!)"
            regex, i = bracket
            out.append(regex)
        elif ch == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


# The character classes `[[:digit:]]` and friends name (gitignore(5) via fnmatch(3)), in ASCII as git
# has them.
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}


def _bracket(glob: str, start: int) -> tuple[str, int] | None:
    """The bracket expression at `glob[start] == "["` as a regex, and the index after it; None when
    it is not closed. As git's wildmatch: `!` or `^` first negates, a `]` first is literal, `a-z`
    ranges, `[:class:]` names (an unknown one matches nothing), backslash escapes, and no bracket
    matches `/`. Every character is escaped for `re`, so a `[` inside never reads as a nested set."""
    n = len(glob)
    j = start + 1
    negated = j < n and glob[j] in "!^"
    j += negated
    parts: list[str] = []
    first = True
    while j < n:
        ch = glob[j]
        if ch == "]" and not first:
            body = "".join(parts)
            regex = f"[^/{body}]" if negated else f"(?:(?!/)[{body}])"
            return regex, j + 1
        first = False
        if glob.startswith("[:", j) and (end := glob.find(":]", j + 2)) != -1:
            name = glob[j + 2 : end]
            if name not in _POSIX_CLASSES:
                return "(?!)", _close(glob, end + 2)
            parts.append(_POSIX_CLASSES[name])
            j = end + 2
            continue
        if ch == "\\" and j + 1 < n:
            j += 1
            ch = glob[j]
        if j + 2 < n and glob[j + 1] == "-" and glob[j + 2] != "]":
            high = glob[j + 2]
            j += 2
            if high == "\\" and j + 1 < n:
                j += 1
                high = glob[j]
            parts.append(f"{re.escape(ch)}-{re.escape(high)}")
        else:
            parts.append(re.escape(ch))
        j += 1
    return None


def _close(glob: str, j: int) -> int:
    """The index after the `]` that ends a bracket expression, from inside it."""
    end = glob.find("]", j)
    return len(glob) if end == -1 else end + 1


def parse_line(line: str) -> Pattern | None:
    """One line of a .gitignore file; None for blanks and comments."""
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are dropped unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]
    directory_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/") if directory_only else line
    if not line:
        return None
    anchored = "/" in line
    line = line.removeprefix("/")
    body = _translate(line)
    if not anchored:
        body = "(?:.*/)?" + body
    return Pattern(re.compile(body + r"\Z", re.DOTALL), negated, directory_only)


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one .gitignore (or info/exclude) file, relative to `base`."""

    base: str  # absolute directory, no trailing separator
    patterns: tuple[Pattern, ...]

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included by a `!` pattern, None no pattern matches."""
        prefix = self.base.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            return None
        rel = path[len(prefix) :].replace(os.sep, "/")
        for pattern in reversed(self.patterns):  # the last match wins
            if pattern.directory_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                return not pattern.negated
        return None


def _read(file: Path, base: Path) -> IgnoreFile | None:
    try:
        text = read_regular(file).decode("utf-8", "surrogateescape")  # a FIFO named .gitignore: skipped
    except OSError:
        return None
    patterns = tuple(p for p in map(parse_line, text.splitlines()) if p is not None)
    return IgnoreFile(str(base), patterns) if patterns else None


@file_memo(1024)
def repository_root(directory: str) -> str | None:
    """The nearest directory at or above `directory` holding `.git` (a directory, or a file for
    worktrees and submodules). Each directory is looked at once per process: its parent's answer is
    memoised for the walk's other directories below it."""
    if os.path.exists(os.path.join(directory, ".git")):
        return str(Path(directory))
    parent = os.path.dirname(directory) or ("." if directory not in ("", ".") else "")  # `a` -> `.`
    return repository_root(parent) if parent and parent != directory else None


class GitIgnore:
    """Answers "does git ignore this path?" for paths below one or more walk targets, reading each
    .gitignore file once."""

    def __init__(self) -> None:
        self._files: dict[str, IgnoreFile | None] = {}  # directory -> its .gitignore
        self._excludes: dict[str, IgnoreFile | None] = {}  # repository root -> its .git/info/exclude
        # (directory, stop) -> the files that apply there, deepest first
        self._chains: dict[tuple[str, str | None], tuple[IgnoreFile, ...]] = {}

    def _file(self, directory: str) -> IgnoreFile | None:
        if directory not in self._files:
            self._files[directory] = _read(Path(directory, ".gitignore"), Path(directory))
        return self._files[directory]

    def _chain(self, directory: str, stop: str | None) -> tuple[IgnoreFile, ...]:
        """The ignore files that apply inside `directory`, deepest first, up to the repository root
        (or `stop`, the walk's target, outside a repository)."""
        cached = self._chains.get((directory, stop))
        if cached is not None:
            return cached
        root = repository_root(directory)
        top = root or stop or directory
        chain: list[IgnoreFile] = []
        current = Path(directory)
        while True:
            found = self._file(str(current))
            if found is not None:
                chain.append(found)
            if str(current) == top or current.parent == current or not str(current).startswith(top):
                break
            current = current.parent
        if root is not None:
            if root not in self._excludes:
                self._excludes[root] = _read(Path(root, ".git", "info", "exclude"), Path(root))
            exclude = self._excludes[root]
            if exclude is not None:
                chain.append(exclude)
        self._chains[(directory, stop)] = result = tuple(chain)
        return result

    def ignored(self, path: str | Path, is_dir: bool, stop: str | Path | None = None) -> bool:
        """Whether git ignores `path` itself (its directories are not looked at: the walk prunes
        those). `stop`: outside a repository, the highest directory whose .gitignore counts."""
        absolute = os.path.abspath(path)
        stop = os.path.abspath(stop) if stop is not None else None
        return self.ignored_in(os.path.dirname(absolute), os.path.basename(absolute), is_dir, stop)

    def ignored_in(self, directory: str, name: str, is_dir: bool, stop: str | None) -> bool:
        """`ignored` for the entry `name` of `directory`, both already absolute and normalised (a walk
        asks for every entry of a directory in turn)."""
        if name == ".git":
            return True
        absolute = os.path.join(directory, name)
        for ignore_file in self._chain(directory, stop):
            verdict = ignore_file.verdict(absolute, is_dir)
            if verdict is not None:
                return verdict
        return False

    def ignored_anywhere(self, path: str | Path) -> bool:
        """For a path named explicitly (with --force-exclude): it, or a directory above it within its
        repository, is ignored."""
        absolute = Path(os.path.abspath(path))
        root = repository_root(str(absolute.parent))
        if root is None:
            return False
        if self.ignored(absolute, absolute.is_dir()):
            return True
        for parent in absolute.parents:
            if str(parent) == root or not str(parent).startswith(root):
                break
            if self.ignored(parent, True):
                return True
        return False
