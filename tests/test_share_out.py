"""`processes.share_out`: the work of a parallel run is shared between this process and forked copies
of it, each taking the next unit when it is free (issue 26: no pool to start, nothing sent but the
answers). Every unit is answered once, in order; a copy that dies leaves its units to the caller; an
interrupted run leaves no copy behind."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from toollint import processes

pytestmark = pytest.mark.skipif(not processes.can_share_out(), reason="forks only on Linux, one thread")


def _unit_and_pid(unit: int) -> tuple[int, int]:
    time.sleep(0.005)
    return unit, os.getpid()


def test_every_unit_is_answered_once_in_order_by_more_than_one_process() -> None:
    answers = processes.share_out(list(range(40)), _unit_and_pid, 3)
    assert answers is not None and None not in answers
    assert [answer[0] for answer in answers if answer] == list(range(40))
    workers = {answer[1] for answer in answers if answer}
    assert os.getpid() in workers and len(workers) == 3  # this process works too


def test_more_units_than_a_pipe_holds_are_all_answered() -> None:
    count = processes.PIPE_BYTES // 4 + 1000  # the pipe of unit numbers is widened
    answers = processes.share_out(list(range(count)), lambda unit: unit * 2, 2)
    assert answers == [unit * 2 for unit in range(count)]


def test_the_units_of_a_copy_that_dies_come_back_unanswered() -> None:
    parent = os.getpid()

    def lint(unit: int) -> int:
        if os.getpid() != parent:
            os._exit(3)  # a copy killed (the OOM killer, a segfault in an extension)
        time.sleep(0.005)
        return unit

    answers = processes.share_out(list(range(20)), lint, 2)
    assert answers is not None
    answered = [a for a in answers if a is not None]
    assert answered == sorted(answered) and set(answered) <= set(range(20))
    assert None in answers  # the copy took at least the unit it died on


def test_with_another_thread_running_nothing_is_forked() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert processes.share_out([1, 2, 3], lambda unit: unit, 2) is None
    finally:
        stop.set()
        thread.join()


def test_a_failure_here_stops_the_copies_and_is_raised(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    parent = os.getpid()

    def lint(unit: int) -> int:
        if os.getpid() == parent:
            while not busy.exists():  # the copy is busy with its unit when this one fails
                time.sleep(0.01)
            raise KeyError("this process failed")
        told = busy.with_suffix(".told")
        told.write_text(str(os.getpid()))
        told.rename(busy)  # whole, when the other process sees it
        time.sleep(60)
        return unit

    before = time.monotonic()
    with pytest.raises(KeyError):
        processes.share_out([0, 1], lint, 2)
    assert time.monotonic() - before < 30  # the copy was killed, not waited for
    with pytest.raises(ChildProcessError):
        os.waitpid(int(busy.read_text()), os.WNOHANG)  # and reaped: it is no child of this process now


def test_output_buffered_before_the_fork_is_written_once(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom toollint import processes\n"
        "sys.stdout = open(sys.stdout.fileno(), 'w', buffering=1 << 16, closefd=False)\n"
        "print('before', end='')\n"
        "assert processes.share_out([1, 2, 3, 4], lambda unit: unit, 2) == [1, 2, 3, 4]\n"
        "print(' after')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         check=True)
    assert out.stdout == "before after\n"

