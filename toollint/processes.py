"""toollint's own child processes (the lint pool's workers, the forked copies `share_out` makes) must
not outlive it, and no file makes a lint process take the machine's memory (`memory_ceiling`).

A pool worker blocks reading its task queue; it holds that queue's write end too, so when toollint
is killed (`kill -9`, the OOM killer) the worker never sees end of file and sleeps forever. On Linux
the kernel can signal it instead: `PR_SET_PDEATHSIG`. (The benchmark hosts have their own, stricter
handling in `dynamic/host/proctree.py`, which must stay importable without toollint.)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn, TypeVar

Unit = TypeVar("Unit")
Result = TypeVar("Result")

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when `parent_pid` (the process that started it) ends."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal  # here: the signal module costs every run that starts no worker 1% of a cache hit

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def _address_space() -> int | None:
    """This process's virtual size in bytes (Linux), or None."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def memory_ceiling(budget: int) -> Iterator[None]:
    """For the block, allocations past this process's current size plus `budget` bytes fail with
    MemoryError instead of taking the machine (RLIMIT_AS, lowered and then restored; the soft limit
    may be raised back to the hard one). Does nothing where it cannot be set."""
    try:
        import resource
    except ImportError:  # not POSIX
        yield
        return
    current = _address_space()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = None if current is None else current + budget
    if limit is not None and hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if limit is None or (soft != resource.RLIM_INFINITY and soft <= limit):
        yield  # unknown size, or already capped tighter
        return
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def can_share_out() -> bool:
    """Whether `share_out` can fork here: on Linux (macOS's system libraries are not safe to use in a
    forked copy; Windows has no fork), with no other thread running (a fork copies only the forking
    thread, and a lock another one holds stays held in the copy)."""
    if not sys.platform.startswith("linux"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def idle_cpus(loadavg_path: str = "/proc/loadavg") -> int:
    """The CPUs no other process is running on right now (at least 1): the CPU count less the processes
    the kernel counts as runnable (/proc/loadavg's fourth field, "running/total": an instant, where the
    load averages trail the last minute, which a run just before this one fills) besides this one and
    one more (the process that started this one is often still running as it starts: a shell, a hook
    runner, a benchmark's harness; counting it made one quiet run in five serial)."""
    cpus = os.cpu_count() or 1
    try:
        with open(loadavg_path, "rb") as loadavg:
            running = int(loadavg.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return cpus
    return max(cpus - max(running - 2, 0), 1)


def share_out(
    units: Sequence[Unit], lint: Callable[[Unit], Result], processes: int
) -> list[Result | None] | None:
    """`lint` each unit, in this process and in `processes - 1` forked copies of it, each process taking
    the next unit as soon as it is free; the results in the units' order. A copy starts with everything
    this process has loaded (no pool to start, nothing to send but the answers), and this process works
    too instead of waiting. A unit whose copy died before it answered is None: the caller lints it
    itself. None when forking is not possible here (`can_share_out`); the caller uses a pool.

    The units are handed out through a pipe holding every unit's number, written before any fork: a
    read of four bytes from a pipe is atomic, so each process takes whole numbers, and the read that
    finds the pipe empty and its write end closed ends that process's share."""
    if processes < 2 or len(units) < 2 or not can_share_out():
        return None
    numbers = b"".join(index.to_bytes(4, "little") for index in range(len(units)))
    read_numbers, write_numbers = os.pipe()
    try:
        if len(numbers) > PIPE_BYTES and not _widen(write_numbers, len(numbers)):
            os.close(read_numbers)
            return None
        os.write(write_numbers, numbers)
    finally:
        os.close(write_numbers)  # before any fork: once the last number is taken, a read ends
    for stream in (sys.stdout, sys.stderr):  # or each copy would write again what they hold
        if stream is not None:
            stream.flush()
    import pickle  # noqa: F401 - read the answers with it; imported once here, not by each copy

    results: list[Result | None] = [None] * len(units)
    copies: list[tuple[int, int]] = []  # each copy's process id and the read end of its answers
    parent = os.getpid()
    try:
        for _ in range(processes - 1):
            answers, write_answers = os.pipe()
            try:
                pid = os.fork()
            except OSError:  # no memory or process slot for another copy: share with those there are
                os.close(answers)
                os.close(write_answers)
                break
            if pid == 0:
                os.close(answers)
                for _, other in copies:
                    os.close(other)
                _copy(read_numbers, write_answers, units, lint, parent)
            os.close(write_answers)
            copies.append((pid, answers))
        for index in _taken(read_numbers):
            results[index] = lint(units[index])
    except BaseException:  # interrupted, or `lint` failed here: the copies' work is not wanted
        import signal

        for pid, answers in copies:
            os.kill(pid, signal.SIGKILL)
            os.close(answers)
            os.waitpid(pid, 0)
        raise
    finally:
        os.close(read_numbers)
    for pid, answers in copies:
        answered: list[tuple[int, Result]] = _answers(pid, answers)
        for index, result in answered:
            results[index] = result
    return results


PIPE_BYTES = 65536  # a pipe's capacity on Linux unless widened
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ, named in the fcntl module only from Python 3.10 on Linux


def _widen(fd: int, size: int) -> bool:
    """Make the pipe hold `size` bytes (false past /proc/sys/fs/pipe-max-size: 262,144 numbers)."""
    import fcntl

    try:
        return fcntl.fcntl(fd, F_SETPIPE_SZ, size) >= size
    except OSError:
        return False


def _taken(read_numbers: int) -> Iterator[int]:
    """The numbers of the units this process takes, one at a time, until none is left."""
    while len(number := os.read(read_numbers, 4)) == 4:
        yield int.from_bytes(number, "little")


def _copy(
    read_numbers: int, write_answers: int, units: Sequence[Unit], lint: Callable[[Unit], Result], parent: int
) -> NoReturn:
    """A forked copy's whole life: lint the units it takes, send the answers at the end (a pipe that
    filled up meanwhile would stop it taking units), and leave without the parent's exit handlers or
    its buffered output. It stops at the next unit once the parent is gone (killed: nothing would read
    its answers); not `die_with_parent`, whose ctypes import cost a copy 6 ms before its first unit."""
    status = 1
    try:
        import pickle

        answered = []
        for index in _taken(read_numbers):
            if os.getppid() != parent:
                break
            answered.append((index, lint(units[index])))
        with open(write_answers, "wb") as out:
            pickle.dump(answered, out, pickle.HIGHEST_PROTOCOL)
        status = 0
    finally:
        os._exit(status)


def _answers(pid: int, answers: int) -> list[tuple[int, Result]]:
    """What a copy answered; nothing if it did not end well (a killed copy's answer may be cut off)."""
    import pickle

    with open(answers, "rb") as stream:
        data = stream.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return []
    answered: list[tuple[int, Result]] = pickle.loads(data)
    return answered
