"""Which files a run lints: walking the targets, exclusion globs, display paths, module names.

Exclusion follows ruff: `exclude` replaces the built-in list, `extend-exclude` adds to it; a pattern
without a `/` matches any single path component (`build`, `*_pb2.py`), a pattern with one matches the
path relative to the project root (`tests/fixtures/*`). What `.gitignore` files ignore is skipped too
(`respect-gitignore = false` or `--no-respect-gitignore` turns that off; see `toollint.gitignore`).
Each directory is walked with the settings of its own configuration file (`settings_for`). Paths
named explicitly on the command line are linted even when excluded, unless `--force-exclude` is given
(what a pre-commit hook wants); a named file that is not Python (no `.py`/`.pyi` suffix and no
Python `#!` line) is skipped with a warning.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from toollint.gitignore import GitIgnore
from toollint.memos import file_memo
from toollint.regular import describe_mode
from toollint.settings import Settings

SettingsFor = Callable[[Path], Settings]  # the settings that apply to a file or directory

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pytype",
    ".ruff_cache",
    ".toollint_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
PYTHON_SUFFIXES = (".py",)  # what a directory walk picks up
EXPLICIT_SUFFIXES = (".py", ".pyi")  # what a file named explicitly may end with


@dataclass
class FileSet:
    """The outcome of walking the targets."""

    files: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # targets that do not exist
    no_python: list[str] = field(default_factory=list)  # directory targets holding no Python file
    unreadable: list[tuple[Path, str]] = field(default_factory=list)  # directories we could not list
    not_python: list[str] = field(default_factory=list)  # files named explicitly that are not Python
    # FIFOs, devices and sockets, named or found (what they are): reading one could block forever
    not_regular: list[tuple[str, str]] = field(default_factory=list)
    unusable: list[tuple[str, str]] = field(default_factory=list)  # targets no file can have: name, why


class Excluder:
    """Matches paths against the effective exclude patterns."""

    def __init__(self, settings: Settings) -> None:
        patterns = [*(settings.exclude or DEFAULT_EXCLUDE), *settings.extend_exclude]
        self.component_patterns = [p.rstrip("/") for p in patterns if "/" not in p.rstrip("/")]
        # one expression for all of them: every entry of a walk is tested, and fnmatchcase per pattern
        # was a fifth of a warm run's walk
        self._component = (
            re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in self.component_patterns))
            if self.component_patterns
            else None
        )
        self.path_patterns = [p.rstrip("/").removeprefix("./") for p in patterns if "/" in p.rstrip("/")]
        self.root = Path(os.path.abspath(settings.project_root or os.getcwd()))

    def excluded(self, path: Path) -> bool:
        if self._component is not None and self._component.match(path.name):
            return True
        if self.path_patterns:
            rel = relative_to(path.absolute(), self.root)
            if rel is not None:
                return any(fnmatchcase(rel, p) or fnmatchcase(rel, p + "/*") for p in self.path_patterns)
        return False

    def excluded_entry(self, directory: str, name: str) -> bool:
        """`excluded` for the entry `name` of the absolute `directory`, with no path object unless a
        pattern names a path."""
        if self._component is not None and self._component.match(name):
            return True
        return bool(self.path_patterns) and self.excluded(Path(directory, name))

    def excluded_anywhere(self, path: Path) -> bool:
        """For --force-exclude: the file or any directory above it (below the root) is excluded."""
        path = path.absolute()
        if self.excluded(path):
            return True
        return any(self.excluded(parent) for parent in path.parents if parent != Path(parent.anchor))


def relative_to(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def display_path(path: Path, cwd: Path | None = None) -> str:
    """How a path is shown: relative to the current directory when below it, else as it was typed
    (`../other/tools.py` stays so, as flake8 prints it; an absolute path stays absolute)."""
    cwd = cwd or Path.cwd()
    absolute_text = os.path.abspath(path)
    below = os.path.join(cwd, "")  # the common case by string: pathlib costs a run of many files 2%
    if absolute_text.startswith(below) and len(absolute_text) > len(below):
        return absolute_text[len(below):].replace(os.sep, "/")
    if os.name == "nt":  # where paths compare without case: `C:\Work` is below `c:\work`
        rel = relative_to(Path(absolute_text), cwd)
        if rel is not None:
            return rel
    return absolute_text if os.path.isabs(path) else os.path.normpath(path)


def is_python_file(path: Path) -> bool:
    """A file named explicitly is linted when it ends in .py/.pyi or starts with a Python `#!` line."""
    if path.name.endswith(EXPLICIT_SUFFIXES):
        return True
    try:
        with open(path, "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return True  # reading it reports the problem (TL903)
    return first.startswith(b"#!") and b"python" in first


class _Walker:
    """Per-directory settings, their excluders and the .gitignore files, shared by one walk."""

    def __init__(self, settings_for: SettingsFor) -> None:
        self.settings_for = settings_for
        self.gitignore = GitIgnore()
        self._excluders: dict[int, Excluder] = {}

    def excluder(self, settings: Settings) -> Excluder:
        found = self._excluders.get(id(settings))
        if found is None:
            found = self._excluders[id(settings)] = Excluder(settings)
        return found

    def skipped(self, directory: str, name: str, is_dir: bool, settings: Settings, stop: str) -> bool:
        """Whether the entry `name` of `directory` (absolute, as `stop`, the walk's target) is left out."""
        if self.excluder(settings).excluded_entry(directory, name):
            return True
        return settings.respect_gitignore and self.gitignore.ignored_in(directory, name, is_dir, stop)

    def force_excluded(self, path: Path) -> bool:
        settings = self.settings_for(path)
        if self.excluder(settings).excluded_anywhere(path):
            return True
        return settings.respect_gitignore and self.gitignore.ignored_anywhere(path)


def _constant(settings: Settings) -> SettingsFor:
    return lambda _path: settings


def collect_files(
    targets: Sequence[str | Path], settings: Settings | SettingsFor, force_exclude: bool = False
) -> FileSet:
    """Walk the targets in order, following symlinks once each (a symlink loop ends the walk there).
    `settings`: one `Settings` for every file, or a function giving each directory its own."""
    out = FileSet()
    walker = _Walker(settings if callable(settings) else _constant(settings))
    seen: set[tuple[int, int]] = set()  # (device, inode) of every file and directory visited
    for target in targets:
        path = Path(target)
        try:
            st = path.stat()
        except FileNotFoundError:
            if path.is_symlink():  # a dangling link named explicitly: reading it reports the problem
                out.files.append(path)
            else:
                out.missing.append(str(target))
            continue
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # no file can have this name: an error, not a finding
                out.unusable.append((str(target), "file name too long for the file system"))
            else:  # a symlink loop, a permission problem: reading it reports the problem
                out.files.append(path)
            continue
        except ValueError:  # an embedded null character: no such path can exist
            out.missing.append(repr(str(target)))
            continue
        if force_exclude and walker.force_excluded(path):
            continue
        if not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
            out.not_regular.append((str(target), describe_mode(st.st_mode)))
        elif stat.S_ISDIR(st.st_mode):
            before = len(out.files)
            _walk(path, walker, seen, out)
            if len(out.files) == before:
                out.no_python.append(str(target))
        elif not is_python_file(path):
            out.not_python.append(str(target))
        elif _first_visit(st, seen):
            out.files.append(path)
    return out


def _first_visit(st: os.stat_result | tuple[int, int], seen: set[tuple[int, int]]) -> bool:
    key = (st.st_dev, st.st_ino) if isinstance(st, os.stat_result) else st  # (a stat result is a tuple too)
    if key in seen:
        return False
    seen.add(key)
    return True


def _walk(root: Path, walker: _Walker, seen: set[tuple[int, int]], out: FileSet) -> None:
    stack = [root]
    stop = os.path.abspath(root)
    while stack:
        directory = stack.pop()
        try:
            directory_stat = directory.stat()
            if not _first_visit(directory_stat, seen):
                continue
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.unreadable.append((directory, exc.strerror or type(exc).__name__))
            continue
        settings = walker.settings_for(directory)  # one configuration for everything directly in it
        absolute = os.path.abspath(directory)
        subdirs: list[Path] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows symlinks; loops are cut by `seen`
            except OSError:
                is_dir = False
            if not is_dir and not entry.name.endswith(PYTHON_SUFFIXES):
                continue  # (before any path object: most entries of a data folder end here)
            if walker.skipped(absolute, entry.name, is_dir, settings, stop):
                continue
            path = Path(entry.path)
            if is_dir:
                subdirs.append(path)
            else:
                try:
                    if (
                        not entry.is_file()
                    ):  # the listing's type: a FIFO, device or socket, or a dangling link
                        st = entry.stat()
                        if not stat.S_ISREG(st.st_mode):
                            out.not_regular.append((str(path), describe_mode(st.st_mode)))
                            continue
                    # a plain file's inode comes with the listing; only a link needs a stat
                    key = entry.stat() if entry.is_symlink() else (directory_stat.st_dev, entry.inode())
                    if not _first_visit(key, seen):
                        continue
                except OSError:
                    pass  # dangling or looping link: reading it reports TL903
                out.files.append(path)
        stack.extend(reversed(subdirs))


@file_memo(4096)
def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def guess_module_name(path: str | Path) -> str:
    """Dotted module name: the file's stem plus every enclosing directory that has an `__init__.py`."""
    return _module_name(os.path.abspath(path))


@file_memo(4096)
def _module_name(absolute: str) -> str:
    # os.path on strings, not pathlib: the engine, the cache and the resolver ask for every file
    directory, name = os.path.split(absolute)
    dot = name.rfind(".")
    parts = [] if name == "__init__.py" else [name[:dot] if 0 < dot < len(name) - 1 else name]  # Path.stem
    while _is_package(directory) and (package := os.path.basename(directory)).isidentifier():
        parts.append(package)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return ".".join(reversed(parts))


def matching_globs(path: str, patterns: Iterable[str], root: Path | None) -> list[str]:
    """The patterns (per-file-ignores keys) that match a file by relative path, absolute path or name."""
    absolute = Path(os.path.abspath(path))
    rel = relative_to(absolute, Path(os.path.abspath(root or os.getcwd()))) or ""
    candidates = {absolute.as_posix(), absolute.name, rel}
    return [p for p in patterns if any(fnmatchcase(c, p.removeprefix("./")) for c in candidates if c)]
