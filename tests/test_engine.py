"""The engine: rule plumbing, selection, per-file ignores, exclusion, module names, the process pool."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fake_rules import CRASH, FLAG, fake_rules  # noqa: F401 - fixture

from toollint import registry
from toollint.engine import SelectionError, lint_paths, lint_source, lint_tree
from toollint.files import collect_files, guess_module_name
from toollint.settings import Settings

pytestmark = pytest.mark.usefixtures("fake_rules")

BAD = "def bad_one():\n    pass\n\n\ndef good():\n    pass\n\n\ndef bad_two():\n    pass\n"


def codes(findings: list) -> list[tuple[str, int]]:  # type: ignore[type-arg]
    return [(f.code, f.line) for f in findings]


def test_rule_findings_carry_location_and_tool() -> None:
    result = lint_source(BAD, "m.py", Settings(select=[FLAG]))
    assert codes(result.findings) == [(FLAG, 1), (FLAG, 9)]
    first = result.findings[0]
    assert (first.path, first.col, first.tool, registry.rule_name(first.code)) == (
        "m.py",
        1,
        "bad_one",
        "flag-bad-function",
    )


def test_crashing_rule_becomes_one_internal_error_and_other_rules_still_run() -> None:
    result = lint_source(BAD + "# CRASH\n", "m.py", Settings(select=[FLAG, CRASH]))
    assert codes(result.findings) == [(FLAG, 1), ("TL904", 1), (FLAG, 9)]
    error = result.findings[1]
    assert CRASH in error.message and "crash-on-marker" in error.message
    assert "ZeroDivisionError: boom" in error.message and "\n" not in error.message
    assert error.properties["rule"] == CRASH


def test_internal_error_is_reported_even_when_tl904_is_not_selected() -> None:
    result = lint_source("# CRASH\n", "m.py", Settings(select=[CRASH]))
    assert codes(result.findings) == [("TL904", 1)]


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        (["TL190"], [], {FLAG}),
        (["flag-bad-function"], [], {FLAG}),
        (["TL19"], ["crash-on-marker"], {FLAG}),
        (["TL19"], ["TL191"], {FLAG}),
        (["TL191"], [], {"TL904"}),
        (["TL19"], ["TL190", "TL191"], set()),
    ],
)
def test_select_and_ignore_by_code_prefix_or_name(
    select: list[str], ignore: list[str], expected: set[str]
) -> None:
    result = lint_source(BAD + "# CRASH\n", "m.py", Settings(select=select, ignore=ignore))
    assert {f.code for f in result.findings} == expected


def test_extend_select_adds_to_select() -> None:
    settings = Settings(select=["TL901"], extend_select=["flag-bad-function"])
    assert {f.code for f in lint_source(BAD, "m.py", settings).findings} == {FLAG}


def test_unknown_selector_is_a_selection_error() -> None:
    with pytest.raises(SelectionError, match="unknown rule selector 'TL999' in ignore"):
        lint_source(BAD, "m.py", Settings(ignore=["TL999"]))


def test_default_selection_runs_tl1_rules_not_other_families() -> None:
    result = lint_source(BAD, "m.py", Settings())
    assert FLAG in {f.code for f in result.findings}  # TL190 is in the default TL1 selection


def test_per_file_ignores_match_by_glob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(BAD)
    (tmp_path / "x.py").write_text(BAD)
    settings = Settings(select=[FLAG], per_file_ignores={"tests/*": ["TL19"]}, project_root=tmp_path)
    result = lint_paths(["."], settings)
    assert {f.path for f in result.findings} == {"x.py"}


def test_lint_tree_runs_rules_on_a_given_tree() -> None:
    findings = lint_tree(ast.parse(BAD), BAD, "m.py", Settings(select=[FLAG]))
    assert codes(findings) == [(FLAG, 1), (FLAG, 9)]


def test_lint_tree_applies_noqa_only_when_asked() -> None:
    source = "def bad_one():  # noqa: TL190\n    pass\n"
    settings = Settings(select=[FLAG])
    assert not lint_tree(ast.parse(source), source, "m.py", settings)[0].suppressed
    assert lint_tree(ast.parse(source), source, "m.py", settings, apply_noqa=True)[0].suppressed


def test_module_name_is_guessed_from_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "suite" / "tools"
    pkg.mkdir(parents=True)
    (tmp_path / "suite" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "banking.py").write_text("")
    assert guess_module_name(pkg / "banking.py") == "suite.tools.banking"
    assert guess_module_name(pkg / "__init__.py") == "suite.tools"
    assert guess_module_name(tmp_path / "loose.py") == "loose"


def test_tools_setting_reaches_rules_through_the_module_name(tmp_path: Path) -> None:
    pkg = tmp_path / "bench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "env.py").write_text(BAD)
    result = lint_paths([pkg / "env.py"], Settings(select=[FLAG]))
    assert result.files[0].module_name == "bench.env"
    assert Settings(tools=["bench.env:Env.act"]).tool_refs_for(result.files[0].module_name) == {"Env.act"}


def _tree(tmp_path: Path) -> Path:
    for rel in [
        "a.py",
        "pkg/b.py",
        "pkg/gen_pb2.py",
        "build/c.py",
        ".venv/d.py",
        "docs/notes.txt",
        "tests/e.py",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BAD)
    return tmp_path


def _names(paths: list[Path], root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in paths}


def test_walk_skips_default_excludes_and_non_python(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    found = collect_files([root], Settings(project_root=root))
    assert _names(found.files, root) == {"a.py", "pkg/b.py", "pkg/gen_pb2.py", "tests/e.py"}


def test_extend_exclude_adds_and_exclude_replaces(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    extended = collect_files([root], Settings(project_root=root, extend_exclude=["*_pb2.py", "tests/*"]))
    assert _names(extended.files, root) == {"a.py", "pkg/b.py"}
    replaced = collect_files([root], Settings(project_root=root, exclude=["pkg"]))
    assert _names(replaced.files, root) == {"a.py", "build/c.py", ".venv/d.py", "tests/e.py"}


def test_explicit_file_is_linted_even_if_excluded_unless_force_exclude(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    target = root / "build" / "c.py"
    settings = Settings(project_root=root)
    assert collect_files([target], settings).files == [target]
    assert collect_files([target], settings, force_exclude=True).files == []
    assert collect_files([root / "pkg" / "b.py"], settings, force_exclude=True).files == [
        root / "pkg" / "b.py"
    ]


def test_a_file_given_twice_is_linted_once(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    found = collect_files([root / "a.py", root, root / "a.py"], Settings(project_root=root))
    assert [p.name for p in found.files].count("a.py") == 1


def test_jobs_gives_the_same_result_as_serial(tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"m{i:02}.py").write_text(BAD if i % 3 else "def fine():\n    pass\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    settings = Settings(select=[FLAG, "TL9"])
    serial = lint_paths([tmp_path], settings, jobs=1)
    parallel = lint_paths([tmp_path], settings, jobs=2)
    assert [(f.path, f.code, f.line) for f in parallel.findings] == [
        (f.path, f.code, f.line) for f in serial.findings
    ]
    assert len(serial.findings) == 2 * 26 + 1


@pytest.mark.parametrize("forks", [True, False])
def test_default_jobs_stay_serial_below_the_size_that_pays_for_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: bool
) -> None:
    from toollint import engine

    for i in range(40):
        (tmp_path / f"m{i:02}.py").write_text(BAD)
    size = 40 * len(BAD)
    shared: list[int] = []
    real = engine._lint_parallel

    def counted(work: list, entries: list, jobs: int) -> list:  # type: ignore[type-arg]
        shared.append(jobs)
        return real(work, entries, jobs)

    monkeypatch.setattr(engine, "_lint_parallel", counted)
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(engine, "idle_cpus", lambda: 4)
    monkeypatch.setattr(engine, "can_share_out", lambda: forks)
    settings = Settings(select=[FLAG])
    small = lint_paths([tmp_path], settings, jobs=0)  # 40 small files: serial
    assert shared == []
    asked = lint_paths([tmp_path], settings, jobs=2)  # an explicit --jobs is what it says
    assert shared == [2]
    if forks:  # one process per FORKED_BYTES_PER_JOB of source, up to one per CPU
        monkeypatch.setattr(engine, "FORKED_BYTES_PER_JOB", size // 3)
    else:  # the pool from PARALLEL_FROM_BYTES of source: one process per CPU
        monkeypatch.setattr(engine, "PARALLEL_FROM_BYTES", size)
    large = lint_paths([tmp_path], settings, jobs=0)
    assert shared == [2, 3 if forks else 4]
    assert [(f.path, f.line) for f in small.findings] == [(f.path, f.line) for f in asked.findings] == [
        (f.path, f.line) for f in large.findings
    ]
    assert len(small.findings) == 80


def test_no_process_lints_fewer_than_min_files_per_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import engine

    paths = []
    for i in range(20):
        paths.append(tmp_path / f"m{i:02}.py")
        paths[-1].write_text(BAD)
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(engine, "FORKED_BYTES_PER_JOB", 1)
    assert engine._processes(0, paths) == 20 // engine.MIN_FILES_PER_JOB  # 2, not 8
    assert engine._processes(2, paths) == 2
    assert engine._processes(3, paths) == 1  # an explicit --jobs with too few files: serial
    assert engine._processes(0, paths[: 2 * engine.MIN_FILES_PER_JOB - 1]) == 1


def test_forked_copies_go_only_to_idle_cpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint import engine

    paths = []
    for i in range(64):
        paths.append(tmp_path / f"m{i:02}.py")
        paths[-1].write_text(BAD)
    monkeypatch.setattr(engine, "can_share_out", lambda: True)
    monkeypatch.setattr(engine, "FORKED_BYTES_PER_JOB", 1)
    for idle, processes in ((8, 8), (3, 3), (1, 1)):  # a busy machine stays serial
        monkeypatch.setattr(engine, "idle_cpus", lambda idle=idle: idle)
        assert engine._processes(0, paths) == processes
        assert engine._processes(4, paths) == 4  # an explicit --jobs is what it says


@pytest.mark.parametrize("loadavg, idle", [
    ("0.10 0.20 0.30 1/95 4242\n", 4),  # only this process runs
    ("0.10 0.20 0.30 2/95 4242\n", 4),  # and the one that started it
    ("1.90 1.20 0.80 4/95 4242\n", 2),  # two others
    ("3.90 3.20 2.80 9/95 4242\n", 1),  # more than there are CPUs: at least one
    ("no numbers here\n", 4),  # unreadable: every CPU
])
def test_idle_cpus_are_those_no_other_runnable_process_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loadavg: str, idle: int
) -> None:
    from toollint import processes

    monkeypatch.setattr(processes.os, "cpu_count", lambda: 4)
    (tmp_path / "loadavg").write_text(loadavg)
    assert processes.idle_cpus(str(tmp_path / "loadavg")) == idle
    assert processes.idle_cpus(str(tmp_path / "absent")) == 4


def test_engine_failure_on_one_file_is_a_tl904_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import noqa

    real_apply = noqa.apply

    def apply_or_fail(findings, comments, enabled, path):  # type: ignore[no-untyped-def]
        if path.endswith("a.py"):
            raise RuntimeError("noqa broke")
        return real_apply(findings, comments, enabled, path)

    monkeypatch.setattr(noqa, "apply", apply_or_fail)
    (tmp_path / "a.py").write_text(BAD + "# noqa: TL190\n")
    (tmp_path / "b.py").write_text(BAD + "# noqa: TL190\n")
    result = lint_paths([tmp_path], Settings(select=[FLAG]))
    by_file = {Path(r.path).name: [f.code for f in r.findings] for r in result.files}
    assert by_file == {"a.py": ["TL904"], "b.py": [FLAG, FLAG]}
    assert "internal error in the engine: RuntimeError: noqa broke" in result.files[0].findings[0].message


def test_module_search_on_strings_finds_what_the_pathlib_search_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cold run's module search compares strings; its answers (found file, absent candidates that key
    the cache) are those of the pathlib search, for absolute and relative importers alike."""
    import itertools

    from toollint.analysis import resolver

    for name in ("x/pkg/__init__.py", "x/pkg/mod.py", "x/pkg/sub/__init__.py", "x/pkg/sub/leaf.py",
                 "x/other.py", "y.z/pkg/__init__.py", "top.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    directories = [str(tmp_path / "x/pkg/sub"), str(tmp_path), ".", "x", "x/pkg/sub", "y.z/pkg", "..", "/"]
    modules = ["pkg", "pkg.mod", "pkg.sub.leaf", "mod", "sub.leaf", "other", "x.pkg.mod", "top", "nope"]
    found = 0
    cases = itertools.product(directories, [-1, 0, 1, 3, 7], [0, 1, 2], modules)
    for directory, depth, level, module in cases:
        if level and depth != -1:
            continue
        fast = resolver._module_search.__wrapped__(directory, depth, level, module)
        slow = resolver._module_search_by_path(directory, depth, level, module)
        assert (str(fast[0]), fast[1]) == (str(slow[0]), slow[1]), (directory, depth, level, module)
        found += fast[0] is not None
    assert found > 50
