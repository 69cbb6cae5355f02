"""The engine every front end shares: decode, parse, run the enabled rules, apply noqa.

`lint_source` lints one file's text, `lint_paths` walks targets (optionally on a process pool), and
`lint_tree` runs the rules on a tree someone else parsed (the flake8 plugin). Every file is linted
with its own settings (those of the nearest configuration file, from a `SettingsResolver`), and its
result records a digest of the bytes it was computed from, so `--fix` can tell a file that changed
since. Problems with the input
become TL9xx findings, never exceptions: TL901 the file does not parse, TL902 it does not decode,
TL903 it cannot be read, TL904 a rule crashed on it (the other rules still run), TL905 a tool is
too complex for the analysis (the others are still analysed), TL906 the file is too large to analyse
within the memory ceiling. TL904 is reported even when not
selected: an internal error is never silenced. Each `FileResult` also carries the tool facts
(`tools`, `rejected`) the summary and `--show-tools` print, and the grader facts (`graders`)
`--show-graders` prints.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import os
import tokenize
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from toollint import registry, sources
from toollint.config import SettingsResolver
from toollint.errors import SelectionError
from toollint.evidence import Confidence
from toollint.files import collect_files, display_path, guess_module_name, matching_globs
from toollint.memos import forget_file_memos
from toollint.model import Finding
from toollint.processes import can_share_out, die_with_parent, idle_cpus, memory_ceiling, share_out
from toollint.regular import TooLargeError, read_regular
from toollint.settings import Settings
from toollint.sources import REACH, Dependency, cached_parse, digest, keep_module, take_module

if TYPE_CHECKING:  # the analysis is imported when a file is linted, not by a run the cache answers
    from toollint.context import ModuleContext
    from toollint.facts import Candidate, GraderFact, Rejection, ToolFact

__all__ = ["FileResult", "RunResult", "Selection", "SelectionError", "lint_paths", "lint_source", "lint_tree"]

SYNTAX_ERROR = "TL901"
DECODE_ERROR = "TL902"
IO_ERROR = "TL903"
INTERNAL_ERROR = "TL904"
TOO_COMPLEX = "TL905"
TOO_LARGE = "TL906"
# The static run's memory ceiling: a file's analysis may take this much beyond what the process held
# (its parse alone takes about BYTES_PER_SOURCE_BYTE times the file's size, so a file whose estimate is
# over is refused unread; one the estimate misjudges meets the ceiling as a MemoryError). Either way a
# TL906, never a machine out of memory: a generated 50 MB file took 5.4 GB before there was a ceiling.
STATIC_MEMORY_CEILING = 2 << 30
BYTES_PER_SOURCE_BYTE = 100
CEILING_FROM = 256 << 10  # smaller files cannot come near the ceiling: not worth two system calls
# Below this many files per process, sharing the work out costs more than it saves.
MIN_FILES_PER_JOB = 8
# With the default job count (0), how much source makes another process worth its start. Where this
# process can fork copies of itself (`processes.share_out`, Linux), one more process per
# FORKED_BYTES_PER_JOB, on CPUs that are idle as the run starts (`processes.idle_cpus`): on a quiet
# 2-core machine two processes took 0.70 of one's wall time on langchain-community (560 kB of source),
# 0.84 on 200 kB of it, 0.94 on 147 kB and on 86 kB; with both cores busy they took 1.06-1.57 of it, so
# a busy machine stays serial. Elsewhere a pool's workers start from nothing and each repeats the
# cross-module parses another already made: on a busy 2-core machine the pool cost 1.2-1.5x the serial
# wall time on the corpus code bases (0.25-1.3 MB each), so only PARALLEL_FROM_BYTES of source keeps it.
FORKED_BYTES_PER_JOB = 64 << 10
PARALLEL_FROM_BYTES = 2 << 20
# Explicit collections while the cyclic GC is off. An analysed module's tree is cyclic garbage (its
# function index keys memos by itself), about 50 times its source: counted by files alone, up to 256
# files' trees waited (in the stdlib's test/, ~15 MiB of the 140 MiB peak, the rest of it since
# rounded off in toollint.sources and the package questions). So the youngest generation (what the
# files since the last collection made: ~0.3 ms) is collected after every GC_YOUNG_BYTES of source,
# and the whole heap after every GC_EVERY files.
GC_EVERY = 256
GC_YOUNG_BYTES = 128 << 10


@dataclass
class FileResult:
    """One file's findings and what the analysis found in it."""

    path: str  # as shown to the user
    findings: list[Finding] = field(default_factory=list)  # including suppressed ones
    module_name: str = ""
    digest: str | None = None  # of the content linted (None: not read)
    # What discovery made of the file (None when no static rule ran on it): each tool with whether it
    # writes and why, and each function that looks like a tool but was not taken, with why.
    tools: list[ToolFact] | None = None
    rejected: list[Rejection] = field(default_factory=list)
    graders: list[GraderFact] | None = None  # the file's graders and their bases (None: not analysed)
    # The other files its facts rest on, each with the digest of what it held (None: looked for, absent):
    # the helpers and base classes its tools and graders reach (toollint.sources); the cache's key.
    reached: tuple[Dependency, ...] = ()
    # What looks most like a tool in it, found for a run that found no tool (None: not looked for), and
    # cached with the result: a warm run that finds no tool names them without parsing again.
    candidates: list[Candidate] | None = None

    @property
    def reported(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed]

    @property
    def writers(self) -> list[ToolFact]:
        return [t for t in self.tools or [] if t.writes]

    @property
    def tool_count(self) -> int:
        """Tools the analysis found in the file."""
        return len(self.tools or [])


