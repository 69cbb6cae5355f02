"""Every file toollint writes is replaced whole or not at all (toollint.atomic, issue 17 item 6)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toollint import atomic

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


def test_replaces_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "tool.py"
    target.write_text("old\n")
    target.chmod(0o751)
    atomic.write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tool.py"]  # no temporary file left


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        atomic.write_text(tmp_path / "report.json", "{}\n")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o644


def test_an_error_while_writing_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic.atomic_text(target) as stream:
        stream.write("half of the new")
        raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]
    with pytest.raises(UnicodeEncodeError):
        atomic.write_text(target, "\udcff")  # encoded before anything is written
    assert target.read_text() == "old\n"


def test_a_symlink_keeps_pointing_at_the_new_content(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text("old\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    atomic.write_text(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_temporary_files_are_never_linted(tmp_path: Path) -> None:
    from toollint.files import collect_files
    from toollint.settings import Settings

    (tmp_path / ".tools.py.abc123.toollint-tmp").write_text("def f(:\n")  # left by a killed run
    (tmp_path / "tools.py").write_text("x = 1\n")
    assert collect_files([tmp_path], Settings(project_root=tmp_path)).files == [tmp_path / "tools.py"]


def _project(root: Path, copies: int) -> None:
    root.mkdir()
    for i in range(copies):
        shutil.copy(FIXTURE, root / f"tools_{i}.py")


def _toollint(*args: str) -> list[str]:
    return [sys.executable, "-m", "toollint", "check", *args]


def test_two_runs_writing_the_same_report_never_mix(tmp_path: Path) -> None:
    _project(tmp_path / "p", 40)
    outputs = set()
    for trial in range(3):
        runs = [
            subprocess.Popen(
                _toollint(
                    "--exit-zero",
                    "-q",
                    "--output-format",
                    "sarif",
                    "--sarif-category",
                    f"run{n}",
                    "-o",
                    "out.sarif",
                    "p",
                ),
                cwd=tmp_path,
            )
            for n in (1, 2)
        ]
        assert [r.wait(timeout=120) for r in runs] == [0, 0]
        log = json.loads((tmp_path / "out.sarif").read_text())  # whole: one run's report, never both
        outputs.add(log["runs"][0]["automationDetails"]["id"])
        assert len(log["runs"][0]["results"]) == 240, trial
    assert outputs <= {"run1/", "run2/"}


def _kill_at_random_points(
    tmp_path: Path, argv: list[str], target: Path, before: bytes, trials: int
) -> set[str]:
    """Run `argv` to completion once for its result and duration, then `trials` times killed with
    SIGKILL at a random moment (half of them near the end, where the writing happens); after each,
    `target` must hold the old bytes or the new, nothing else."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=tmp_path, capture_output=True, check=False, timeout=300)
    duration = time.perf_counter() - start
    after = target.read_bytes()
    assert after != before
    seen = set()
    rng = random.Random(17)
    for trial in range(trials):
        target.write_bytes(before)
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        at = rng.uniform(0.0, duration * 1.1) if trial % 2 else rng.uniform(duration * 0.6, duration * 1.05)
        time.sleep(at)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        content = target.read_bytes()
        assert content in (before, after), f"trial {trial}: killed at {at:.3f}s of {duration:.3f}s: " \
                                           f"{len(content)} bytes, neither the old file nor the new"
        seen.add("old" if content == before else "new")
    return seen


# 20 trials is the slow run; three in the default run keep a sample of each kind of kill point.
TRIALS = [pytest.param(3, id="3-trials"), pytest.param(20, id="20-trials", marks=pytest.mark.slow)]


@pytest.mark.parametrize("trials", TRIALS)
def test_kill_9_during_fix_leaves_the_old_file_or_the_new(tmp_path: Path, trials: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from fix_speed import many_guards

    source = many_guards(400).replace("account[\"records\"]", "(account or {})[\"records\"]")
    before = (source + FIXTURE.read_text(encoding="utf-8")).encode()
    target = tmp_path / "tools.py"
    target.write_bytes(before)
    seen = _kill_at_random_points(tmp_path, _toollint("--fix", "--unsafe-fixes", "-q", "tools.py"), target,
                                  before, trials=trials)
    assert seen  # every trial ended with one of the two


@pytest.mark.parametrize("trials", TRIALS)
def test_kill_9_during_write_baseline_leaves_the_old_baseline_or_the_new(tmp_path: Path, trials: int) -> None:
    _project(tmp_path / "p", 60)
    baseline = tmp_path / "baseline.json"
    subprocess.run(_toollint("--write-baseline", str(baseline), "p/tools_0.py"), cwd=tmp_path, check=True,
                   capture_output=True)
    before = baseline.read_bytes()
    seen = _kill_at_random_points(tmp_path, _toollint("--write-baseline", str(baseline), "p"), baseline,
                                  before, trials=trials)
    assert seen
