"""Issue 22: discovery's package-wide questions (which names a function-calling schema of the package
declares, which classes a sibling module dispatches to by name) read every module of the package,
mostly before the engine comes to lint them. Each module's bytes are read once per process: the
engine takes those discovery read, and discovery those the engine read (`toollint.sources`)."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from textwrap import dedent

import pytest

from toollint import sources
from toollint.analysis import dispatch
from toollint.engine import lint_paths
from toollint.settings import Settings

API = """
class KnowledgeGraph:
    def __init__(self):
        self.facts = []

    def get_relations(self, entity):
        return [f for f in self.facts if f[0] == entity]

    def add_fact(self, subject, relation, obj):
        self.facts.append((subject, relation, obj))
        return "added"
"""

TASK = """
from kg.api import KnowledgeGraph

TOOLS = [
    {"name": "get_relations", "parameters": {"entity": {"type": "string"}}},
    {"name": "add_fact", "parameters": {"subject": {"type": "string"}}},
]


def run(call):
    api = KnowledgeGraph()
    return getattr(api, call["name"])(**call["arguments"])
"""


@pytest.fixture
def package(tmp_path: Path) -> Path:
    kg = tmp_path / "kg"
    kg.mkdir()
    (kg / "__init__.py").write_text("")
    (kg / "api.py").write_text(dedent(API))
    (kg / "task.py").write_text(dedent(TASK))
    (kg / "schema.json").write_text('[{"name": "get_relations", "parameters": {}}]')
    # a process's memos start empty, as in a fresh run
    dispatch.package_texts.cache_clear()
    dispatch.package_declarations.cache_clear()
    dispatch.package_dispatches.cache_clear()
    return kg


def _count_opens(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    opened: Counter[str] = Counter()
    real_os_open, real_open = os.open, builtins.open

    def os_open(path: str | os.PathLike[str], *args: object, **kwargs: object) -> int:
        opened[os.path.realpath(path)] += 1
        return real_os_open(path, *args, **kwargs)  # type: ignore[arg-type]

    def open_(file: object, *args: object, **kwargs: object) -> object:
        if isinstance(file, (str, os.PathLike)):
            opened[os.path.realpath(file)] += 1
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", open_)
    return opened


def test_a_static_run_reads_each_module_of_a_package_once(package: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _count_opens(monkeypatch)
    result = lint_paths([package], Settings())
    monkeypatch.undo()
    tools = sorted(t.qualname for r in result.files for t in r.tools or [])
    # the package's questions were asked (the tools are found by the schema declaring them) ...
    assert tools == ["KnowledgeGraph.add_fact", "KnowledgeGraph.get_relations"]
    # ... and answered from the bytes the engine reads, or read once for both
    modules = {str(p.resolve()): opened[str(p.resolve())] for p in sorted(package.glob("*.py"))}
    assert modules == dict.fromkeys(modules, 1)
    assert opened[str((package / "schema.json").resolve())] == 1  # data is discovery's own read


def test_a_module_changed_after_it_was_read_is_read_again(package: Path) -> None:
    api = package / "api.py"
    sources.keep_module(str(api), api.read_bytes())
    api.write_text(dedent(API) + "\n# changed\n")
    assert sources.take_module(str(api)) is None  # the kept bytes are stale: the reader reads anew
    sources.keep_module(str(api), api.read_bytes())
    assert sources.take_module(str(api)) == api.read_bytes()
    assert sources.take_module(str(api)) is None  # each read is taken once


def test_a_fifo_among_the_modules_is_skipped_not_waited_on(package: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(package / "pipe.py")
    texts = dispatch.package_texts(str(package))
    assert [file.name for file in texts] == ["__init__.py", "api.py", "schema.json", "task.py"]


def test_the_cli_finds_the_declared_tools_of_the_package(package: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "toollint", "check", "--isolated", "--no-cache", "--show-tools", str(package)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode == 0, run.stderr
    shown = run.stderr  # (--show-tools lists the tools beside the findings, on stderr)
    assert "KnowledgeGraph.add_fact [writes]" in shown
    assert "KnowledgeGraph.get_relations [reads ]" in shown
    assert "declared to the model by a function-calling schema of its package" in shown
