"""The host under faults (issue 17): slow start-up, huge replies, leaking memory, and processes the
benchmark starts. Each test drives `tests/fixtures/hostile_host/adapter_hostile.py` through the real
protocol."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from toollint.dynamic.protocol import START_TIMEOUT, Worker, WorkerError, WorkerSpec

HOSTILE = Path(__file__).parent / "fixtures" / "hostile_host" / "adapter_hostile.py"


def hostile(**options: Any) -> WorkerSpec:
    return WorkerSpec(str(HOSTILE), dict(options))


def test_a_100_mb_reply_is_read_well_within_the_deadline() -> None:
    # Reading was quadratic (a bytes `+=` and a full rescan per 64 KiB pipe read): 100 MB took 60 s.
    with Worker(hostile(), deadline=20) as w:
        resp = w.request("call", tool="big", args={"mb": 100})
        assert len(resp["value"]) == 100_000_000
        assert w.request("call", tool="noop", args={})["status"] == "ok"  # the stream is still in step


def test_a_benchmark_slower_to_start_than_its_deadline_is_one_start_timeout() -> None:
    # An adapter whose hello takes longer than start-up allows: before, each timed-out hello restarted
    # the worker from inside the request, until RecursionError.
    w = Worker(hostile(hello_sleep=30), deadline=0.5, startup_deadline=1.5)
    began = time.monotonic()
    with pytest.raises(WorkerError) as info:
        w.start()
    assert info.value.kind == START_TIMEOUT and "did not start within 1.5 s" in str(info.value)
    with pytest.raises(WorkerError) as again:  # sticky: no second start-up
        w.request("pristine")
    assert again.value.kind == START_TIMEOUT
    assert w.starts == 1 and time.monotonic() - began < 15
    w.close()


def test_an_adapter_whose_hello_fails_is_a_startup_error_in_one_line() -> None:
    w = Worker(hostile(hello_fails=True), deadline=5)
    with pytest.raises(WorkerError) as info:
        w.start()
    assert info.value.kind == "startup" and "hello failed: RuntimeError: no tools today" in str(info.value)
    w.close()


def test_a_request_that_times_out_restarts_the_worker_once_lazily() -> None:
    w = Worker(hostile(build_sleep=3), deadline=0.5, startup_deadline=30)
    w.start()
    with pytest.raises(WorkerError) as info:
        w.request("pristine")
    assert info.value.kind == "timeout"
    assert w.starts == 1 and [e.kind for e in w.events] == ["timeout"]
    w.close()


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "30", True])
def test_a_deadline_that_is_not_a_positive_number_is_refused(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="deadline must be a"):
        Worker(hostile(), deadline=bad)


# --- nothing the benchmark starts outlives toollint (item 7) ---------------------------------------

SPAWNS = ["popen", "fork", "session", "daemon"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a zombie has exited; only its parent's wait is missing


def _all_dead(pids: list[int], within: float = 10.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _pids(pid_file: Path, count: int) -> list[int]:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        pids = [int(x) for x in pid_file.read_text().split()] if pid_file.exists() else []
        if len(pids) >= count:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"only {pid_file.read_text() if pid_file.exists() else 'no'} pids")


pytestmark_linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytestmark_linux
def test_children_of_every_kind_die_at_a_normal_shutdown(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    with Worker(hostile(pid_file=str(pid_file)), deadline=20) as w:
        for how in SPAWNS:
            assert w.request("call", tool="spawn", args={"how": how})["status"] == "ok"
        pids = _pids(pid_file, len(SPAWNS))
        assert all(_alive(p) for p in pids)
    assert _all_dead(pids) == []


@pytestmark_linux
def test_children_die_when_the_host_itself_crashes(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    w = Worker(hostile(pid_file=str(pid_file)), deadline=20)
    w.start()
    w.request("call", tool="spawn", args={"how": "popen"})
    with pytest.raises(WorkerError) as info:  # a session child, then os._exit: the host cleans nothing
        w.request("call", tool="crash", args={"how": "session"})
    assert info.value.kind == "died"
    assert _all_dead(_pids(pid_file, 2)) == []
    w.close()


@pytestmark_linux
def test_children_die_when_a_hanging_host_is_killed_at_its_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    w = Worker(hostile(pid_file=str(pid_file)), deadline=2)
    w.start()
    w.request("call", tool="spawn", args={"how": "fork"})
    with pytest.raises(WorkerError, match="within 2 s"):
        w.request("call", tool="hang", args={"how": "daemon"})
    assert _all_dead(_pids(pid_file, 2)) == []
    w.close()


PARENT = """
import os, signal, sys, time
from pathlib import Path
from toollint.dynamic.protocol import Worker, WorkerSpec
w = Worker(WorkerSpec({adapter!r}, {{"pid_file": {pid_file!r},
                                     "ignore_sigterm": {how!r} == "sigkill-stubborn"}}),
           deadline=60)
