"""The modules of the linted tree as one process reads them: each file parsed once, and which other
files each module's analysis reached.

Two things live here because both the engine and the analysis need them and neither may import the
other's internals:

- `parse_file`: a file read from disk and parsed once per process while its content is unchanged
  (the analysis follows helpers and base classes into other modules; the engine may lint one of
  them afterwards and takes the same tree). Keyed by path, checked by size and mtime. The trees kept
  are bounded by what they cost (`MAX_PARSED_BYTES` of source, a tree taking ~50 times its source),
  not by their number: the standard library's followed helpers held ~22 MB of trees for the whole run.
- `read_module` / `take_module`: the bytes of a module read once per process. Discovery reads every
  module of a package for its package-wide questions (`toollint.analysis.dispatch.package_texts`),
  mostly before the engine comes to lint them, and the engine reads each module it lints: the bytes
  one read are kept (checked by size and mtime, each taken once) for the other.
- `Reach`: which files a module's analysis looked at, and what each held (its content digest, or
  None for a file looked for and not found). The analysis records an edge each time it follows an
  import (`record`); `Reach.closure(path)` is everything a linted file's facts may rest on, followed
  transitively, so memos shared between files (a helper summarised for one file and reused for the
  next) are covered too. The cache (`toollint.cache`) keys a file's result by this closure, so a
  result is never reused after a helper it read changed, appeared or disappeared.
- `may_hold_function` and `parses`: whether a module defines no function, class or lambda (a task-data
  module of literals) and is valid Python, told without building its syntax tree: the rules read
  functions, and the tree of a module of literals costs more than all else its lint does.
"""

from __future__ import annotations

import ast
import os
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field

from toollint.memos import forget_with
from toollint.regular import read_regular

try:  # from its own module: hashlib loads OpenSSL first (11 M instructions, 2% of a small run)
    from _blake2 import blake2b
except ImportError:  # (an interpreter built without it)
    from hashlib import blake2b

MAX_MODULE_BYTES = 2_000_000  # larger files are generated data, not code worth following
# Trees kept per process (an LRU), by the bytes of source they were parsed from: the few helpers a
# package's tools share stay parsed (one benchmark's six: 165 kB; the stdlib's 13: 446 kB, 22 MB of trees).
# The newest tree is kept whatever its size: the file that follows an import to it likely follows it again.
MAX_PARSED_BYTES = 256_000

# A module this small costs little to parse: `parses` instead is not worth it.
SKIM_FROM = 4096
# How much deeper ast.parse counts a syntax tree than the symbol table does, in levels of its nesting limit:
# up to one more per bracket (a call's keyword, a comprehension), of the tokenizer's 200 at most, and a few
# for the module and its statement. Each frame entered from C (a generator `next` resumes) takes 2 (3.13) to
# 6 levels (3.11) off the symbol table's limit: 128 of them leave it below ast.parse's for any text.
_DEPTH_MARGIN_CALLS = 128
_FUNCTION_WORDS = ("def", "class", "lambda")

# One dependency of a module: a path and the digest of its content when it was read (None: absent).
Dependency = tuple[str, "str | None"]


def digest(data: bytes | str) -> str:
    """What a file's content is identified by (cache keys, `--fix`'s check that a file did not change): its
    BLAKE2b digest, 32 bytes (as fast as OpenSSL's SHA-256 on a tree's source)."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    return blake2b(raw, digest_size=32).hexdigest()


@dataclass(frozen=True)
class ParsedFile:
    """A module's content and its syntax tree, kept for the next reader."""

    path: str
    digest: str
    tree: ast.Module | None  # None: too large, or not valid Python
    # what the analysis made of the tree (by module name), kept exactly as long as the tree is
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)


_PARSED: OrderedDict[str, tuple[tuple[int, int], ParsedFile]] = OrderedDict()
_parsed_bytes = 0  # the source bytes of the trees in _PARSED


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def parse_file(path: str) -> ParsedFile | None:
    """The file at `path` parsed (once per process while unchanged); None when it cannot be read."""
    stamp = _stamp(path)
    if stamp is None:
        return None
    known = _PARSED.get(path)
    if known is not None and known[0] == stamp:
        _PARSED.move_to_end(path)
        return known[1]
    try:
        data = read_module(path)  # (bytes the engine read are not read again, nor these by the engine)
    except OSError:
        return None
    tree: ast.Module | None = None
    if len(data) <= MAX_MODULE_BYTES:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
    parsed = ParsedFile(path, digest(data), tree)
    remember(path, stamp, parsed)
    return parsed


def cached_parse(path: str, data: bytes) -> ast.Module | None:
    """A tree this process already parsed from exactly these bytes (the engine asks before parsing)."""
    known = _PARSED.get(path)
    if known is not None and known[1].tree is not None and known[1].digest == digest(data):
        return known[1].tree
    return None


def remember(path: str, stamp: tuple[int, int], parsed: ParsedFile) -> None:
    global _parsed_bytes
    old = _PARSED.pop(path, None)
    if old is not None:
        _parsed_bytes -= old[0][1]
    _PARSED[path] = (stamp, parsed)
    _parsed_bytes += stamp[1]
    while _parsed_bytes > MAX_PARSED_BYTES and len(_PARSED) > 1:
        _parsed_bytes -= _PARSED.popitem(last=False)[1][0][1]


def parsed_bytes() -> int:
    """The source bytes of the trees this process keeps."""
    return _parsed_bytes


