"""What keeps the static half fast (issue 26), as behaviour: each file of a run is parsed once (the
analysis following a helper into another module and the engine linting that module later share one
tree; a helper linted *before* the tool that reaches it is parsed again, 0-2% of the files of the
corpus code bases, rather than keeping every linted tree alive for a later reader),
and a plain `toollint check` imports neither the dynamic half, the tracer, the profile registry, a
reporter it was not asked for, nor a process pool for a small tree. `bench/speed.py` prints the
timings; these tests hold the shape that the timings rest on."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_cache import TOOLS as CACHE_TOOLS
from test_cache import WRITES as STORE

from toollint.engine import lint_paths
from toollint.settings import Settings

# test_cache's tool module, its helper renamed so that it is linted after the tool that reaches it
TOOLS = CACHE_TOOLS.replace("from pkg.store import", "from pkg.writes import")
GRADER = '''\
def evaluate(final_state, gold_state, trajectory):
    return final_state == gold_state
'''


def make_tree(root: Path) -> list[Path]:
    pkg = root / "pkg"
    pkg.mkdir()
    files = {
        pkg / "__init__.py": "",
        pkg / "tools.py": TOOLS,
        pkg / "writes.py": STORE,  # linted after tools.py, whose analysis parses it first
        pkg / "grading.py": GRADER,
        pkg / "broken.py": "def f(:\n",
    }
    for path, text in files.items():
        path.write_text(text)
    return list(files)


def test_each_file_is_parsed_once_though_the_analysis_reads_a_helper_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = make_tree(tmp_path)
    parsed: Counter[str] = Counter()
    real_parse = ast.parse

    def counting_parse(source: Any, filename: Any = "<unknown>", *args: Any, **kwargs: Any) -> Any:
        parsed[str(filename)] += 1
        return real_parse(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    # no chdir: the paths stay absolute, so this process's record of what each file reached (keyed by
    # the path as shown) cannot meet another test's `pkg/tools.py`
    result = lint_paths([str(tmp_path / "pkg")], Settings(), jobs=1)
    by_path = {Path(r.path).resolve(): r for r in result.files}
    assert set(by_path) == {p.resolve() for p in files}
    # the analysis followed the helper into writes.py
    tools = by_path[(tmp_path / "pkg" / "tools.py").resolve()]
    assert any(Path(dep).name == "writes.py" for dep, _ in tools.reached)
    whole_files = {Path(name).resolve(): count for name, count in parsed.items() if name != "<unknown>"}
    # the empty __init__.py needs no parse; every other file exactly one, the broken one included
    assert whole_files == {p.resolve(): 1 for p in files if p.name != "__init__.py"}
    assert [f.code for f in by_path[(tmp_path / "pkg/broken.py").resolve()].findings] == ["TL901"]


# Modules a plain static run has no use for; each is imported by the feature that needs it.
NOT_FOR_A_STATIC_RUN = (
    "toollint.profiles",  # the profile registry: `benchmark = "..."` in the configuration, --confirm
    "toollint.profiles.api",
    "toollint.dynamic.confirm",
    "toollint.dynamic.checker",
    "toollint.dynamic.replay",
    "toollint.trace.cli",
    "toollint.trace.ledger",
    "toollint.validate",
    "toollint.contracts",
    "toollint.reporters.sarif",
    "toollint.reporters.json_",
    "toollint.reporters.junit",
    "toollint.fingerprint",  # baselines and SARIF/GitLab reports
    "json",  # a baseline, a JSON report
    "tomllib",  # a configuration file (none here: the tree has no [tool.toollint] table)
    "yaml",
    "sarif_om",
    "astroid",
    "libcst",
    "concurrent.futures",
    "multiprocessing",
    "subprocess",
    "difflib",
    "toollint.cache",  # --no-cache (here): neither the cache nor pickle
    "pickle",
    "hashlib",  # content digests are BLAKE2b's, from _blake2: hashlib loads OpenSSL first
    "threading",  # the exit path asks whether other threads run only when something imported threading
    # the steps after linting: imported when an option of theirs is given (their options are declared in
    # toollint.pipeline.options)
    "toollint.baseline",
    "toollint.fixes",
    "toollint.dynamic",
    "toollint.pipeline.audit",
    "toollint.trace",
    "toollint.noqa",  # no file of the tree mentions noqa
)


# `python -m toollint ARGV`, with the names of the modules loaded when it ends written to a file (not
# `-X importtime`: it does not see `importlib.import_module`, which loads rules and reporters).
RUN_AND_LIST_MODULES = (
    "import atexit, runpy, sys\n"
    "listing = sys.argv.pop(1)\n"
    "def dump():\n"
    "    with open(listing, 'w') as fh: fh.write('\\n'.join(sorted(sys.modules)))\n"
    "atexit.register(dump)\n"
    "runpy.run_module('toollint', run_name='__main__', alter_sys=True)\n"
)


def imported_by(argv: list[str], cwd: Path) -> set[str]:
    listing = cwd / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, str(listing), *argv], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return set(listing.read_text().split())


def test_a_static_check_of_a_small_tree_imports_only_what_it_uses(tmp_path: Path) -> None:
    make_tree(tmp_path)
    modules = imported_by(["check", "--no-cache", "pkg"], tmp_path)
    assert {"toollint.engine", "toollint.rules.tl101_literal_success", "toollint.reporters.text"} <= modules
    assert sorted(m for m in NOT_FOR_A_STATIC_RUN if m in modules) == []


def test_the_features_that_need_them_still_import_them(tmp_path: Path) -> None:
    make_tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nbenchmark = "tau2"\n')
    modules = imported_by(["check", "--no-cache", "--output-format", "json", "pkg"], tmp_path)
    assert {"toollint.profiles", "toollint.reporters.json_", "tomllib", "json"} <= modules
    baseline = imported_by(["check", "--no-cache", "--write-baseline", "base.json", "pkg"], tmp_path)
    assert {"toollint.baseline", "toollint.fingerprint", "json"} <= baseline
    diff = imported_by(["check", "--no-cache", "--diff", "pkg"], tmp_path)
    assert "toollint.fixes" in diff and "toollint.baseline" not in diff


def test_a_run_raises_the_gc_thresholds_and_gives_the_caller_its_own_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc

    from toollint import cli

    during: list[tuple[int, int, int]] = []

    def run(argv: object) -> int:
        during.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(cli, "_main", run)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert cli.main(["check", "."]) == 0
        assert during == [cli.RUN_GC_THRESHOLDS] and gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


# What a rule needs, and a run the results cache answers whole does not: the rules, the analysis they
# share, and the per-file context and noqa machinery (the cache hands over the rule table reports need).
NOT_FOR_A_WARM_RUN = ("toollint.analysis", "toollint.rules", "toollint.context", "toollint.noqa")


@pytest.mark.parametrize("output_format", ["concise", "json", "sarif", "github"])
def test_a_warm_run_imports_no_rule_and_no_analysis(tmp_path: Path, output_format: str) -> None:
    make_tree(tmp_path)
    argv = ["check", "--output-format", output_format, "-o", "report.txt", "pkg"]
    cold = imported_by(argv, tmp_path)
    cold_report = (tmp_path / "report.txt").read_text()
    assert {"toollint.analysis", "toollint.rules.tl101_literal_success"} <= cold  # it linted
    warm = imported_by(argv, tmp_path)
    assert sorted(m for m in warm if m.startswith(NOT_FOR_A_WARM_RUN)) == []
    assert (tmp_path / "report.txt").read_text() == cold_report
    assert "TL901" in cold_report and "syntax-error" in cold_report  # a finding, named by the registry


NO_TOOL = '''\
class Calendar:
    def add_event(self, title: str) -> str:
        """Add an event."""
        return title

    def list_events(self) -> list[str]:
        """List the events."""
        return []
'''


def test_a_warm_run_that_finds_no_tool_names_the_candidates_without_the_analysis(tmp_path: Path) -> None:
    # the hint of a run that found no tool (pre-commit on files without tools) comes from the cache too
    (tmp_path / "cal.py").write_text(NO_TOOL)
    listing = tmp_path / "modules.txt"
    runs = [subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, str(listing), "check", "cal.py"],
                           cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120)
            for _ in range(2)]
    assert "Calendar: 2 documented public methods" in runs[0].stderr
    assert runs[1].stderr == runs[0].stderr
    assert sorted(m for m in listing.read_text().split() if m.startswith(NOT_FOR_A_WARM_RUN)) == []


def test_version_imports_no_parser_step_or_settings_module(tmp_path: Path) -> None:
    modules = imported_by(["--version"], tmp_path)
    assert sorted(m for m in modules if m.startswith("toollint")) == [
        "toollint", "toollint.cli", "toollint.console", "toollint.errors"
    ]
    assert "argparse" not in modules and "dataclasses" not in modules


def test_a_warm_run_checks_the_configured_selectors_without_the_rules(tmp_path: Path) -> None:
    make_tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nselect = ["TL1", "syntax-error"]\n')
    argv = ["check", "-o", "report.txt", "pkg"]
    imported_by(argv, tmp_path)
    cold_report = (tmp_path / "report.txt").read_text()
    warm = imported_by(argv, tmp_path)
    assert sorted(m for m in warm if m.startswith(NOT_FOR_A_WARM_RUN)) == []
    assert (tmp_path / "report.txt").read_text() == cold_report and "TL901" in cold_report
    # a selector no rule answers to is still refused, as before, by the table the cache handed over
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nselect = ["TL1", "TLX"]\n')
    proc = subprocess.run([sys.executable, "-m", "toollint", *argv], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("unknown rule selector 'TLX' in 'select' in "
                                        f"{tmp_path / 'pyproject.toml'} [tool.toollint]")
