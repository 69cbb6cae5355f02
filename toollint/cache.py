"""The results cache: a file whose content, settings and toollint did not change is not linted again.

Like ruff's `.ruff_cache`: a `.toollint_cache/` folder in the project root (the folder of the
configuration file, else the working directory; `cache-dir` in `[tool.toollint]` or the
`TOOLLINT_CACHE_DIR` environment variable put it elsewhere), which ignores itself in git (its own
`.gitignore` holds `*`). `--no-cache` (or `TOOLLINT_NO_CACHE=1`) neither reads nor writes it.

A file's cached result is used only when all of these are what they were:

- the file's content (its BLAKE2b digest, taken again only when the file's status changed: `RACY_NS`),
  the path it is shown under and its dotted module name;
- its settings (every key of its configuration and the command line's overrides);
- toollint itself: its version, the size and mtime of each of its own source files (an edited rule
  is a new toollint) and the installed profile plugins;
- the content of every other file its facts rest on: the helpers and base classes its tools and
  graders reach across modules, followed transitively, and the files the analysis looked for and
  did not find (a new module that an import would now resolve to). `toollint.sources` records these
  while the file is analysed.

One cache file per working directory (paths in it are as shown, relative to it), read once at the
start of a run and rewritten whole, atomically, when anything changed; a run that finds it missing,
corrupt or written by another toollint starts afresh. Results are pickled (they carry typed findings,
fixes and evidence, as the `--jobs` workers send them) and read back by an unpickler that only
rebuilds toollint's own classes and the syntax trees inside evidence: a cache file planted in a
repository cannot run code.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from toollint import __version__, registry, sources
from toollint.plugins import declaring_distributions
from toollint.registry import Rule
from toollint.sources import Dependency, digest

if TYPE_CHECKING:
    from toollint.engine import FileResult
    from toollint.settings import Settings

CACHE_DIR_NAME = ".toollint_cache"
FORMAT = 4  # of the cache file; a change makes every older file unreadable on purpose
# A file whose status (size, times, inode) is what it was when its content was hashed holds that content
# still, unless it was written again within the timestamps' resolution of that moment: as git does with
# "racily clean" files, a status is kept only for a file last changed RACY_NS before it was looked at,
# and only where every write moves st_ctime, which no tool sets back (POSIX; Windows' is the creation
# time). A run the cache answers then reads no unchanged file (reading and hashing them was 6% of it).
RACY_NS = 3_000_000_000
TRUST_STATUS = os.name == "posix"
Status = tuple[int, int, int, int, int]  # size, mtime_ns, ctime_ns, inode, device
_GITIGNORE = "# Automatically created by toollint.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by toollint.\n"
)


def disabled_by_environment() -> bool:
    return os.environ.get("TOOLLINT_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def cache_dir_for(settings: Settings) -> Path:
    """Where a run's cache lives: TOOLLINT_CACHE_DIR, else `cache-dir`, else `.toollint_cache` in the
    project root."""
    return cache_dir_in(settings.project_root, settings.cache_dir)


def cache_dir_in(root: Path | None, cache_dir: str | None = None) -> Path:
    """`cache_dir_for` a project root (None: the working directory) and its `cache-dir` setting."""
    configured = os.environ.get("TOOLLINT_CACHE_DIR") or cache_dir
    root = root or Path.cwd()
    return root / configured if configured else root / CACHE_DIR_NAME


def _status(path: str) -> Status | None:
    """What tells a regular file's content has not changed since (None: no regular file there)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev


@dataclass
class Entry:
    """One file's result and what it was computed from."""

    settings_key: str
    digest: str
    module_name: str
    reached: tuple[Dependency, ...]
    result: FileResult


@dataclass
class CacheFile:
    """What the cache file holds: the entries of one working directory and the rule table."""

    format: int
    toollint_key: str
    cwd: str
    entries: dict[str, Entry] = field(default_factory=dict)  # by path as shown
    rules: dict[str, Rule] = field(default_factory=dict)  # the registry's without checks, for the reporters
    statuses: dict[str, tuple[Status, str]] = field(default_factory=dict)  # path -> status, digest then