# Module bytes one reader read for the other (the engine for discovery's package questions, or
# discovery for the engine), by absolute path, each taken once: an LRU bounded by count and bytes.
# A package's modules are kept while its files are linted; in a larger directory (the stdlib's test/,
# 14 MB) the engine reads again from the page cache what fell out, which costs less than holding it all.
_READ: OrderedDict[str, tuple[tuple[int, int], bytes]] = OrderedDict()
MAX_KEPT = 256
MAX_KEPT_BYTES = 1_000_000
_kept_bytes = 0


def keep_module(path: str, data: bytes, stamp: tuple[int, int] | None = None) -> None:
    """`data` was read from `path`: kept for the other reader (when small enough to be worth it)."""
    global _kept_bytes
    if len(data) > MAX_MODULE_BYTES:
        return
    stamp = stamp or _stamp(path)
    if stamp is None or stamp[1] != len(data):
        return  # changed while it was read: not kept
    key = os.path.abspath(path)
    old = _READ.pop(key, None)
    if old is not None:
        _kept_bytes -= len(old[1])
    _READ[key] = (stamp, data)
    _kept_bytes += len(data)
    while len(_READ) > MAX_KEPT or _kept_bytes > MAX_KEPT_BYTES:
        _kept_bytes -= len(_READ.popitem(last=False)[1][1])


def take_module(path: str, max_bytes: int | None = None) -> bytes | None:
    """The bytes the other reader read from `path`, if the file is unchanged since (and within
    `max_bytes`); None when it must be read. Each read is taken once."""
    global _kept_bytes
    key = os.path.abspath(path)
    known = _READ.pop(key, None)
    if known is None:
        return None
    _kept_bytes -= len(known[1])
    if (max_bytes is not None and len(known[1]) > max_bytes) or _stamp(key) != known[0]:
        return None
    return known[1]


def read_module(path: str) -> bytes:
    """A module's bytes for the analysis: those the engine read if unchanged, else read now (a regular
    file only: `NotRegularFileError`, an `OSError`, for anything else) and kept for the engine."""
    data = take_module(path)
    if data is not None:
        return data
    stamp = _stamp(path)
    data = read_regular(path)
    if stamp is not None:
        keep_module(path, data, stamp)
    return data


class Reach:
    """The files each module's analysis looked at: edges from an importer's path to a file read (with
    its digest) or looked for and not found."""

    def __init__(self) -> None:
        self.edges: dict[str, dict[str, str | None]] = {}

    def record(self, importer: str, path: str, content_digest: str | None) -> None:
        if importer and path != importer:
            self.edges.setdefault(importer, {})[path] = content_digest

    def closure(self, path: str) -> tuple[Dependency, ...]:
        """Every file `path`'s analysis may rest on, transitively, sorted; () when it followed nothing."""
        direct = self.edges.get(path)
        if not direct:
            return ()
        out: dict[str, str | None] = {}
        stack = [path]
        seen = {path}
        while stack:
            for dep, dep_digest in self.edges.get(stack.pop(), {}).items():
                if dep not in out and dep != path:
                    out[dep] = dep_digest
                if dep not in seen and dep_digest is not None:
                    seen.add(dep)
                    stack.append(dep)
        return tuple(sorted(out.items()))


REACH = Reach()  # this process's, for one run: an earlier run's edges (a relative path's among them) would
forget_with(REACH.edges.clear)  # add files to a closure that this run's analysis never looked at


def record_read(importer: str, path: str) -> None:
    """The analysis of `importer` read `path` (parsed through `parse_file`)."""
    known = _PARSED.get(path)
    REACH.record(importer, path, known[1].digest if known is not None else None)


def record_absent(importer: str, paths: tuple[str, ...]) -> None:
    """The analysis of `importer` looked for these files and found none (a new one would change it)."""
    for path in paths:
        REACH.record(importer, path, None)


def may_hold_function(text: str) -> bool:
    """Whether `text` may define a function, class or lambda: one of those words stands alone in it (in a
    string or a comment too: over-counted, never missed), `def` and `class` first on their line (or after
    `async`) as every compound statement is; a keyword is never next to a letter, a digit or `_`."""
    return any(_stands_alone(text, word, word != "lambda") for word in _FUNCTION_WORDS)


def parses(text: str, path: str) -> bool:
    """Whether ast.parse would parse `text`, told without building its syntax tree (what costs most of a
    module of literals' lint): the parser and the symbol table accept it. False for anything else, where
    ast.parse is to say what is wrong: a text ast.parse would find nested too deeply is never passed (the
    symbol table is built with its nesting limit lowered below ast.parse's, _DEPTH_MARGIN_CALLS)."""
    try:
        with warnings.catch_warnings():  # as the engine's ast.parse: the audited project's business
            warnings.simplefilter("ignore")
            _symbol_table(text, path, _DEPTH_MARGIN_CALLS)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _stands_alone(text: str, word: str, first_on_line: bool) -> bool:
    at = text.find(word)
    while at >= 0:
        before, after = text[at - 1:at], text[at + len(word):at + len(word) + 1]
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            if not first_on_line:
                return True
            line_start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
            if text[line_start:at].strip(" \t\f") in ("", "async"):  # the tokenizer's white space
                return True
        at = text.find(word, at + 1)
    return False


def _symbol_table(text: str, path: str, calls: int) -> object:
    """The symbol table of `text` built `calls` frames deep (each entered from C: see _DEPTH_MARGIN_CALLS)."""
    if calls:
        return next(_symbol_table(text, path, calls - 1) for _ in (None,))
    import symtable  # with the first module of literals (a run with none never needs it)

    return symtable.symtable(text, path, "exec")
