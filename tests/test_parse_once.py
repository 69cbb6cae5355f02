"""Issue 26, CPU per file: each linted file is parsed once, shared by every rule, the analysis and the
modules that import it; what only a tool can need is not worked out for text that cannot hold it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from textwrap import dedent

import pytest
from toollint.rules import tl102_commented_guard

from toollint.engine import lint_paths
from toollint.settings import Settings

TOOLS = '''\
from pkg.utils import save_email, valid


def tool(fn):
    return fn


@tool
def change_email(user_id: str, new_email: str) -> str:
    """Change a user's email."""
    # A note on the format, prose only: nothing here is code.
    # The user's record is looked up first.
    if valid(new_email):
        save_email(DB, user_id, new_email)
    return "Email updated successfully."


DB = {"users": {}}
'''
UTILS = '''\
def valid(email):
    return "@" in email


def save_email(db, user_id, email):
    db.users[user_id]["email"] = email
'''


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every `ast.parse` a lint makes, by the file name it was given ("<unknown>": a snippet)."""
    counted: Counter[str] = Counter()
    real = ast.parse

    def counting(source: str | bytes, filename: str = "<unknown>", *args: object,
                 **kwargs: object) -> ast.AST:
        counted[os.path.basename(str(filename))] += 1
        return real(source, filename, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", counting)
    return counted


def test_a_helper_module_the_tools_import_is_parsed_once(tmp_path: Path, parses: Counter[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tools.py").write_text(TOOLS)
    (tmp_path / "pkg" / "utils.py").write_text(UTILS)
    monkeypatch.chdir(tmp_path)
    result = lint_paths(["pkg"], Settings(), jobs=1)
    assert [r.path.replace(os.sep, "/") for r in result.files] == [
        "pkg/__init__.py", "pkg/tools.py", "pkg/utils.py"]
    assert result.writer_count == 1  # the helper was followed: its write is the tool's
    # tools.py's analysis parsed utils.py; the engine linting utils.py took that tree. The prose
    # comments in the tool are no guard TL102 tries to parse: no snippet is parsed either.
    assert parses == Counter({"tools.py": 1, "utils.py": 1})


def test_commented_prose_is_not_parsed_but_a_commented_guard_still_is(parses: Counter[str]) -> None:
    def run(*texts: str) -> list[tl102_commented_guard.Comment]:
        return [tl102_commented_guard.Comment(n, 4, f"# {t}", True) for n, t in enumerate(texts, 10)]

    prose = run("Look the user up first, then", "check the address before saving it.", "if it is set")
    assert tl102_commented_guard.find_guard(prose) is None
    assert parses["<unknown>"] == 0
    guard = run("Look the user up first.", "if not valid(email):", "    raise ValueError(email)", "done")
    found = tl102_commented_guard.find_guard(guard)
    assert found is not None and found[:2] == (1, 2)
    assert isinstance(found[2], ast.If)


MODE_TOOL = dedent('''\
    from langchain_core.tools import BaseTool

    class ItemsRun(BaseTool):
        """Runs the mode it was built for."""

        description: str = ""
        mode: str
        api_wrapper: ItemsWrapper

        def _run(self, query: str) -> str:
            return self.api_wrapper.run(self.mode, query)
''')


def test_the_prompts_a_modal_tool_is_judged_by_are_part_of_its_cache_key(tmp_path: Path) -> None:
    """The prompts module beside a tool built per mode decides whether it writes (`mode_prompts`): an
    edit of it alone is seen by the next cached run, as an edit of a helper is."""
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "tool.py").write_text(MODE_TOOL)
    prompts = tmp_path / "service" / "prompt.py"

    def tools_shown() -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLLINT_")}
        run = subprocess.run([sys.executable, "-m", "toollint", "check", "--show-tools", "--exit-zero",
                              "service/tool.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120, check=False)
        assert run.returncode == 0, run.stderr
        return run.stderr

    prompts.write_text("SEARCH_ITEMS_PROMPT = '...'\n")
    assert "CREATE_ITEM_PROMPT" not in tools_shown()
    prompts.write_text("SEARCH_ITEMS_PROMPT = '...'\nCREATE_ITEM_PROMPT = '...'\n")
    assert "CREATE_ITEM_PROMPT" in tools_shown()  # not the cached answer of the run before
    prompts.unlink()
    assert "CREATE_ITEM_PROMPT" not in tools_shown()


NOQA_SOURCE = '''\
import os  # noqa: F401


def tool(path: str = "a#b") -> str:  # noqa: TL101 -- the default holds a '#'
    """Docstring that mentions noqa in prose."""
    text = ("first part"  # noqa: E501
            "second # part")
    label = f"{path}#{'x'}"  # NOQA: TL104
    café = "é#"  # noqa: TL103
    return text + label + café
'''


def test_noqa_comments_are_found_beside_strings_without_tokenizing_where_the_tree_tells(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import tokenize

    from toollint.context import ModuleContext, _comments_in

    tokenized: list[int] = []
    real = tokenize.generate_tokens

    def counting(readline):  # type: ignore[no-untyped-def]
        tokenized.append(1)
        return real(readline)

    monkeypatch.setattr(tokenize, "generate_tokens", counting)
    wanted = {n for n, line in enumerate(NOQA_SOURCE.splitlines(), 1) if "noqa" in line.lower()}
    ctx = ModuleContext("m.py", NOQA_SOURCE, ast.parse(NOQA_SOURCE))
    found = [c for c in ctx.noqa_comments if c.line in wanted]
    tokenized.clear()
    assert found == [c for c in _comments_in(NOQA_SOURCE) if c.line in wanted]
    assert [c.line for c in found] == [1, 4, 6, 8, 9]
    assert found[1].text == "# noqa: TL101 -- the default holds a '#'"
    assert found[4].col == 17  # in characters: `é` is two bytes in the columns of the tree

    simple = "import os  # noqa: F401\n\n\ndef f(s='#'):  # noqa: TL101\n    return s\n"
    tokenized.clear()
    ctx = ModuleContext("s.py", simple, ast.parse(simple))
    assert [(c.line, c.col) for c in ctx.noqa_comments] == [(1, 11), (4, 15)]
    assert not tokenized  # no string spans more than its own line: the tree told where each '#' is