class ResultCache:
    """The cache of one run: look files up, store their new results, save once at the end."""

    def __init__(self, directory: Path, cwd: str | None = None) -> None:
        self.directory = directory
        self.cwd = cwd or os.getcwd()
        self.path = directory / f"results-{_key(self.cwd)[:16]}.pickle"
        self._key = toollint_key()
        self._file: CacheFile | None = None
        self._settings_keys: dict[int, tuple[Settings, str]] = {}
        self._current: dict[str, str | None] = {}  # dependency path -> its digest now (None: absent)
        self.changed = False
        self.hits = 0
        self._started = time.time_ns()  # before the run reads any file it lints

    @property
    def file(self) -> CacheFile:
        return self._file if self._file is not None else self.read()

    def read(self) -> CacheFile:
        """The cache file, read once (by the first look-up, unless asked before), its rule table handed to
        the registry."""
        if self._file is None:
            self._file = self._read() or CacheFile(FORMAT, self._key, self.cwd)
            registry.remember_rules(self._file.rules)
        return self._file

    def _read(self) -> CacheFile | None:
        try:
            with open(self.path, "rb") as fh:
                loaded = _SafeUnpickler(fh).load()
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError,
                TypeError, ValueError, MemoryError, RecursionError):
            return None  # missing, unreadable, corrupt or foreign: start afresh
        if not isinstance(loaded, CacheFile) or loaded.format != FORMAT or loaded.toollint_key != self._key \
                or loaded.cwd != self.cwd:
            return None
        return loaded

    def settings_key(self, settings: Settings) -> str:
        known = self._settings_keys.get(id(settings))
        if known is None:
            known = self._settings_keys[id(settings)] = (settings, settings_key(settings))
        return known[1]

    def holds(self, shown: str) -> bool:
        """Whether the cache has an entry for this path at all (before the file is read for its digest)."""
        return shown in self.file.entries

    def lookup(self, shown: str, path: str, settings: Settings, module_name: str) -> FileResult | None:
        """The cached result of the file at `path`, when nothing it was computed from has changed."""
        entry = self.file.entries.get(shown)
        if (
            entry is None
            or entry.module_name != module_name
            or entry.settings_key != self.settings_key(settings)
            or self.digest_now(path) != entry.digest
            or not all(self.digest_now(dep) == was for dep, was in entry.reached)
        ):
            return None
        self.hits += 1
        return entry.result

    def digest_now(self, path: str) -> str | None:
        """The digest of a file's content now (None: no regular file to read), each file read once in a run
        and not at all when its status is the one kept with its digest."""
        if path not in self._current:
            self._current[path] = self._digest_now(path)
        return self._current[path]

    def _digest_now(self, path: str) -> str | None:
        now = time.time_ns()
        status = _status(path)
        if status is None:
            return None
        known = self.file.statuses.get(path)
        if TRUST_STATUS and known is not None and known[0] == status:
            return known[1]
        try:
            with open(path, "rb") as fh:
                found = digest(fh.read())
        except OSError:
            return None
        self._keep_status(path, status, found, now)
        return found

    def _keep_linted_status(self, path: str, linted: str) -> None:
        """A file last changed before this run started holds now what the run read and linted: its status
        now goes with that digest (no read again)."""
        status = _status(path)
        if status is not None:
            self._keep_status(path, status, linted, self._started)

    def _keep_status(self, path: str, status: Status, found: str, now: int) -> None:
        """Keep the status a file had before it was read as that of the content read (see RACY_NS)."""
        if TRUST_STATUS and max(status[1], status[2]) < now - RACY_NS:
            self.file.statuses[path] = (status, found)
            self.changed = True

    def store(self, result: FileResult, settings: Settings) -> None:
        """Keep a freshly computed result (not one that could not be read or crashed an internal step)."""
        if result.digest is None or any(f.code == "TL904" for f in result.findings):
            return
        self.file.entries[result.path] = Entry(self.settings_key(settings), result.digest, result.module_name,
                                               result.reached, result)
        self.changed = True
        if TRUST_STATUS and result.path not in self._current:
            self._keep_linted_status(result.path, result.digest)

    def save(self) -> None:
        """Write the cache file whole (atomically) when anything changed; a cache that cannot be written
        costs the next run its speed, never this run its result."""
        if not self.changed:
            return
        rules = registry.loaded_rules()
        if rules is not None:
            self.file.rules = rules
        self.file.entries = {path: entry for path, entry in self.file.entries.items() if os.path.exists(path)}
        self.file.statuses = {path: known for path, known in self.file.statuses.items()
                              if path in self._current or os.path.exists(path)}
        try:
            _ensure_directory(self.directory)
            temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            with open(temp, "wb") as fh:
                pickle.dump(self.file, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temp, self.path)
        except OSError:
            return
        self.changed = False


