"""Dispatch shapes (`toollint.analysis.dispatch`): a request-kind dispatcher is one tool per branch,
a reply sent through a call is that branch's reply, and a call that reaches its target by name is
resolved. Fixtures mark their tools (`# tool`, `# tool: writer`) and findings (`# expect:`) on the
lines; the real benchmarks are read from the shared snapshots (skipped with a reason without them)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from expectations import expected, expected_tools

from toollint.analysis import analyze_module
from toollint.analysis.dispatch import RegistryTarget, kind_branches, registry_target, unused_locals
from toollint.engine import lint_paths, lint_source
from toollint.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "graders"
BENCHMARKS = Path(os.environ.get("TOOLLINT_BENCHMARKS") or "/work/shared/benchmarks")
MEDAGENTBENCH = BENCHMARKS / "medagentbench"
TOOLSANDBOX = BENCHMARKS / "mm-toolsandbox" / "mmtoolsandbox" / "tools" / "mini"


@pytest.mark.parametrize("name", ["task_loop.py", "registry/shop/tools/social.py"])
def test_tools_and_findings_match_the_annotations(name: str) -> None:
    path = FIXTURES / name
    source = path.read_text()
    (result,) = lint_paths([str(path)], Settings(select=["TL1"])).files
    assert {(t.line, t.writes) for t in result.tools or []} == expected_tools(source)
    assert {(f.line, f.code) for f in result.reported} == expected(source)


def test_each_verb_branch_is_a_tool_and_says_how_it_was_found() -> None:
    (result,) = lint_paths([str(FIXTURES / "task_loop.py")], Settings(select=["TL1"])).files
    tools = {t.qualname: t for t in result.tools or []}
    assert list(tools) == ["Episode.run[GET]", "Episode.run[POST]", "Episode.run[PUT]"]
    assert (
        tools["Episode.run[POST]"].why
        == "declared a writer by HTTP verb POST; writes nothing the analysis sees"
    )
    assert tools["Episode.run[GET]"].why == "declared not to write by HTTP verb GET"
    assert tools["Episode.run[PUT]"].found_by == "branch `PUT` of request dispatcher `run`"


def test_the_reply_through_a_call_is_the_branch_reply_and_the_dropped_payload_is_named() -> None:
    (finding,) = lint_paths([str(FIXTURES / "task_loop.py")], Settings(select=["TL101"])).files[0].reported
    assert finding.message.startswith(
        "`run[POST]` replies through `session.inject(...)` with a literal success"
    )
    assert "nothing is written at all; `payload` (line 20) is assigned and never used" in finding.message


def test_a_single_verb_test_or_a_tool_that_branches_on_verbs_stays_whole() -> None:
    one_verb = ("def route(request, db):\n    if request.method == 'POST':\n        db.save(request.json)\n"
                "        return 'saved'\n    return 'no'\n")
    assert analyze_module(ast.parse(one_verb)).tools == []
    tool = ("from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n@mcp.tool()\n"
            "def call(method: str, url: str) -> str:\n    if method == 'GET':\n        return 'a'\n"
            "    elif method == 'POST':\n        return 'b'\n    return 'c'\n")
    assert [t.qualname for t in analyze_module(ast.parse(tool)).tools] == ["call"]


def test_kind_tests_see_through_normalising_calls_and_two_spellings() -> None:
    fn = ast.parse(
        "def f(r):\n"
        "    if r.strip().upper().startswith('GET') or r.strip().upper().startswith('get'):\n        pass\n"
        "    elif 'POST' == r.strip().upper():\n        pass\n"
        "    elif r == 'FINISH':\n        pass\n"
    ).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert [(b.kind, b.label) for b in kind_branches(fn)] == [("GET", "GET"), ("POST", "POST")]
    assert [b.label for b in kind_branches(fn, declared=True)] == ["GET", "POST", "FINISH"]


def test_registry_targets_by_name() -> None:
    tree = ast.parse(
        "import shop.backend.a as m\nREG = {'add': add}\n"
        "def _get(name):\n    return getattr(m, name)\n"
        "def _lookup(name):\n    return REG.get(name)\n"
        "x = _get('a_create')(1)\ny = REG['add'](2)\nz = getattr(m, f'send_{k}_msg')()\nw = m.delete_all()\n"
        "v = _lookup('add')(3)\nu = _get(variable)(4)\n"
    )
    from toollint.analysis.dispatch import local_modules, module_dicts

    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    calls = [n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)]
    found = [registry_target(c, functions, module_dicts(tree), local_modules(tree.body)) for c in calls]
    assert found == [
        RegistryTarget("shop.backend.a", "a_create", True),
        RegistryTarget("REG", "add", False, "add"),
        RegistryTarget("shop.backend.a", "send_{}_msg", True),
        RegistryTarget("shop.backend.a", "delete_all", True),
        RegistryTarget("REG", "add", False, "add"),
        None,  # a computed name is not resolved
    ]


def test_unused_locals_are_stores_never_loaded() -> None:
    fn = ast.parse(
        "def f(x):\n    a = 1\n    b = a\n    for i in x:\n        pass\n    _c = 2\n    return x\n"
    ).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert [n.id for n in unused_locals(fn)] == ["b"]


def test_a_dict_registry_in_the_module_is_followed_as_a_helper() -> None:
    src = ("from x import register_as_tool\nSTORE = {}\n"
           "def _put(key, value):\n    STORE[key] = value\n"
           "OPS = {'put': _put}\n"
           "@register_as_tool()\ndef op(key: str, value: str, echo: str) -> str:\n"
           "    OPS['put'](key, value)\n    return f'stored {echo}'\n")
    # confidence "low": `echo` only echoed, and no state field is named so (the reach is the point here)
    result = lint_source(src, "ops.py", Settings(select=["TL103"], confidence="low"))
    assert [(t.qualname, t.writes) for t in result.tools or []] == [("op", True)]
    assert [f.properties["param"] for f in result.reported] == ["echo"]


# --- the real benchmarks ----------------------------------------------------------------------------


def test_medagentbench_task_loop_post_branch_is_a_phantom_write() -> None:
    if not MEDAGENTBENCH.is_dir():
        pytest.skip(f"no MedAgentBench snapshot at {MEDAGENTBENCH} (set TOOLLINT_BENCHMARKS)")
    result = lint_paths([str(MEDAGENTBENCH)], Settings(select=["TL1"]))
    tools = {t.qualname: t.writes for r in result.files for t in r.tools or []}
    assert tools == {"MedAgentBench.start_sample[GET]": False, "MedAgentBench.start_sample[POST]": True,
                     "MedAgentBench.start_sample[FINISH]": False}
    (finding,) = result.reported
    assert finding.code == "TL101" and finding.tool == "MedAgentBench.start_sample[POST]"
    assert Path(finding.path).name == "__init__.py" and finding.line == 91
    assert "`session.inject(...)`" in finding.message and "`payload` (line 87) is assigned and never used" \
        in finding.message


def test_mm_toolsandbox_venmo_social_drops_sort_by() -> None:
    if not TOOLSANDBOX.is_dir():
        pytest.skip(f"no MM-ToolSandbox snapshot at {TOOLSANDBOX} (set TOOLLINT_BENCHMARKS)")
    result = lint_paths([str(TOOLSANDBOX)], Settings(select=["TL1"]))
    writers = {t.qualname for r in result.files for t in r.writers}
    assert {"venmo_social", "venmo_transact", "alarms", "file_system", "reminders"} <= writers
    assert [(Path(f.path).name, f.code, f.tool, f.properties.get("param")) for f in result.reported] == [
        ("venmo.py", "TL103", "venmo_social", "sort_by")]