@dataclass
class RunResult:
    """Every file's result and what the walk of the targets could not lint."""

    files: list[FileResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # targets that do not exist
    no_python: list[str] = field(default_factory=list)  # directory targets without Python files
    not_python: list[str] = field(default_factory=list)  # named files that are not Python (skipped)
    not_regular: list[tuple[str, str]] = field(default_factory=list)  # FIFOs, devices (skipped): path, what
    unusable: list[tuple[str, str]] = field(
        default_factory=list
    )  # targets no file can have (exit 2): path, why
    unlisted: list[str] = field(
        default_factory=list
    )  # folders the walk could not list (a TL903 each; exit 2)
    root: Path | None = None  # the run's project root: paths in SARIF and baselines are relative to it

    @property
    def findings(self) -> list[Finding]:
        """Every finding, suppressed ones included, in path/line order."""
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)

    @property
    def reported(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed]

    @property
    def suppressed_count(self) -> int:
        return sum(f.suppressed for r in self.files for f in r.findings)

    @property
    def internal_errors(self) -> list[Finding]:
        return [f for f in self.reported if f.code == INTERNAL_ERROR]

    @property
    def checked_count(self) -> int:
        """Files read and linted (not directories that could not be listed)."""
        return sum(r.digest is not None for r in self.files)

    @property
    def tool_count(self) -> int:
        """Tools found in every file linted (the summary line's "N tools")."""
        return sum(len(r.tools or []) for r in self.files)

    @property
    def grader_count(self) -> int:
        """Graders found in every file linted (the summary line's "N graders")."""
        return sum(len(r.graders or []) for r in self.files)

    @property
    def writer_count(self) -> int:
        """Tools among them that write state."""
        return sum(len(r.writers) for r in self.files)

    @property
    def file_count(self) -> int:
        return len(self.files)


@dataclass(frozen=True)
class Selection:
    """The codes a run reports, resolved once from the settings."""

    enabled: frozenset[str]
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Selection:
        selected = _expand(settings.select, "select") | _expand(settings.extend_select, "extend-select")
        enabled = selected - _expand(settings.ignore, "ignore")
        per_file = tuple(
            (glob, frozenset(_expand(codes, f"per-file-ignores[{glob!r}]")))
            for glob, codes in settings.per_file_ignores.items()
        )
        return cls(frozenset(enabled), per_file)

    def for_file(self, path: str, root: Path | None) -> frozenset[str]:
        if not self.per_file_ignores:
            return self.enabled
        globs = matching_globs(path, [g for g, _ in self.per_file_ignores], root)
        ignored = frozenset().union(*(codes for g, codes in self.per_file_ignores if g in globs))
        return self.enabled - ignored


def _expand(selectors: Iterable[str], where: str) -> set[str]:
    try:
        return set(registry.expand(selectors))
    except KeyError as exc:
        raise SelectionError(f"unknown rule selector {exc.args[0]!r} in {where}") from None


