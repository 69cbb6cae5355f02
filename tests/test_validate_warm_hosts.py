"""Warm hosts (`toollint.dynamic.forkserver`): a host forked from a pre-imported interpreter behaves
as one started afresh, sees the mutant written into its overlay, dies with its process group on a
timeout, and nothing it or its zygote started outlives toollint. The mutation arm gives the same
outcomes warm as cold (minibank here, every mutant; AgentDojo's sample in `test_validate.py` runs
warm by default).

The hosts run the toolkit adapter on the minibank fixture in toollint's own interpreter, so these
tests need no benchmark venv.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from toollint.dynamic.forkserver import ForkedHost, warm_hosts
from toollint.dynamic.host import proctree
from toollint.dynamic.protocol import Worker, WorkerError, WorkerSpec

from toollint.validate import report
from toollint.validate.harness import run
from toollint.validate.subjects import MINIBANK_TOOLS, minibank_subject

MINIBANK = Path(__file__).parent / "fixtures" / "mutation" / "minibank"
pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the fork server is Linux's (fork, prctl, /proc)"
)


@pytest.fixture()
def overlay(tmp_path: Path) -> Path:
    """A private copy of the minibank package, as the harness makes one per subject."""
    shutil.copytree(MINIBANK, tmp_path / "minibank", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _spec(root: Path, **options: object) -> WorkerSpec:
    return WorkerSpec("toolkit", {"factory": "minibank.bank:make_bank", "sys_path": [str(root)],
                                  "tools": MINIBANK_TOOLS, **options}, sys.executable,
                      env={"PYTHONDONTWRITEBYTECODE": "1"})


def _probe(spec: WorkerSpec) -> tuple[dict, Worker]:
    """A deposit's probe, and the worker (its `refresh`: how the fork serving it made its modules
    fresh, which the zygote leaves in the host's environment; None for a host started cold)."""
    with Worker(spec) as worker:
        out = worker.request("probe", tool="deposit", args={"account_id": "A1", "amount": 5.0})
        worker.refresh = worker.request(  # type: ignore[attr-defined]
            "eval", expr="__import__('os').environ.get('TOOLLINT_FORK_REFRESH')")["value"]
    out["result"].pop("elapsed_ms", None)
    return out, worker


def test_a_forked_host_answers_as_a_fresh_one(overlay: Path) -> None:
    cold, _ = _probe(_spec(overlay))
    with warm_hosts() as pool:
        first, _ = _probe(_spec(overlay))
        again, worker = _probe(_spec(overlay))
    assert pool.stats.zygotes == 1 and pool.stats.forks == 2 and pool.stats.cold == 0
    assert cold == first == again
    assert worker.hello["python"] == ".".join(map(str, sys.version_info[:3]))


def test_a_fork_sees_the_mutant_written_into_its_overlay(overlay: Path) -> None:
    bank = overlay / "minibank" / "bank.py"
    original = bank.read_text()
    line = "account.balance = account.balance + amount"
    assert line in original
    with warm_hosts() as pool:
        before, first = _probe(_spec(overlay))
        bank.write_text(original.replace(line, line + " * 2", 1))
        mutant, second = _probe(_spec(overlay))
        bank.write_text(original)
        restored, third = _probe(_spec(overlay))
    assert pool.stats.forks == 3
    assert mutant["diff"] != before["diff"] and restored == before
    # how each fork refreshed: nothing changed, then the changed module and its importers re-imported
    assert [w.refresh for w in (first, second, third)] == ["warm", "subset", "warm"]  # type: ignore[attr-defined]
    bank.write_text(original.replace(line, line + " * 2", 1))
    cold_mutant, _ = _probe(_spec(overlay))
    assert cold_mutant == mutant


