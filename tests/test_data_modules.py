"""Issue 26, CPU per file: a module of literals (a benchmark's task data: no function, class or lambda) is
not turned into a syntax tree, since no rule has anything in it to read; its findings stay what parsing it
gave: a syntax error with the parser's message, line and column, and none for a valid one."""

from __future__ import annotations

import ast
import os
import subprocess
import symtable
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toollint import engine
from toollint.engine import FileResult, lint_paths, lint_source
from toollint.settings import Settings
from toollint.sources import SKIM_FROM, may_hold_function


def task(n: int) -> str:
    return (f'    Task(user_id="user_{n}", instruction="Book the economy class flight for user {n}; the '
            f'default seat is fine.", actions=[Action(name="book", kwargs={{"id": {n}}})]),\n')


def data_module(extra: str = "") -> str:
    """A task-data module (as tau-bench's `tasks_*.py`), over SKIM_FROM, with `extra` lines at its end."""
    text = "from bench.types import Action, Task\n\nTASKS = [\n"
    n = 0
    while len(text) < SKIM_FROM + 500:
        text += task(n)
        n += 1
    return text + "]\n" + extra


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The files ast.parse was asked to parse."""
    parsed: list[str] = []
    real = ast.parse

    def counting(source: str | bytes, filename: str = "<unknown>", *args: object,
                 **kwargs: object) -> ast.AST:
        parsed.append(os.path.basename(str(filename)))
        return real(source, filename, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", counting)
    yield parsed


def as_before(text: str, path: str, monkeypatch: pytest.MonkeyPatch) -> FileResult:
    """The lint of `text` as it was before the skim: every module parsed."""
    with monkeypatch.context() as patch:
        patch.setattr(engine, "_holds_nothing_to_read", lambda *args: False)
        return lint_source(text.encode(), path, Settings())


def test_a_valid_data_module_is_not_parsed_and_lints_as_before(parses: list[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    text = data_module()
    assert "class" in text and "def" in text  # prose and words in its strings: neither is a keyword
    result = lint_source(text.encode(), "tasks.py", Settings())
    assert parses == []
    assert result == as_before(text, "tasks.py", monkeypatch)
    assert (result.findings, result.tools, result.rejected, result.graders) == ([], [], [], [])


@pytest.mark.parametrize("extra, line, col", [
    ('EXTRA = {"a": 1 "b": 2}\n', 0, 15),  # the parser's "Perhaps you forgot a comma?"
    ("EXTRA = [1, 2\n", 0, 9),  # "'[' was never closed"
    ("nonlocal x\n", None, None),  # the symbol table refuses it, ast.parse does not: no finding, as before
])
def test_a_data_module_with_a_syntax_error_reports_it_exactly_as_before(
        extra: str, line: int | None, col: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    text = data_module(extra)
    result = lint_source(text.encode(), "tasks.py", Settings())
    assert result == as_before(text, "tasks.py", monkeypatch)
    if line is None:
        assert result.findings == []
        return
    with pytest.raises(SyntaxError) as parsed:
        ast.parse(text)
    [finding] = result.findings
    assert (finding.code, finding.message) == ("TL901", f"SyntaxError: {parsed.value.msg}")
    where = (finding.line, finding.col)
    assert where == (parsed.value.lineno, parsed.value.offset) == (text.count("\n") + line, col)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10's ast.parse counts no depth (a deep tree "
                    "crashes it)")
def test_a_data_module_nested_too_deeply_for_ast_parse_but_not_its_symbol_table_is_still_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Keyword arguments nest one level deeper in ast.parse's count than in the symbol table's: with enough
    # of them, a chain of additions fits the symbol table's limit and not ast.parse's.
    def nested(n: int) -> str:
        return data_module("EXTRA = " + "f(a=" * 150 + "1+" * n + "1" + ")" * 150 + "\n")

    def fails(parse: Callable[[str], object], text: str) -> bool:
        try:
            parse(text)
        except (RecursionError, MemoryError, SyntaxError):
            return True
        return False

    def table(text: str) -> object:
        return symtable.symtable(text, "x.py", "exec")

    texts = map(nested, range(1000, 20000, 25))
    text = next((t for t in texts if fails(ast.parse, t) and not fails(table, t)), None)
    assert text is not None, "no nesting that ast.parse refuses and the symbol table accepts"
    result = lint_source(text.encode(), "tasks.py", Settings())
    assert [(f.code, f.message) for f in result.findings] == [
        ("TL901", "SyntaxError: too deeply nested to parse")]
    assert result == as_before(text, "tasks.py", monkeypatch)


TOOL = '''
def tool(fn):
    return fn


@tool
def add_user(name: str) -> str:
    """Add a user."""
    if name.strip():
        DB["users"].append(name)
    return "User added successfully."


DB = {"users": []}
'''


def test_a_data_module_with_a_tool_shaped_string_or_a_tool_is_still_right(
        parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # A tool written in a string is no tool: the word `def` sends it down the whole path, which finds none.
    shaped = data_module(f"EXAMPLE = '''{TOOL}'''\n")
    result = lint_source(shaped.encode(), "shaped.py", Settings())
    assert parses == ["shaped.py"]
    assert result == as_before(shaped, "shaped.py", monkeypatch)
    assert (result.findings, result.tools) == ([], [])
    # The same tool as code, among the data: found, and its finding reported.
    real = data_module(TOOL)
    result = lint_source(real.encode(), "real.py", Settings())
    assert [f.code for f in result.findings] == ["TL101"]
    assert [t.qualname for t in result.tools or []] == ["add_user"]
    assert result == as_before(real, "real.py", monkeypatch)


def test_a_noqa_comment_in_a_data_module_is_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    text = data_module("EXTRA = 1  # noqa: TL101\n")  # a stale suppression: TL900, as before
    result = lint_source(text.encode(), "tasks.py", Settings())
    assert [f.code for f in result.findings] == ["TL900"]
    assert result == as_before(text, "tasks.py", monkeypatch)


def test_a_data_module_a_tool_imports_is_followed_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            parses: list[str]) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tasks.py").write_text(data_module("from pkg.helpers import save\n"))
    (tmp_path / "pkg" / "helpers.py").write_text('def save(db, name):\n    db["users"].append(name)\n')
    (tmp_path / "pkg" / "tools.py").write_text("from pkg.tasks import save\n" + TOOL.replace(
        'DB["users"].append(name)', "save(DB, name)"))
    monkeypatch.chdir(tmp_path)
    now = lint_paths(["pkg"], Settings(), jobs=1)
    with monkeypatch.context() as patch:
        patch.setattr(engine, "_holds_nothing_to_read", lambda *args: False)
        before = lint_paths(["pkg"], Settings(), jobs=1)
    assert now.files == before.files
    tools = next(r for r in now.files if r.path.endswith("tools.py"))
    assert [t.writes for t in tools.tools or []] == [True]  # helpers.py's write, reached through tasks.py
    assert {os.path.basename(p) for p, _ in tools.reached} >= {"tasks.py", "helpers.py"}


@pytest.mark.parametrize("text, holds", [
    ("x = 1\nasync  def f(): pass\n", True),
    ("x = 1\rclass A: pass\r", True),  # old Mac line ends
    ("if x:\n    \\\n    class A: pass\n", True),
    ("y = sorted(x, key=lambda v: v)\n", True),
    ("\fdef f(): pass\n", True),
    ('"""\ndef in a docstring, first on its line: counted"""\n', True),
    ('x = "economy class, the default"\n', False),
    ("classic = undefined = lambda_ = 1\n", False),
    ("x = {'def': 1}\n", False),
])
def test_the_word_test_counts_every_keyword_and_may_count_more(text: str, holds: bool) -> None:
    assert may_hold_function(text) is holds
    tree = ast.parse(text)
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
           for n in ast.walk(tree)):
        assert holds


def test_the_cli_reports_a_data_module_s_syntax_error_beside_a_tool_s_finding(tmp_path: Path) -> None:
    """The user's path: `toollint check` over a benchmark holding tools and task data."""
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "tools.py").write_text(TOOL)
    (tmp_path / "bench" / "tasks.py").write_text(data_module())
    (tmp_path / "bench" / "tasks_broken.py").write_text(data_module('EXTRA = {"a": 1 "b": 2}\n'))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLLINT_")}
    run = subprocess.run([sys.executable, "-m", "toollint", "check", "--no-cache", "bench"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 1, run.stderr
    line = data_module().count("\n") + 1
    broken, tools = (str(Path("bench", name)) for name in ("tasks_broken.py", "tools.py"))
    assert [row.split(" [")[0] for row in run.stdout.splitlines()] == [
        f"{broken}:{line}:15: TL901", f"{tools}:11:5: TL101"]
    assert "[syntax-error] SyntaxError: invalid syntax. Perhaps you forgot a comma?" in run.stdout
    assert "Checked 3 files" in run.stderr
