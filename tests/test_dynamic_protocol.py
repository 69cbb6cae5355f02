"""The host and its parent-side client: the protocol survives benchmark misbehaviour, deadlines kill
the process group and restart the worker (recorded, never retried), start-up failures are one line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from toollint.dynamic.protocol import HOST_PATH, Worker, WorkerError, WorkerSpec

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
HOST_DIR = HOST_PATH.parent


def spec(factory: str = "bank:make_bank") -> WorkerSpec:
    return WorkerSpec("toolkit", {"factory": factory, "sys_path": [str(BENCH)]})


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Worker:
    w = Worker(spec(), log_path=tmp_path_factory.mktemp("logs") / "host.log", deadline=10)
    w.start()
    yield w
    w.close()


def test_hello_lists_marked_tools_with_source_locations(worker: Worker) -> None:
    tools = {t["name"]: t for t in worker.hello["tools"]}
    assert "withdraw_unchecked" in tools and "_account" not in tools
    assert tools["withdraw"]["file"].endswith("bank.py") and tools["withdraw"]["line"] > 1
    assert tools["withdraw"]["parameters"]["amount"] == {"annotation": "float", "required": True}
    assert worker.hello["protocol"] == 1 and "uuid4" in worker.hello["shims"]


def test_a_print_in_a_tool_goes_to_the_log_not_the_protocol(worker: Worker) -> None:
    resp = worker.request("probe", tool="chatty_deposit", args={"account_id": "A1", "amount": 5.0})
    assert resp["result"]["status"] == "ok"
    assert [op["path"] for op in resp["diff"]] == ["/accounts/{id=A1}/balance"]
    assert worker.log_path is not None and "depositing 5.0 into A1" in worker.log_path.read_text()


def test_tool_errors_and_bad_arguments_are_results_not_failures(worker: Worker) -> None:
    err = worker.request("call", tool="withdraw", args={"account_id": "A2", "amount": 1.0})
    assert (err["status"], err["error_type"], err["error_message"]) == (
        "tool_error",
        "ValueError",
        "account is not active",
    )
    bad = worker.request("call", tool="withdraw", args={"account_id": "A1", "nope": 1})
    assert bad["status"] == "validation_error"


def test_unserialisable_state_is_left_out_and_said_and_the_worker_goes_on(worker: Worker) -> None:
    resp = worker.request("probe", tool="attach_handle", args={"account_id": "A1"})
    assert resp["result"]["status"] == "ok"
    assert "handle" not in resp["post"]["accounts"][0]  # the rest of the state is still compared
    notes = worker.request("hello")["notes"]
    assert "state at /accounts/0/handle has no JSON form (object): left out of every snapshot" in notes
    assert worker.request("probe", tool="add_note", args={"text": "x"})["result"]["status"] == "ok"


def test_clock_and_uuid_are_deterministic_across_fresh_workers() -> None:
    diffs = []
    for _ in range(2):
        with Worker(spec()) as w:
            resp = w.request("probe", tool="stamp_account", args={"account_id": "A1"})
            resp2 = w.request("probe", tool="stamp_account", args={"account_id": "A1"})
            assert resp["diff"] == resp2["diff"]  # reseeded on every build, not only at start-up
            diffs.append(resp["diff"])
    assert diffs[0] == diffs[1]
    after = {op["path"]: op["after"] for op in diffs[0]}
    assert after["/accounts/{id=A1}/checked_at"] == "2024-05-15T12:00:00"
    assert len(after["/accounts/{id=A1}/check_ref"]) == 8


def test_unknown_op_is_reported(worker: Worker) -> None:
    with pytest.raises(WorkerError, match="unknown op 'nope'"):
        worker.request("nope")


def test_a_hanging_tool_hits_the_deadline_and_the_worker_is_replaced() -> None:
    with Worker(spec(), deadline=10) as w:
        first_pid = w._proc.pid if w._proc else None
        with pytest.raises(WorkerError) as info:
            w.request("call", deadline=1.0, tool="hang", args={"account_id": "A1"})
        assert info.value.kind == "timeout" and "within 1 s" in str(info.value)
        assert [(e.kind, e.request) for e in w.events] == [("timeout", "call hang")]
        assert w._proc is None  # killed; the next request starts a fresh host
        with pytest.raises(ProcessLookupError):  # the old process group is gone
            os.killpg(first_pid or 0, 0)
        assert w.request("call", tool="add_note", args={"text": "after"})["status"] == "ok"
        assert w.starts == 2 and w._proc is not None and w._proc.pid != first_pid


def test_a_benchmark_that_fails_on_import_is_one_line() -> None:
    w = Worker(spec("broken:make"))
    with pytest.raises(WorkerError) as info:
        w.start()
    w.close()
    message = str(info.value)
    assert info.value.kind == "startup" and "\n" not in message
    assert "RuntimeError: benchmark data missing: bank.db" in message


def test_a_missing_interpreter_is_one_line(tmp_path: Path) -> None:
    w = Worker(WorkerSpec("toolkit", {"factory": "bank:make_bank"}, python=str(tmp_path / "no-python")))
    with pytest.raises(WorkerError, match="cannot run .*no-python"):
        w.start()


def test_a_bad_factory_reference_is_one_line() -> None:
    with pytest.raises(WorkerError, match="factory = 'module:callable'"):
        Worker(spec("bank")).start()


def _interpreter(version: str) -> str | None:
    """A working python<version>: on PATH, or installed by pyenv (whose shims may refuse to run it)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [
        shutil.which(f"python{version}"),
        *sorted(str(p) for p in pyenv.glob(f"{version}.*/bin/python")),
    ]
    for exe in filter(None, candidates):
        ok = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                            check=False, capture_output=True, text=True)
        if ok.returncode == 0 and ok.stdout.strip() == version:
            return exe
    return None


@pytest.mark.parametrize("version", ["3.9", "3.10", "3.12", "3.13"])
def test_the_host_runs_on_other_interpreters(version: str) -> None:
    exe = _interpreter(version)
    if exe is None:
        pytest.skip(f"no python{version} here")
    with Worker(
        WorkerSpec("toolkit", {"factory": "bank:make_bank", "sys_path": [str(BENCH)]}, python=exe)
    ) as w:
        assert w.hello["python"].startswith(version + ".")
        resp = w.request("probe", tool="set_balance", args={"account_id": "A1", "balance": 0.0})
        assert [op["path"] for op in resp["diff"]] == ["/accounts/{id=A1}/balance"]


def test_a_ctrl_c_while_a_host_is_being_launched_stops_that_host_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """stop_hosts() (the first Ctrl-C of --confirm) kills the hosts it finds live; one whose process was
    started but not yet counted live when it looked is stopped by its own start, not left to serve (the
    run then waited on it: a hang probe holds its thread up to the request deadline)."""
    from toollint.dynamic import protocol

    real = protocol._launch
    launched: list[int] = []

    def launch_then_ctrl_c(*args: object, **kwargs: object) -> tuple[object, object]:
        proc, launcher = real(*args, **kwargs)  # type: ignore[arg-type]
        launched.append(proc.pid)
        protocol.stop_hosts()  # the main thread's Ctrl-C, as this thread returns from Popen
        return proc, launcher

    monkeypatch.setattr(protocol, "_launch", launch_then_ctrl_c)
    w = Worker(spec(), deadline=10)
    try:
        with pytest.raises(WorkerError) as info:
            w.start()
        assert info.value.kind == protocol.STOPPED
        assert w._proc is None
        with pytest.raises(ProcessLookupError):  # its process group is gone
            os.killpg(launched[0], 0)
    finally:
        protocol.resume_hosts()
        w.close()
