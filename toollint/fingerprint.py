"""Fingerprints that identify a finding across runs.

Two kinds:

* `line_hashes` reproduces `partialFingerprints.primaryLocationLineHash` exactly as GitHub's
  upload-sarif action computes it (a rolling hash over the 100 non-blank UTF-16 code units that start
  each line). If a SARIF result carries a value that disagrees with the action's own, the action
  warns, so this must be bit-for-bit; `tests/test_fingerprint.py` replays GitHub's test vectors.
* `toollint_fingerprints` is toollint's own `toollint/v1` key: rule, repository-relative path,
  enclosing tool and the message with line numbers taken out. It survives edits that only move code,
  which is what baselines and `--diff-base` compare by. It never sees what `--confirm` learns (the
  verdict and witness live in `Finding.properties`, not in the message), so it is the same with and
  without `--confirm`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

from toollint.model import Finding

FINGERPRINT_KEY = "toollint/v1"

_WINDOW = 100
_MASK = (1 << 64) - 1
_MULTIPLIER = 37
_FIRST_MOD = pow(_MULTIPLIER, _WINDOW, 1 << 64)  # weight of the code unit leaving the window
_EOF = 65535


def _kept_units(text: str) -> list[int]:
    """The UTF-16 code units the action hashes: blanks dropped, CR and CRLF read as LF."""
    # The action drops an LF only when it directly follows a CR in the raw text (a space in between
    # resets that), so CRLF must be folded before spaces and tabs are removed.
    kept = text.replace("\r\n", "\n").replace("\r", "\n").replace(" ", "").replace("\t", "")
    data = kept.encode("utf-16-le", "surrogatepass")
    return list(memoryview(data).cast("H"))


def line_hashes(text: str, upto_line: int | None = None) -> dict[int, str]:
    """`primaryLocationLineHash` of every line (1-based), or of lines 1..`upto_line` only.

    A file ending in a newline also gets a hash for the line after its last, as in the action.
    """
    units = _kept_units(text)
    units.append(_EOF)
    # Each line starts at its first kept unit: the first unit, and every unit after an LF (EOF
    # included, so a trailing newline starts one more line).
    starts = [0, *(i + 1 for i, unit in enumerate(units) if unit == 10)]
    if upto_line is not None:
        starts = starts[: max(upto_line, 0)]
    if not starts:
        return {}
    # The action's rolling hash, once the window has moved 100 units past a line's start, equals the
    # polynomial hash of those 100 units (the stream goes on with 100 zeros after EOF): with prefix
    # hashes P, that is P[start + 100] - P[start] * 37**100, mod 2**64.
    end = starts[-1] + _WINDOW
    stream = units[:end] + [0] * max(0, end - len(units))
    prefix = [0]
    p = 0
    for unit in stream:
        p = (p * _MULTIPLIER + unit) & _MASK
        prefix.append(p)
    out: dict[int, str] = {}
    counts: dict[str, int] = {}
    for line, start in enumerate(starts, 1):
        value = format((prefix[start + _WINDOW] - prefix[start] * _FIRST_MOD) & _MASK, "x")
        n = counts[value] = counts.get(value, 0) + 1
        out[line] = f"{value}:{n}"
    return out


def relative_path(path: str, root: Path | None = None) -> str:
    """`path` relative to `root` (default: the working directory) in POSIX form, or absolute POSIX
    when it lies outside."""
    return _relative_path(path, root, os.getcwd())


@lru_cache(maxsize=4096)
def _relative_path(path: str, root: Path | None, cwd: str) -> str:
    base = Path(root or cwd).resolve()
    full = Path(path)
    if not full.is_absolute():
        full = Path(cwd) / full
    full = Path(os.path.normpath(full))
    try:
        return PurePosixPath(full.relative_to(base)).as_posix()
    except ValueError:
        try:
            return PurePosixPath(full.resolve().relative_to(base)).as_posix()
        except ValueError:
            return full.as_posix()


# Things in a message that change when code merely moves: "line 12", "lines 3-5", "L12", "file.py:12:4".
# Three patterns, each starting with a literal, are twice as fast as one alternation (5,000 per SARIF).
_MOVING = [
    (re.compile(r"lines? \d+(?:\s*[-–]\s*\d+)?"), "line N"),
    (re.compile(r"\bL\d+\b"), "LN"),
    (re.compile(r"(\.pyi?):\d+(?::\d+)?"), r"\1:N"),
]
_DIGIT = re.compile(r"\d")


def normalise_message(message: str) -> str:
    if _DIGIT.search(message):
        for pattern, placeholder in _MOVING:
            message = pattern.sub(placeholder, message)
    return " ".join(message.split())


def base_fingerprint(finding: Finding, relative: str) -> str:
    """The `toollint/v1` key of a finding whose path relative to the project root is `relative`,
    before the occurrence counter is appended."""
    parts = (finding.code, relative, finding.tool or "", normalise_message(finding.message))
    # surrogatepass: a file name that is not UTF-8 (surrogate-escaped) hashes as well as any other;
    # valid text encodes exactly as with plain UTF-8, so no existing fingerprint changes.
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def toollint_fingerprints(findings: Sequence[Finding], root: Path | None = None) -> list[str]:
    """The `toollint/v1` fingerprint of each finding, in the same order.

    Findings with the same key (the same message twice in one tool) are told apart by a counter
    `:1`, `:2`, ... in source order, the way GitHub numbers equal line hashes.
    """
    relative = {path: relative_path(path, root) for path in {f.path for f in findings}}
    bases = [base_fingerprint(f, relative[f.path]) for f in findings]
    order = sorted(range(len(findings)), key=lambda i: findings[i].sort_key())
    counts: dict[str, int] = {}
    out = [""] * len(findings)
    for i in order:
        n = counts[bases[i]] = counts.get(bases[i], 0) + 1
        out[i] = f"{bases[i]}:{n}"
    return out
