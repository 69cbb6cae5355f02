"""Parallel runs (`--jobs`, issue 26): the work goes out in units of one directory's consecutive
files, largest first, and comes back in the walk's order with the same findings and facts a serial
run gives, helpers followed across modules included. Both ways: forked copies of this process
(`processes.share_out`, Linux) and the process pool (elsewhere)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cache import TOOLS, WRITES

from toollint import engine, processes
from toollint.engine import FileResult, lint_paths, work_units
from toollint.settings import Settings

GRADER = "def evaluate(final_state, gold_state, trajectory):\n    return final_state == gold_state\n"


@pytest.fixture(params=["forked", "pool"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test below runs with forked copies (where they work) and with the pool."""
    if request.param == "forked" and not processes.can_share_out():
        pytest.skip("forked copies only on Linux with one thread")
    if request.param == "pool":
        monkeypatch.setattr(processes, "can_share_out", lambda: False)
    return str(request.param)


def make_packages(root: Path, count: int = 5) -> None:
    """`count` packages, each a toolkit whose writer's helper lives in a sibling module, a grader, a
    file that does not parse and a few plain modules: enough files for a pool of two."""
    for n in range(count):
        pkg = root / f"pkg{n}"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "tools.py").write_text(TOOLS.replace("from pkg.store", f"from pkg{n}.store"))
        (pkg / "store.py").write_text(WRITES)
        (pkg / "grading.py").write_text(GRADER)
        (pkg / "broken.py").write_text("def f(:\n")
        for i in range(3):
            (pkg / f"plain{i}.py").write_text(f"VALUE = {i}\n" * (10 * (n + 1)))


def facts(result: FileResult) -> tuple[object, ...]:
    return (result.path, [(f.code, f.line, f.col, f.message, f.suppressed) for f in result.findings],
            result.tools, result.rejected, result.graders, result.reached, result.digest)


def test_a_parallel_run_gives_what_a_serial_run_gives_file_by_file_in_the_walks_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    make_packages(tmp_path)
    units: list[list[list[int]]] = []
    real = engine.work_units

    def recorded(work: list[tuple[Path, str, int]], jobs: int) -> list[list[int]]:
        units.append(real(work, jobs))
        return units[-1]

    monkeypatch.setattr(engine, "work_units", recorded)
    serial = lint_paths([str(tmp_path)], Settings(), jobs=1)
    pooled = lint_paths([str(tmp_path)], Settings(), jobs=2)
    assert len(units) == 1  # the work was shared out (the serial run makes no units)
    assert [facts(r) for r in pooled.files] == [facts(r) for r in serial.files]
    tools = {Path(r.path).parent.name: r for r in pooled.files if r.path.endswith("tools.py")}
    assert len(tools) == 5
    for name, result in tools.items():  # each toolkit's writer writes through its own package's helper
        assert [(t.writes, "through `save_email`" in t.why) for t in result.tools or []] == [(True, True)]
        reached = [Path(dep).relative_to(tmp_path).as_posix() for dep, _ in result.reached]
        assert reached == [f"{name}/store.py"]
    assert [f.code for r in pooled.files if r.path.endswith("broken.py") for f in r.findings] == ["TL901"] * 5
    assert sum(len(r.graders or []) for r in pooled.files) == 5


def test_units_hold_consecutive_files_of_one_directory_and_come_largest_first(tmp_path: Path) -> None:
    make_packages(tmp_path)
    (tmp_path / "big.py").write_text("X = 1\n" * 5000)
    work = [(p, str(p), 0) for p in sorted(tmp_path.rglob("*.py"))]
    units = work_units(work, 2)
    assert sorted(p for unit in units for p in unit) == list(range(len(work)))  # each file once
    sizes = [p.stat().st_size for p, _, _ in work]
    cap = sum(sizes) // (2 * 8)
    for unit in units:
        assert unit == list(range(unit[0], unit[-1] + 1))  # consecutive in the walk
        assert len({work[p][0].parent for p in unit}) == 1  # one directory
        assert len(unit) == 1 or sum(sizes[p] for p in unit) <= cap
    totals = [sum(sizes[p] for p in unit) for unit in units]
    assert totals == sorted(totals, reverse=True)
    assert [work[p][0].name for p in units[0]] == ["big.py"]  # the largest file is handed out first
    # a directory's small files share a unit: its package facts are read by one worker
    assert any(len(unit) > 1 for unit in units)


def test_a_worker_collects_the_cyclic_garbage_of_the_trees_as_the_serial_loop_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_packages(tmp_path, 1)
    work = [(p, str(p), 0) for p in sorted(tmp_path.rglob("*.py"))]
    collections: list[int] = []
    monkeypatch.setattr(engine, "GC_EVERY", 4)
    monkeypatch.setattr(engine, "GC_YOUNG_BYTES", 1 << 30)
    monkeypatch.setattr(gc, "collect", lambda generation=2: collections.append(generation) or 0)
    monkeypatch.setattr(engine, "_worker_state", [(Settings(), engine.Selection.from_settings(Settings()))])
    monkeypatch.setattr(engine, "_worker_garbage", engine._Garbage())
    for item in work:  # one file a unit: a collection after every fourth
        assert [r.path for r in engine._lint_in_worker([item])] == [item[1]]
    assert collections == [2] * (len(work) // 4)


def test_the_youngest_garbage_is_collected_by_the_bytes_linted_the_whole_heap_by_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an analysed tree is cyclic garbage ~50 times its source: a few large files must not wait for
    # GC_EVERY files (the stdlib's test/ took the peak from 61 to 140 MiB)
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text("X = 1\n" * 2000)  # 12 kB each
    collections: list[int] = []
    monkeypatch.setattr(engine, "GC_EVERY", 5)
    monkeypatch.setattr(engine, "GC_YOUNG_BYTES", 20_000)
    monkeypatch.setattr(gc, "collect", lambda generation=2: collections.append(generation) or 0)
    garbage = engine._Garbage()
    for path in sorted(tmp_path.iterdir()):
        garbage.collect(path)
    assert collections == [0, 0, 2]  # two files' bytes, two more, then the fifth file: the whole heap


def test_jobs_on_the_command_line_reports_what_one_job_reports(tmp_path: Path) -> None:
    make_packages(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLLINT_")}

    def run(jobs: str) -> list[dict[str, object]]:
        proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--no-cache", "--jobs", jobs,
                               "--output-format", "json", "."], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert proc.returncode == 1, proc.stderr[-2000:]
        return json.loads(proc.stdout)  # type: ignore[no-any-return]

    pooled, serial = run("2"), run("1")
    assert pooled == serial
    assert sorted((Path(str(f["filename"])).parent.name, f["code"]) for f in pooled) == [
        (f"pkg{n}", "TL901") for n in range(5)]


def _die(unit: list[tuple[Path, str, int]]) -> list[FileResult]:
    os._exit(3)  # a worker killed (the OOM killer, a segfault in an extension)


def test_a_worker_that_dies_leaves_the_run_to_a_serial_lint_with_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    make_packages(tmp_path)
    serial = lint_paths([str(tmp_path)], Settings(), jobs=1)
    if way == "pool":
        monkeypatch.setattr(engine, "_lint_in_worker", _die)
    else:  # a copy dies on its first unit; this process lints what it took
        parent, real = os.getpid(), engine._lint_unit
        monkeypatch.setattr(engine, "_lint_unit", lambda unit, entries: (
            _die(unit) if os.getpid() != parent else real(unit, entries)))
    pooled = lint_paths([str(tmp_path)], Settings(), jobs=3)
    assert [facts(r) for r in pooled.files] == [facts(r) for r in serial.files]