class DecodeProblem(Exception):
    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.col = col


def decode_source(data: bytes) -> str:
    """Bytes to text as Python does: BOM, then a PEP 263 coding cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # No valid cookie and the first lines are not UTF-8: find the offending byte for the location.
        encoding = "utf-8"
        if "encoding problem" in str(exc) or "unknown encoding" in str(exc):
            raise DecodeProblem(str(exc).rstrip(".")) from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise DecodeProblem(
            f"not valid {encoding}: byte 0x{byte} cannot be decoded", line, exc.start - line_start + 1
        ) from None
    except LookupError:
        raise DecodeProblem(f"unknown encoding: {encoding}") from None


def lint_source(source: bytes | str, path: str, settings: Settings, module_name: str = "") -> FileResult:
    """Lint one file's content; `path` is how findings name it."""
    return _lint_source(source, path, settings, Selection.from_settings(settings), module_name)


def lint_tree(
    tree: ast.Module,
    source: str,
    path: str,
    settings: Settings,
    module_name: str = "",
    *,
    apply_noqa: bool = False,
) -> list[Finding]:
    """Run the enabled static rules on an already parsed tree (flake8 applies its own noqa)."""
    from toollint.context import ModuleContext  # as in _lint_source

    selection = Selection.from_settings(settings)
    enabled = selection.for_file(path, settings.project_root)
    ctx = ModuleContext(path, source, tree, settings, module_name or guess_module_name(path))
    findings = run_rules(ctx, enabled)
    if apply_noqa:
        findings.extend(_apply_noqa(ctx, findings, enabled))
    return sorted(findings, key=Finding.sort_key)


def run_rules(ctx: ModuleContext, enabled: frozenset[str]) -> list[Finding]:
    """Every enabled static rule on one module; a rule that raises becomes one TL904."""
    findings: list[Finding] = []
    least = Confidence.parse(ctx.settings.confidence)  # a premise weaker than this is not reported
    for rule in registry.static_rules():
        if rule.code not in enabled or rule.check is None:
            continue
        try:
            found = list(rule.check(ctx))
        except Exception as exc:  # noqa: BLE001 - a bug in one rule must not cost the other rules or files
            findings.append(internal_error(ctx.path, rule.code, exc))
        else:
            findings.extend(f for f in found if f.code in enabled and f.confidence >= least)
    findings.extend(too_complex(ctx, enabled))
    return findings


def too_complex(ctx: ModuleContext, enabled: frozenset[str]) -> list[Finding]:
    """TL905 for each tool the analysis could not read (computed only if a rule asked for it)."""
    analysis = ctx.__dict__.get("analysis")
    if analysis is None or TOO_COMPLEX not in enabled:
        return []
    found = [
        ctx.finding(
            TOO_COMPLEX,
            tool.node,
            f"`{tool.name}` is too complex to analyse: {reason}; the static rules skipped it",
            tool=tool.qualname,
        )
        for tool, reason in analysis.too_complex
    ]
    if analysis._graders is not None:  # the grader rules ran: graders they could not read are reported too
        found += [
            ctx.finding(
                TOO_COMPLEX,
                grader.node,
                f"grader `{grader.name}` is too complex to analyse: {reason}; the grader rules skipped it",
                tool=grader.qualname,
            )
            for grader, reason in analysis.complex_graders
        ]
    return found


def tool_facts(ctx: ModuleContext) -> tuple[list[ToolFact] | None, list[Rejection]]:
    """What the analysis found in the file, for the summary line and --show-tools. The rules have
    built the analysis already (it is cached); None when it cannot be built (a TL904 says why)."""
    try:
        analysis = ctx.analysis
    except Exception:  # noqa: BLE001 - a crash here was already reported as the rules' TL904
        return None, []
    return analysis.facts(), list(analysis.rejected)


def grader_facts(ctx: ModuleContext) -> list[GraderFact] | None:
    """The file's graders, each with its basis, for --show-graders and the summary line (found even when
    no grader rule is selected; None when no rule built the analysis, or it cannot be read: a TL904 says
    why)."""
    analysis = ctx.__dict__.get("analysis")
    if analysis is None:
        return None
    try:
        from toollint.analysis.graders import grader_fact

        return [grader_fact(g) for g in analysis.graders]
    except Exception:  # noqa: BLE001 - a crash here was already reported as the grader rules' TL904
        return None


