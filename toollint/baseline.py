"""Adopting toollint on an existing benchmark: baselines and `--diff-base`.

Both compare findings by their `toollint/v1` fingerprint (rule, repository-relative path, enclosing
tool, message without line numbers; see `toollint.fingerprint`), never by line: a finding that merely
moved is still the same finding, and a finding on an unchanged line that a change elsewhere caused is
still new. (flake8 dropped its line-based `--diff` because it missed exactly those.)

* `--write-baseline FILE` records the current findings; `--baseline FILE` then reports only findings
  not in it, and warns about entries that no longer match anything (stale: fixed, or changed beyond
  recognition), so the file can be refreshed.
* `--diff-base REF` reports only findings that are new relative to a git revision: every linted file
  is also linted as it was at REF (read with one `git cat-file --batch`) and findings present there
  are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint import atomic
from toollint.console import printable
from toollint.errors import BaselineError, StopCheck
from toollint.model import Finding

if TYPE_CHECKING:
    import subprocess

    from toollint.config import SettingsResolver
    from toollint.engine import RunResult
    from toollint.pipeline import StepContext
    from toollint.settings import Settings

__all__ = ["BaselineEntry", "BaselineError", "apply_baseline", "check_step", "load_baseline", "new_since",
           "write_baseline"]

FORMAT_VERSION = 1
NEVER_BASELINED = frozenset({"TL904"})  # an internal error is never silenced


@dataclass(frozen=True)
class BaselineEntry:
    """One finding of a baseline file, by fingerprint."""

    fingerprint: str
    code: str
    path: str  # relative to the project root, POSIX
    tool: str | None
    line: int  # where it was when recorded; informational only
    message: str

    def describe(self) -> str:
        where = f" in `{self.tool}`" if self.tool else ""
        return printable(f"{self.path}:{self.line}: {self.code}{where}: {self.message}")


# json and toollint.fingerprint (with hashlib) are imported by the functions that use them: a check
# run without a baseline option imports this module for its options and step only.


def _keyed(findings: Sequence[Finding], root: Path) -> list[tuple[str, Finding]]:
    from toollint.fingerprint import toollint_fingerprints

    # Counters in the fingerprints run over every finding, suppressed ones too, so adding a noqa
    # comment does not renumber the rest.
    return list(zip(toollint_fingerprints(findings, root), findings))


def entries_for(findings: Sequence[Finding], root: Path) -> list[BaselineEntry]:
    from toollint.fingerprint import relative_path

    return [
        BaselineEntry(fp, f.code, relative_path(f.path, root), f.tool, f.line, f.message)
        for fp, f in _keyed(findings, root)
        if not f.suppressed and f.code not in NEVER_BASELINED
    ]


def write_baseline(path: str | Path, findings: Sequence[Finding], root: Path) -> int:
    """Record the reported findings; returns how many were written. The file is replaced whole or
    not at all. A file name that is not UTF-8 is kept exactly: its surrogate escapes are written as
    JSON `\\udcXX` escapes, which read back as the same name."""
    import json

    from toollint.fingerprint import FINGERPRINT_KEY

    entries = sorted(entries_for(findings, root), key=lambda e: (e.path, e.line, e.code, e.fingerprint))
    data = {
        "toollint-baseline": FORMAT_VERSION,
        "fingerprint": FINGERPRINT_KEY,
        "findings": [asdict(e) for e in entries],
    }
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        # backslashreplace turns a lone surrogate into the JSON escape that means it.
        atomic.write_text(path, text, errors="backslashreplace")
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {printable(str(path))}: {exc.strerror or exc}") from None
    return len(entries)


def load_baseline(path: str | Path) -> dict[str, BaselineEntry]:
    """Entries by fingerprint; every problem with the file is a one-line BaselineError."""
    import json

    from toollint.fingerprint import FINGERPRINT_KEY

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} not found; create it with --write-baseline {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict) or "toollint-baseline" not in data:
        raise BaselineError(f"{path} is not a toollint baseline (no 'toollint-baseline' key)")
    if data["toollint-baseline"] != FORMAT_VERSION or data.get("fingerprint") != FINGERPRINT_KEY:
        raise BaselineError(
            f"baseline {path} has format {data['toollint-baseline']!r} / {data.get('fingerprint')!r}; "
            f"this toollint reads {FORMAT_VERSION} / {FINGERPRINT_KEY}: rewrite it with --write-baseline"
        )
    items = data.get("findings")
    if not isinstance(items, list):
        raise BaselineError(f"baseline {path}: 'findings' must be a list")
    entries: dict[str, BaselineEntry] = {}
    for i, item in enumerate(items):
        try:
            entry = BaselineEntry(
                fingerprint=str(item["fingerprint"]),
                code=str(item["code"]),
                path=str(item["path"]),
                tool=None if item.get("tool") is None else str(item["tool"]),
                line=int(item.get("line", 0)),
                message=str(item.get("message", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BaselineError(
                f"baseline {path}: entry {i + 1} needs at least 'fingerprint', 'code' and 'path'"
            ) from None
        entries[entry.fingerprint] = entry
    return entries


@dataclass
class BaselineOutcome:
    """What a baseline let through, how many findings it matched, and its entries nothing matched."""

    kept: list[Finding]  # not in the baseline (plus suppressed ones, untouched)
    matched: int
    stale: list[BaselineEntry]


def apply_baseline(
    findings: Sequence[Finding],
    baseline: dict[str, BaselineEntry],
    root: Path,
    linted: Iterable[str] = (),
) -> BaselineOutcome:
    """Drop findings recorded in `baseline`. An entry is stale when nothing matches it and its file was
    linted in this run or no longer exists (entries for files outside this run are left alone)."""
    from toollint.fingerprint import relative_path

    seen: set[str] = set()
    kept: list[Finding] = []
    for fp, f in _keyed(findings, root):
        if not f.suppressed and f.code not in NEVER_BASELINED and fp in baseline:
            seen.add(fp)
        else:
            kept.append(f)
    linted_rel = {relative_path(p, root) for p in linted}
    stale = [
        e
        for fp, e in baseline.items()
        if fp not in seen and (e.path in linted_rel or not (root / e.path).exists())
    ]
    return BaselineOutcome(kept, len(seen), sorted(stale, key=lambda e: (e.path, e.line, e.code)))


# --------------------------------------------------------------------------------------------------
# --diff-base


def _git(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    import subprocess  # only --diff-base runs git: not every check's start-up

    try:
        return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    except OSError as exc:
        raise BaselineError(f"--diff-base needs git: {exc.strerror or exc}") from None


def files_at_ref(ref: str, paths: Sequence[str], cwd: Path | None = None) -> dict[str, bytes | None]:
    """The content of each path (relative to `cwd` or absolute) at git revision `ref`; None where the
    file did not exist there."""
    from toollint.fingerprint import relative_path

    cwd = cwd or Path.cwd()
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        raise BaselineError(f"--diff-base {ref}: {cwd} is not inside a git repository")
    toplevel = Path(top.stdout.decode().strip()).resolve()
    commit = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    if commit.returncode != 0:
        raise BaselineError(f"--diff-base {ref}: not a commit in this repository")
    sha = commit.stdout.decode().strip()
    in_repo: dict[str, str] = {}
    out: dict[str, bytes | None] = {}
    for p in paths:
        rel = relative_path(str(Path(cwd, p)), toplevel)
        if rel.startswith("/"):
            out[p] = None  # outside the repository: nothing to compare with, everything is new
        else:
            in_repo[p] = rel
    if not in_repo:
        return out
    request = "".join(f"{sha}:{rel}\n" for rel in in_repo.values()).encode()
    proc = _git(["cat-file", "--batch"], toplevel, request)
    if proc.returncode != 0:
        raise BaselineError(f"--diff-base {ref}: git cat-file failed: {proc.stderr.decode().strip()}")
    data, pos = proc.stdout, 0
    for p in in_repo:
        end = data.index(b"\n", pos)
        header = data[pos:end]
        pos = end + 1
        if header.endswith((b" missing", b" ambiguous")):  # echoes the request, which may hold spaces
            out[p] = None
            continue
        _, kind, size = header.split()  # "<oid> <type> <size>", then the content and a newline
        out[p] = data[pos : pos + int(size)] if kind == b"blob" else None  # a tree: a directory now
        pos += int(size) + 1
    return out


def new_since(
    ref: str,
    result_findings: Sequence[Finding],
    linted: Sequence[str],
    settings: Settings,
    resolver: SettingsResolver | None = None,
) -> tuple[list[Finding], int]:
    """Findings that are not present at `ref`, and how many were dropped as already there. Each old
    file is linted with the settings its path has today (`resolver`), else with `settings`."""
    from toollint.engine import lint_source

    root = settings.project_root or Path.cwd()
    before: list[Finding] = []
    for path, content in files_at_ref(ref, linted).items():
        if content is not None:
            # Linted under the same displayed path, so fingerprints compare directly.
            file_settings = resolver.for_path(path) if resolver is not None else settings
            before.extend(lint_source(content, path, file_settings).findings)
    old = {fp for fp, f in _keyed(before, root) if not f.suppressed}
    kept = [
        f
        for fp, f in _keyed(result_findings, root)
        if f.suppressed or f.code in NEVER_BASELINED or fp not in old
    ]
    return kept, len(result_findings) - len(kept)


# --------------------------------------------------------------------------------------------------
# Command line


def _replace_findings(result: RunResult, keep: Iterable[Finding]) -> None:
    kept = {id(f) for f in keep}
    for file_result in result.files:
        file_result.findings = [f for f in file_result.findings if id(f) in kept]


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """The CLI step: --diff-base, then --baseline; --write-baseline records and ends the run."""
    options, console = ctx.options.baseline, ctx.console
    root = ctx.settings.project_root or Path.cwd()
    linted = [r.path for r in result.files]
    if options.diff_base:
        kept, dropped = new_since(options.diff_base, result.findings, linted, ctx.settings, ctx.resolver)
        _replace_findings(result, kept)
        if dropped:
            console.warn(
                f"{dropped} finding(s) already present at {options.diff_base} not shown (--diff-base)"
            )
    if options.write:
        count = write_baseline(options.write, result.findings, root)
        console.note(f"toollint: wrote {count} finding(s) to baseline {printable(options.write)}")
        raise StopCheck(0)
    if options.read:
        outcome = apply_baseline(result.findings, load_baseline(options.read), root, linted)
        hidden = len(result.findings) - len(outcome.kept)
        _replace_findings(result, outcome.kept)
        if hidden:  # as --diff-base says: "All checks passed!" must not hide that findings were hidden
            console.warn(
                f"{hidden} finding(s) recorded in baseline {printable(options.read)} not shown (--baseline)"
            )
        if outcome.stale:
            count = len(outcome.stale)
            console.warn(
                f"baseline {options.read}: {count} stale entr{'y' if count == 1 else 'ies'} that no "
                f"finding matches any more (fixed, or changed); refresh with --write-baseline {options.read}"
            )
            for entry in outcome.stale:
                console.warn(f"  stale: {entry.describe()}")
    return result