def test_a_module_that_cannot_be_reimported_alone_gets_its_package_reimported(overlay: Path) -> None:
    """`boom` refuses a second import in one interpreter (as a module whose import registers itself
    in a registry of the same package might): the fork falls back to dropping the whole package, and
    the host imports it afresh."""
    package = overlay / "minibank"
    (package / "registry.py").write_text("imported: list[str] = []\n")
    (package / "boom.py").write_text(textwrap.dedent("""\
        from minibank import registry

        if registry.imported:
            raise ImportError("boom is registered already")
        registry.imported.append("boom")
        """))
    (package / "boomfactory.py").write_text(
        "import minibank.boom  # noqa: F401\nfrom minibank.bank import make_bank\n"
    )
    spec = _spec(overlay, factory="minibank.boomfactory:make_bank")
    with warm_hosts() as pool:
        before, first = _probe(spec)
        (package / "boom.py").write_text((package / "boom.py").read_text() + "# changed\n")
        after, second = _probe(spec)
    assert pool.stats.forks == 2 and not pool.stats.fallbacks
    assert after == before
    assert (first.refresh, second.refresh) == ("warm", "package")  # type: ignore[attr-defined]


def test_a_forked_host_that_hangs_is_killed_with_its_group(overlay: Path, tmp_path: Path) -> None:
    (overlay / "minibank" / "slow.py").write_text(textwrap.dedent("""\
        import subprocess, sys, time
        from minibank.bank import make_bank


        def make():
            bank = make_bank()
            def stall(account_id: str) -> str:
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                time.sleep(600)
                return account_id
            bank.stall = stall
            return bank
        """))
    spec = WorkerSpec("toolkit", {"factory": "minibank.slow:make", "sys_path": [str(overlay)],
                                  "tools": ["stall"]}, sys.executable)
    with warm_hosts() as pool:
        worker = Worker(spec, deadline=3.0)
        worker.start()
        proc = worker._proc
        assert isinstance(proc, ForkedHost)
        pid = proc.pid
        with pytest.raises(WorkerError) as err:
            worker.request("call", tool="stall", args={"account_id": "A1"})
        assert err.value.kind == "timeout"
        worker.close()
        assert pool.stats.forks == 1
    assert not _alive(pid)
    assert not [p for p in _all_pids() if _cmdline(p).endswith("time.sleep(600)")]