def internal_error(path: str, code: str, exc: BaseException) -> Finding:
    detail = (str(exc).strip().splitlines() or [""])[0][:200]
    import traceback  # only when something failed: 1% of a run the cache answers

    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    label = f"{code} ({registry.rule_name(code)})" if registry.get(code) is not None else code
    return Finding(
        code=INTERNAL_ERROR,
        message=f"internal error in {label}: "
        f"{type(exc).__name__}{': ' + detail if detail else ''} (at {where}); please report it",
        path=path,
        line=1,
        col=1,
        properties={"rule": code, "exception": type(exc).__name__, "where": where},
    )


def _apply_noqa(ctx: ModuleContext, findings: list[Finding], enabled: frozenset[str]) -> list[Finding]:
    from toollint.context import might_have_noqa

    if not might_have_noqa(ctx.source):
        return []
    from toollint import noqa  # with the first file that mentions noqa: a run without one needs none

    return noqa.apply(findings, ctx.noqa_comments, enabled, ctx.path)


def _lint_source(
    source: bytes | str, path: str, settings: Settings, selection: Selection, module_name: str
) -> FileResult:
    enabled = selection.for_file(path, settings.project_root)
    result = FileResult(path, module_name=module_name or guess_module_name(path), digest=digest(source))
    problem = _problem(source, path, enabled)
    if isinstance(problem, Finding):
        result.findings = [problem] if problem.code in enabled else []
        return result
    if problem is None:
        return result
    text, tree = problem
    if tree is None:  # no function, class or lambda: what the analysis finds in such a module, and no finding
        result.tools, result.graders = [], []  # (resting on no other file: nothing `reached`)
        return result
    from toollint.context import ModuleContext  # a file to lint: not imported by a run the cache answers

    ctx = ModuleContext(path, text, tree, settings, result.module_name)
    findings = run_rules(ctx, enabled)
    findings.extend(_apply_noqa(ctx, findings, enabled))
    result.findings = sorted(findings, key=Finding.sort_key)
    result.tools, result.rejected = tool_facts(ctx)
    result.graders = grader_facts(ctx)
    if ctx.disk_path:
        result.reached = REACH.closure(ctx.disk_path)
    return result


def _holds_nothing_to_read(text: str, path: str, enabled: frozenset[str]) -> bool:
    """Whether the rules may skip this text unparsed: a module of literals (no function, class or lambda)
    gives toollint's own rules nothing to read, each reading the module's tools or graders (a rule
    registered from elsewhere may read anything), and without a noqa comment TL900 has none to read."""
    # (a larger text's tree may meet the memory ceiling: TL906, found by parsing it)
    if not sources.SKIM_FROM <= len(text) <= sources.MAX_MODULE_BYTES or sources.may_hold_function(text):
        return False
    from toollint.context import might_have_noqa

    return (not might_have_noqa(text)
            and all(r.check.__module__.startswith("toollint.rules.") for r in registry.static_rules()
                    if r.code in enabled and r.check is not None)
            and sources.parses(text, path))


def _problem(
    source: bytes | str, path: str, enabled: frozenset[str]
) -> Finding | tuple[str, ast.Module | None] | None:
    """Decode and parse; a TL901/TL902 finding when that fails, None when there is nothing to lint, and no
    tree for a text the rules may skip (`_holds_nothing_to_read`)."""
    if isinstance(source, bytes):
        try:
            text = decode_source(source)
        except DecodeProblem as exc:
            return Finding(DECODE_ERROR, f"cannot decode file: {exc}", path, exc.line, exc.col)
    else:
        text = source
    if not text.strip():
        return None
    if "\0" in text:
        offset = text.index("\0")
        line_start = text.rfind("\n", 0, offset) + 1
        return Finding(
            SYNTAX_ERROR,
            "SyntaxError: source contains a null byte",
            path,
            text.count("\n", 0, offset) + 1,
            offset - line_start + 1,
        )
    known = cached_parse(path, source) if isinstance(source, bytes) else None
    if known is not None:  # the analysis parsed this very content already, following an import
        return text, known
    if _holds_nothing_to_read(text, path, enabled):
        return text, None
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the audited project's business
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        return Finding(SYNTAX_ERROR, f"SyntaxError: {exc.msg}", path, line, max(exc.offset or 1, 1))
    except (RecursionError, MemoryError) as exc:
        # CPython's parser says MemoryError for a too deep expression too; in a file large enough to run
        # under the memory ceiling, it is the ceiling (TL906, from read_and_lint)
        if isinstance(exc, MemoryError) and len(text) >= CEILING_FROM:
            raise
        return Finding(SYNTAX_ERROR, "SyntaxError: too deeply nested to parse", path, 1, 1)
    except ValueError as exc:  # e.g. a surrogate that cannot be encoded back for the parser
        return Finding(SYNTAX_ERROR, f"SyntaxError: {exc}", path, 1, 1)
    return text, tree


