"""Memos of what the file system held, for one run.

Several questions are asked of the same files and directories over and over in a run (which file an
import names, whether a directory is a package, a package's schemas and dispatch tables), so their answers
are memoised. A process may lint more than once, though (a test session, an editor, `--watch`-like
callers), and in between files appear, change and vanish, or the working directory moves under the
relative paths a memo is keyed by. `file_memo` marks such a memo (`forget_with` registers any other
table of the kind); `forget_file_memos` (called as a run starts) empties them all, so no run answers from
what an earlier one saw.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import _lru_cache_wrapper, lru_cache
from typing import TypeVar

T = TypeVar("T")

_FORGET: list[Callable[[], None]] = []


def file_memo(maxsize: int) -> Callable[[Callable[..., T]], _lru_cache_wrapper[T]]:
    """`functools.lru_cache(maxsize)` for an answer read off the file system, forgotten as each run starts."""

    def wrap(function: Callable[..., T]) -> _lru_cache_wrapper[T]:
        memo = lru_cache(maxsize=maxsize)(function)
        _FORGET.append(memo.cache_clear)
        return memo

    return wrap


def forget_with(clear: Callable[[], None]) -> None:
    """`clear` empties a table of what the file system held: called with the memos at each run's start."""
    _FORGET.append(clear)


def forget_file_memos() -> None:
    """Empty every `file_memo` and registered table: the file system is asked afresh."""
    for clear in _FORGET:
        clear()
