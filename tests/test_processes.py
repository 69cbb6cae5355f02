"""toollint's own pool workers die with it: a `kill -9` of a `--jobs` run leaves no process behind
(they used to sleep forever on their task queue, holding its write end themselves)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; PDEATHSIG is Linux's"
)


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_pool_workers_die_when_toollint_is_killed(tmp_path: Path) -> None:
    for i in range(400):  # enough files that the run is still going when it is killed
        (tmp_path / f"m{i}.py").write_text("".join(f"def f{j}(x):\n    return x + {j}\n" for j in range(200)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "toollint", "check", "--isolated", "--jobs", "3", "-q", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.skip("the run finished before its pool started; nothing to kill")
    assert len(workers) >= 2, "the pool never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [w for w in workers if _alive(w)]
    for w in survivors:
        os.kill(w, signal.SIGKILL)
    assert not survivors, f"pool workers outlived a killed toollint: {survivors}"