def read_and_lint(path: Path, shown: str, settings: Settings, selection: Selection) -> FileResult:
    """Read one file and lint it; an unreadable file is a TL903."""
    try:
        # a FIFO put there since the walk is refused, not waited on; a file too large is not read; a
        # module discovery read already for its package's questions is not read again (nor the other way)
        data = take_module(str(path), STATIC_MEMORY_CEILING // BYTES_PER_SOURCE_BYTE)
        if data is None:
            data = read_regular(path, max_bytes=STATIC_MEMORY_CEILING // BYTES_PER_SOURCE_BYTE)
            keep_module(str(path), data)
    except TooLargeError as exc:
        return too_large(shown, f"{exc.size / 1e6:.1f} MB of source would take about "
                         f"{_gib(exc.size * BYTES_PER_SOURCE_BYTE)} to parse")
    except OSError as exc:
        return io_error(shown, exc.strerror or type(exc).__name__, settings, selection)
    try:
        if len(data) < CEILING_FROM:
            return _lint_source(data, shown, settings, selection, guess_module_name(path))
        with memory_ceiling(STATIC_MEMORY_CEILING):
            return _lint_source(data, shown, settings, selection, guess_module_name(path))
    except MemoryError:
        return too_large(
            shown, f"its analysis ran out of memory ({len(data) / 1e6:.1f} MB of source)", digest(data)
        )
    except Exception as exc:  # noqa: BLE001 - a bug outside the rules costs this file, not the run
        return FileResult(shown, [internal_error(shown, "the engine", exc)], digest=digest(data))


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"


def too_large(shown: str, why: str, content: str | None = None) -> FileResult:
    """TL906, reported even when not selected (like TL904: a file silently skipped would pass)."""
    finding = Finding(TOO_LARGE, f"file too large to analyse: {why}, over the static run's "
                      f"{_gib(STATIC_MEMORY_CEILING)} memory ceiling; the static rules skipped it",
                      shown, 1, 1)
    return FileResult(shown, [finding], digest=content)


def io_error(shown: str, reason: str, settings: Settings, selection: Selection) -> FileResult:
    finding = Finding(IO_ERROR, f"cannot read: {reason}", shown, 1, 1)
    enabled = selection.for_file(shown, settings.project_root)
    return FileResult(shown, [finding] if IO_ERROR in enabled else [])


class ResultStore(Protocol):
    """What `lint_paths` asks of a results cache (`toollint.cache.ResultCache`)."""

    def holds(self, shown: str) -> bool: ...

    def lookup(self, shown: str, path: str, settings: Settings, module_name: str) -> FileResult | None: ...

    def store(self, result: FileResult, settings: Settings) -> None: ...


class _Configurations:
    """Settings and their resolved selection per configuration, numbered so that process-pool
    workers receive each once, not once per file. A selection is resolved when a file is first linted
    with it (resolving one loads every rule; a run the cache answers whole needs none)."""

    def __init__(self, source: Settings | SettingsResolver) -> None:
        self.source = source
        self.settings: list[Settings] = []
        self._selections: list[Selection | None] = []
        self._index: dict[int, int] = {}  # id(settings) -> position
        self._by_folder: dict[str, int] = {}  # a folder of linted files -> its files' position

    def index_for(self, path: Path) -> int:
        settings = self.source.for_path(path) if isinstance(self.source, SettingsResolver) else self.source
        position = self._index.get(id(settings))
        if position is None:
            position = self._index[id(settings)] = len(self.settings)
            self.settings.append(settings)
            self._selections.append(None)
        return position

    def index_for_file(self, path: Path) -> int:
        """`index_for` a file (no directory): files of one folder share its configuration, so it is asked
        once per folder (per file it cost a stat and two path objects: 2.5% of a warm run on 261 files)."""
        folder = os.path.dirname(path)
        position = self._by_folder.get(folder)
        if position is None:
            position = self._by_folder[folder] = self.index_for(path)
        return position

    def entry(self, position: int) -> tuple[Settings, Selection]:
        selection = self._selections[position]
        if selection is None:  # raises SelectionError for a bad selector before a file is linted with it
            selection = self._selections[position] = Selection.from_settings(self.settings[position])
        return self.settings[position], selection

    @property
    def entries(self) -> list[tuple[Settings, Selection]]:
        return [self.entry(i) for i in range(len(self.settings))]

    def settings_for(self, path: Path) -> Settings:
        return self.settings[self.index_for(path)]


def lint_paths(
    paths: Sequence[str | Path],
    settings: Settings | SettingsResolver,
    jobs: int = 1,
    *,
    force_exclude: bool = False,
    cache: ResultStore | None = None,
) -> RunResult:
    """Lint every Python file under the targets. `settings`: one for every file, or a resolver that
    gives each file the settings of its configuration. `jobs` > 1 uses that many processes (0: one per
    CPU for a run with PARALLEL_FROM_BYTES of source or more, else serial). With a `cache`, files whose
    result it holds are not linted again, and new results go into it (the caller saves it)."""
    forget_file_memos()  # a process that lints again (tests, editors) asks the file system afresh
    configs = _Configurations(settings)
    run_settings = settings.for_run(paths) if isinstance(settings, SettingsResolver) else settings
    if cache is None:
        Selection.from_settings(run_settings)  # a bad selector fails before any work
    found = collect_files(paths, configs.settings_for, force_exclude=force_exclude)
    result = RunResult(
        missing=found.missing,
        no_python=found.no_python,
        not_python=found.not_python,
        not_regular=found.not_regular,
        unusable=found.unusable,
        root=run_settings.project_root,
    )
    cwd = Path.cwd()
    for directory, reason in found.unreadable:
        dir_settings, dir_selection = configs.entry(configs.index_for(directory))
        result.files.append(io_error(display_path(directory, cwd), reason, dir_settings, dir_selection))
        result.unlisted.append(display_path(directory, cwd))
    work = [(p, display_path(p, cwd), configs.index_for_file(p)) for p in found.files]
    done: dict[int, FileResult] = {}  # by position in `work`: what the cache answered
    if cache is not None:
        # A file the cache does not answer is read again where it is linted (from the page cache): the
        # bytes of a whole tree are not held here meanwhile.
        for position, (path, shown, config) in enumerate(work):
            if not cache.holds(shown):  # a cold run reads nothing here: the workers start at once
                continue
            # (read only if its status changed; a file the cache cannot read is linted below: a TL903)
            hit = cache.lookup(shown, str(path), configs.settings[config], guess_module_name(path))
            if hit is not None:
                done[position] = hit
    todo = [position for position in range(len(work)) if position not in done]
    processes = _processes(jobs, [work[p][0] for p in todo])
    was_enabled = gc.isenabled()
    gc.disable()  # trees are dropped file by file; the cyclic GC only slows parsing down here
    gc.freeze()  # what start-up made lives as long as the run: the collections below never scan it
    try:
        if processes > 1:
            linted = _lint_parallel([work[p] for p in todo], configs.entries, processes)
        else:
            linted = []
            garbage = _Garbage()
            for i, position in enumerate(todo, 1):
                path, shown, config = work[position]
                linted.append(read_and_lint(path, shown, *configs.entry(config)))
                if len(todo) - i >= GC_EVERY // 4:  # not when the run is about to end: nothing to free for
                    garbage.collect(path)
    finally:
        gc.unfreeze()  # a caller that lints again (a test session, an editor) may collect it after all
        if was_enabled:
            gc.enable()
    for position, file_result in zip(todo, linted):
        done[position] = file_result
        if cache is not None:
            cache.store(file_result, configs.settings[work[position][2]])
    result.files.extend(done[position] for position in range(len(work)))
    return result


def _processes(jobs: int, paths: list[Path]) -> int:
    """How many processes lint `paths`: `jobs` (0: as many as the source pays for, up to one per CPU, or
    per idle CPU where copies are forked), and never fewer than MIN_FILES_PER_JOB files each."""
    most = len(paths) // MIN_FILES_PER_JOB
    if jobs:
        return jobs if 1 < jobs <= most else 1
    if most < 2:
        return 1
    size = sum(_source_sizes(paths))
    if can_share_out():
        return max(min(idle_cpus(), most, size // FORKED_BYTES_PER_JOB), 1)
    return min(os.cpu_count() or 1, most) if size >= PARALLEL_FROM_BYTES else 1


def _source_sizes(paths: Iterable[Path]) -> list[int]:
    sizes = []
    for path in paths:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)  # linted anyway, where it becomes a TL903
    return sizes


class _Garbage:
    """The collections a process makes as it lints with the cyclic GC off (see GC_EVERY)."""

    def __init__(self) -> None:
        self.files = self.size = 0

    def collect(self, path: Path) -> None:
        """`path` was linted: collect what is due."""
        self.files += 1
        with contextlib.suppress(OSError):
            self.size += path.stat().st_size
        if self.files >= GC_EVERY:
            self.files = self.size = 0
            gc.collect()
        elif self.size >= GC_YOUNG_BYTES:
            self.size = 0
            gc.collect(0)


_worker_state: list[tuple[Settings, Selection]] = []
_worker_garbage = _Garbage()  # what this worker linted since its last collection


def _init_worker(entries: list[tuple[Settings, Selection]], parent_pid: int) -> None:
    die_with_parent(parent_pid)
    _worker_state[:] = entries
    gc.disable()
    gc.freeze()


def _lint_in_worker(unit: list[tuple[Path, str, int]]) -> list[FileResult]:
    return _lint_unit(unit, _worker_state)


def _lint_unit(
    unit: list[tuple[Path, str, int]], entries: list[tuple[Settings, Selection]]
) -> list[FileResult]:
    out = [read_and_lint(path, shown, *entries[config]) for path, shown, config in unit]
    for path, _, _ in unit:  # as the serial loop does
        _worker_garbage.collect(path)
    return out


def work_units(work: list[tuple[Path, str, int]], jobs: int) -> list[list[int]]:
    """Positions in `work` grouped into the units a worker lints whole, largest first: consecutive files
    of one directory (a worker then reads their package's schemas and dispatches, and the helpers they
    share, once, not each worker for every other file), each at most an eighth of one worker's share of
    the bytes so that the units still balance. Largest first: the run does not end waiting on one big
    file handed out last."""
    sizes = _source_sizes(path for path, _, _ in work)
    cap = max(sum(sizes) // (jobs * 8), 1)
    units: list[list[int]] = []
    held = 0
    for position, (path, _, _) in enumerate(work):
        if units and path.parent == work[units[-1][-1]][0].parent and held + sizes[position] <= cap:
            units[-1].append(position)
            held += sizes[position]
        else:
            units.append([position])
            held = sizes[position]
    return sorted(units, key=lambda unit: -sum(sizes[p] for p in unit))


def _lint_parallel(
    work: list[tuple[Path, str, int]], entries: list[tuple[Settings, Selection]], jobs: int
) -> list[FileResult]:
    units = work_units(work, jobs)
    items = [[work[p] for p in unit] for unit in units]
    shared = share_out(items, lambda unit: _lint_unit(unit, entries), jobs)
    if shared is not None:  # what a copy of this process did not answer for (it died) is linted here
        linted = [answer if answer is not None else _lint_unit(unit, entries)
                  for unit, answer in zip(items, shared)]
    else:
        # Imported here: a pool costs every single-file (pre-commit) run its import time otherwise.
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        try:
            with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(entries, os.getpid())) as pool:
                linted = list(pool.map(_lint_in_worker, items))
        except (BrokenProcessPool, OSError):  # no usable pool (a worker died, no semaphores): go serial
            return _lint_unit(work, entries)
    by_position = {p: r for unit, results in zip(units, linted) for p, r in zip(unit, results)}
    return [by_position[p] for p in range(len(work))]