def _ensure_directory(directory: Path) -> None:
    """The cache folder, ignoring itself in git and tagged as a cache for backup tools."""
    if (directory / ".gitignore").is_file():
        return
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "CACHEDIR.TAG").write_text(_CACHEDIR_TAG, encoding="utf-8")
    (directory / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")


def settings_key(settings: Settings) -> str:
    """Every setting a file's result may depend on (where the cache lives is not one of them)."""
    return _key(repr(dataclasses.replace(settings, cache_dir=None)))


def _key(text: str) -> str:
    """The digest of a key made of text (the cache file's name, the settings, this toollint), hashed as a
    file's content is (`digest`: each call of which is a file read)."""
    return sources.digest(text)


_TOOLLINT_KEY: list[str] = []


def toollint_key() -> str:
    """This toollint: its version, each of its source files' size and mtime (so that an edited rule is
    a new toollint in a development checkout), and the profile plugins installed beside it."""
    if not _TOOLLINT_KEY:
        parts = [f"{__version__}\0{sys.version}\0"]
        for root in _source_roots():
            for directory, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                below = directory[len(root):]  # not os.path.relpath: a run stats ~200 files here
                for name in sorted(files):
                    if name.endswith((".py", ".json")):
                        st = os.stat(os.path.join(directory, name))
                        parts.append(f"{below}/{name}\0{st.st_mtime_ns}\0{st.st_size}\0")
        for plugin in declaring_distributions():  # third-party profiles: their discovery patterns
            parts.append(f"plugin\0{plugin}\0")
        _TOOLLINT_KEY.append(_key("".join(parts)))
    return _TOOLLINT_KEY[0]


def _source_roots() -> list[str]:
    """toollint's package folder and its rules folder (mapped into the namespace from `rules/`)."""
    import importlib.util

    package = os.path.dirname(os.path.abspath(sys.modules["toollint"].__file__ or ""))
    roots = [package]
    spec = importlib.util.find_spec("toollint.rules")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if not os.path.abspath(location).startswith(package + os.sep):
            roots.append(os.path.abspath(location))
    return roots


class _SafeUnpickler(pickle.Unpickler):
    """Rebuilds only the plain data a result is made of (findings, evidence, facts, the syntax trees
    evidence carries) and containers: no class whose construction does anything (a host process, a
    file write) can be named by a planted file."""

    _BUILTINS = frozenset({"set", "frozenset", "tuple", "list", "dict", "complex", "slice", "bytes",
                           "bytearray", "str", "int", "float", "bool", "Ellipsis"})
    _DATA_MODULES = frozenset({"toollint.model", "toollint.evidence", "toollint.facts", "toollint.engine",
                               "toollint.cache", "toollint.registry", "ast", "_ast"})
    # the classes a cache file may name in these modules that are no plain data module's
    _ONLY: ClassVar[dict[str, tuple[str, ...]]] = {
        "toollint.engine": ("FileResult", "RunResult"), "toollint.registry": ("Rule",)
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module == "builtins" and name in self._BUILTINS) or module in self._DATA_MODULES:
            found = super().find_class(module, name)
            if isinstance(found, type) and name in self._ONLY.get(module, (name,)):
                return found
        raise pickle.UnpicklingError(f"the cache may not rebuild {module}.{name}")


def read_cache_file(path: Path) -> CacheFile | None:
    """A cache file as the unpickler reads it (for tests and `bench/speed.py`)."""
    try:
        return _SafeUnpickler(io.BytesIO(path.read_bytes())).load()  # type: ignore[no-any-return]
    except (OSError, pickle.UnpicklingError):
        return None