w.start()
for how in ("popen", "fork", "session", "daemon"):
    w.request("call", tool="spawn", args={{"how": how}})
print(w._proc.pid, flush=True)
if {how!r} == "exit":
    os._exit(0)  # no close, no atexit: the host sees its stdin close
w._send({{"id": 99, "op": "call", "tool": "hang", "args": {{}}}})  # the host is busy when we die
time.sleep(0.5)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytestmark_linux
@pytest.mark.parametrize("how", ["exit", "sigkill", "sigkill-stubborn"])
def test_children_die_when_toollint_itself_dies(tmp_path: Path, how: str) -> None:
    """`sigkill-stubborn`: the benchmark ignores SIGTERM and is busy when toollint is killed: the
    host's watchdog SIGKILLs it (issue 28: no process left after 10 s)."""
    import subprocess
    import sys

    pid_file = tmp_path / "pids"
    script = PARENT.format(adapter=str(HOSTILE), pid_file=str(pid_file), how=how)
    out = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60
    )
    host = int(out.stdout.split()[0])
    pids = _pids(pid_file, len(SPAWNS))
    assert _all_dead([host, *pids]) == [], out.stderr


# --- a memory cap on the host (item 15) ---------------------------------------------------------


def test_a_tool_leaking_a_gigabyte_per_call_is_stopped_by_max_memory_and_reported() -> None:
    spec = hostile()
    spec.max_memory = 512 << 20
    with Worker(spec, deadline=30) as w:
        first = w._proc.pid if w._proc else 0
        with pytest.raises(WorkerError) as info:
            w.request("call", tool="leak", args={"mb": 1024})
        assert info.value.kind == "memory_limit"
        assert str(info.value) == "leak ran out of memory in the host (max-memory = 512 MiB)"
        assert w._proc is None and [e.kind for e in w.events] == ["memory_limit"]
        assert not _alive(first)
        assert w.request("call", tool="leak", args={"mb": 64})["value"] == 1  # a fresh host, empty


LEAK_CONTRACT = """
tool: adapter_hostile:HostileAdapter.leak
benchmark: hostile
source: {{file: adapter_hostile.py}}
adapter: {{name: {adapter}}}
clauses:
  - id: eff.counted
    predicate: post.calls == pre.calls + 1
    provenance: {{tier: author-specified, inferred: true, note: fixture}}
"""


def test_a_leaking_tool_under_confirm_is_untestable_with_the_reason_and_the_next_tool_runs(
    tmp_path: Path,
) -> None:
    from toollint.contracts.loader import load_contract
    from toollint.dynamic.checker import UNSUPPORTED, CheckOptions, check_group

    path = tmp_path / "leak.yaml"
    path.write_text(LEAK_CONTRACT.format(adapter=HOSTILE))
    leak = load_contract(path)
    noop_path = tmp_path / "noop.yaml"
    noop_path.write_text(LEAK_CONTRACT.format(adapter=HOSTILE).replace(".leak", ".noop"))
    noop = load_contract(noop_path)
    spec = hostile()
    spec.max_memory = 512 << 20
    first, second = check_group([leak, noop], spec, CheckOptions(deadline=30, confirm=False))
    assert (
        first.error is not None and "leak ran out of memory in the host (max-memory = 512 MiB)" in first.error
    )
    assert "other probes were skipped" in first.error and len(first.runs) == 1
    assert [(r.verdict, r.reason) for r in first.clause_rows] == [("UNTESTABLE", UNSUPPORTED)]
    assert [r.verdict for r in second.clause_rows] == ["CONFORMS"]  # a fresh host for the next tool