def test_nothing_outlives_toollint(overlay: Path, tmp_path: Path) -> None:
    """A toollint killed with SIGKILL: its zygote follows, and the zygote's hosts follow it."""
    marker = tmp_path / "pids.json"
    script = textwrap.dedent(f"""\
        import json, os, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from toollint.dynamic.forkserver import warm_hosts
        from toollint.dynamic.protocol import Worker
        from test_validate_warm_hosts import _spec
        with warm_hosts() as pool:
            worker = Worker(_spec(Path({str(overlay)!r})))
            worker.start()
            zygote = next(iter(pool.zygotes.values()))
            Path({str(marker)!r}).write_text(json.dumps([zygote.proc.pid, worker._proc.pid]))
            os.kill(os.getpid(), 9)
        """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    zygote, host = json.loads(marker.read_text())
    deadline = time.monotonic() + 20
    while (_alive(zygote) or _alive(host)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(zygote) and not _alive(host)


def test_a_spec_the_zygote_cannot_serve_starts_cold(overlay: Path) -> None:
    bad = WorkerSpec("toolkit", {"factory": "minibank.nowhere:make", "sys_path": [str(overlay)],
                                 "tools": ["deposit"]}, sys.executable)
    with warm_hosts() as pool:
        with pytest.raises(WorkerError) as err:
            Worker(bad).start()
        good, _ = _probe(_spec(overlay))
    assert err.value.kind == "startup" and "minibank.nowhere" in str(err.value)
    assert good["result"]["status"] == "ok"
    assert pool.stats.forks >= 1


def test_the_mutation_arm_gives_the_same_outcomes_warm_and_cold() -> None:
    subject = minibank_subject(MINIBANK)
    warm = report.to_json(run([subject], seed=3, budget=6, dynamic=True, warm=True))
    cold = report.to_json(run([minibank_subject(MINIBANK)], seed=3, budget=6, dynamic=True, warm=False))

    def outcomes(data: dict) -> list:
        return [
            (
                m["id"],
                m["killed"],
                m["dynamic"],
                sorted((v["clause"], v["code"]) for v in m["dynamic_violations"]),
                m["explanation"],
            )
            for m in data["mutation"]["mutants"]
        ]

    assert outcomes(warm) == outcomes(cold) and len(outcomes(warm)) == 6
    assert warm["controls"] == cold["controls"]
    assert warm["host_starts"]["forked"] > 0 and warm["host_starts"]["cold"] == 0
    assert cold["host_starts"]["forked"] == 0


def test_subjects_run_at_once_give_the_same_outcomes_in_the_same_order(tmp_path: Path) -> None:
    """`jobs=2`: two subjects' dynamic halves at once (each its own overlay and zygote), the results
    exactly as one at a time, in subject order."""
    subjects = []
    for name in ("first", "second"):  # the fixture directory is the `minibank` package itself
        shutil.copytree(MINIBANK, tmp_path / name / "minibank", ignore=shutil.ignore_patterns("__pycache__"))
        subjects.append(minibank_subject(tmp_path / name / "minibank"))
    one = report.to_json(run(subjects, seed=5, budget=4, dynamic=True, jobs=1))
    two = report.to_json(run(subjects, seed=5, budget=4, dynamic=True, jobs=2))

    def outcomes(data: dict) -> list:
        return [
            (
                m["id"],
                m["killed"],
                m["dynamic"],
                sorted((v["clause"], v["code"]) for v in m["dynamic_violations"]),
            )
            for m in data["mutation"]["mutants"]
        ]

    assert outcomes(one) == outcomes(two) and len(outcomes(one)) == 8
    assert one["controls"] == two["controls"]
    assert two["host_starts"]["zygotes"] >= 2 and two["host_starts"]["cold"] == 0


def test_a_zygote_serving_a_running_host_is_not_retired(overlay: Path, tmp_path: Path) -> None:
    """With room for one warm interpreter, a second spec's zygote does not retire the first while a
    host forked from it still runs (it would kill that host); once reaped, the first goes."""
    other = tmp_path / "other"
    shutil.copytree(MINIBANK, other / "minibank", ignore=shutil.ignore_patterns("__pycache__"))
    with warm_hosts(max_zygotes=1) as pool:
        running = Worker(_spec(overlay))
        running.start()
        _probe(_spec(other))  # a second zygote while the first one's host runs
        assert running.request("probe", tool="deposit", args={"account_id": "A1", "amount": 1.0})["result"][
            "status"] == "ok"
        running.close()
        third = tmp_path / "third"
        shutil.copytree(MINIBANK, third / "minibank", ignore=shutil.ignore_patterns("__pycache__"))
        _probe(_spec(third))
        live = [z for z in pool.zygotes.values() if z is not None]
    assert pool.stats.zygotes == 3 and pool.stats.cold == 0
    assert len(live) == 1  # the idle ones retired


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != b"Z"


assert proctree.TOKEN_VAR  # the hosts carry the reliability branch's token (found by kill_token)


def test_a_launched_host_that_does_not_start_is_started_cold_and_the_launcher_told(overlay: Path) -> None:
    from toollint.dynamic.protocol import register_launcher, unregister_launcher

    class Broken:
        """Starts something that exits at once instead of a host."""

        def __init__(self) -> None:
            self.failures: list[str] = []

        def launch(self, spec: WorkerSpec, cmd: list[str], env: dict, stderr: object) -> subprocess.Popen:
            return subprocess.Popen(
                [sys.executable, "-c", "pass"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )

        def failed(self, spec: WorkerSpec, error: Exception) -> None:
            self.failures.append(str(error))

    broken = Broken()
    register_launcher(broken)
    try:
        answer, worker = _probe(_spec(overlay))
    finally:
        unregister_launcher(broken)
    assert answer["result"]["status"] == "ok" and worker.starts == 2
    assert len(broken.failures) == 1 and "exited" in broken.failures[0]
