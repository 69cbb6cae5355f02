"""Discovery with no configuration, one fixture per pattern real agent-tool code uses. Each fixture
marks its tools on their lines (`# tool`, `# tool: writer`), what looks like a tool but is not
(`# rejected`), and the findings it must produce (`# expect: TL103`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from expectations import expected, expected_rejections, expected_tools

from toollint.engine import lint_paths
from toollint.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "discovery"
PATTERNS = [
    "toolkit_class.py",  # plain methods of a toolkit class
    "taubench_tool.py",  # Tool subclass with a static invoke(data, ...)
    "accessor.py",  # writes through get_current_context()
    "mcp_lowlevel.py",  # @server.call_tool() dispatcher nested in serve(), one tool per branch
    "fastmcp_factory.py",  # @mcp.tool() nested in a factory, state in the closure
    "registered.py",  # StructuredTool.from_function(func=f), FunctionTool(f), a benchmark's own decorator
    "mailkit/send.py",  # _run of a BaseTool subclass through an intermediate base in another module
    "helpers_pkg/tools.py",  # writes through helpers imported from another module; mutates_state=False
]


@pytest.mark.parametrize("name", PATTERNS)
def test_tools_writers_and_findings_without_configuration(name: str) -> None:
    path = FIXTURES / name
    source = path.read_text()
    (result,) = lint_paths([str(path)], Settings(select=["TL1"])).files
    assert {(t.line, t.writes) for t in result.tools or []} == expected_tools(source)
    assert {r.line for r in result.rejected} == expected_rejections(source)
    assert {(f.line, f.code) for f in result.reported} == expected(source)


def test_every_tool_says_why_it_was_taken_and_whether_it_writes() -> None:
    (result,) = lint_paths([str(FIXTURES / "helpers_pkg" / "tools.py")], Settings(select=["TL1"])).files
    why = {t.qualname: (t.found_by, t.why) for t in result.tools or []}
    assert why["BankTools.change_email"][1].startswith("writes `db.*.data[*][*]`")
    assert "through `update_record_in_db`" in why["BankTools.change_email"][1]
    assert why["BankTools.rewrite_context"][1] == "declared not to write by `mutates_state=False`"
    assert why["BankTools.log_verification"][0] == "decorated @is_tool('WRITE')"


def test_a_dispatcher_branch_is_a_tool_of_its_own() -> None:
    (result,) = lint_paths([str(FIXTURES / "mcp_lowlevel.py")], Settings(select=["TL1"])).files
    assert [t.qualname for t in result.tools or []] == [
        "serve.handle_call_tool[add_note]", "serve.handle_call_tool[count_notes]",
        "serve.handle_call_tool[clear_notes]"]


def test_the_rejection_says_which_base_did_not_resolve() -> None:
    (result,) = lint_paths([str(FIXTURES / "mailkit" / "send.py")], Settings(select=["TL1"])).files
    (rejected,) = result.rejected
    assert rejected.qualname == "Orphan._run" and "SomewhereElse" in rejected.reason


def test_tool_classes_and_state_roots_cover_what_no_pattern_guesses(tmp_path: Path) -> None:
    module = tmp_path / "shop.py"
    module.write_text(
        "class Register:\n"
        "    def ring_up(self, item: str, qty: int, clerk: str) -> str:\n"
        "        self.sales.append((item, qty))\n"
        "        return 'Sale recorded.'\n"
        "def refund(ledger, amount: float | None = None) -> str:\n"
        "    if amount:\n"
        "        ledger.balance -= amount\n"
        "    return 'Refunded.'\n"
    )
    plain = lint_paths([str(module)], Settings(select=["TL1"])).files[0]
    assert plain.tools == [] and plain.reported == []
    # confidence "low": refund's 0.0 is legal by its `float` type alone
    configured = Settings(
        select=["TL1"],
        tool_classes=["shop:Register"],
        tools=["shop:refund"],
        state_roots=["ledger"],
        confidence="low",
    )
    result = lint_paths([str(module)], configured).files[0]
    assert {(t.qualname, t.writes) for t in result.tools or []} == {
        ("Register.ring_up", True),
        ("refund", True),
    }
    assert {(f.line, f.code) for f in result.reported} == {(2, "TL103"), (6, "TL104"), (8, "TL101")}


def test_tool_classes_and_state_roots_are_read_from_pyproject(tmp_path: Path) -> None:
    from toollint.config import ConfigError, settings_from_table

    settings = settings_from_table({"tool-classes": ["shop:Register"], "state-roots": ["ledger"]},
                                   tmp_path / "pyproject.toml")
    assert settings.tool_classes == ["shop:Register"] and settings.state_roots == ["ledger"]
    with pytest.raises(ConfigError, match="'state-roots' in .* must be a list of strings"):
        settings_from_table({"state-roots": "ledger"}, tmp_path / "pyproject.toml")


def test_every_profile_folder_contributes_its_patterns() -> None:
    from toollint.analysis.families import all_patterns, builtin_family_patterns

    families = {p.family for p in builtin_family_patterns()}
    assert {"agentdojo", "tau2", "taubench", "toolsandbox", "mcp", "langchain", "crewai"} <= families
    compiled = all_patterns()
    assert "Depends" in compiled.state_annotations and "call_tool" in compiled.dispatchers
    assert (
        compiled.writer_keywords["mutates_state"] is True
        and compiled.writer_keywords["readOnlyHint"] is False
    )


def test_a_third_party_profile_adds_its_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint.analysis.families import plugin_family_patterns

    (tmp_path / "acme_profile.py").write_text(
        "from toollint.analysis.patterns import Patterns, ToolDecorator\n"
        "from toollint.profiles import Profile\n"
        "PROFILE = Profile('acme', patterns=Patterns(decorators=(ToolDecorator('acme_action'),)))\n"
    )
    dist = tmp_path / "acme_profile-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-profile\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[toollint.profiles]\nacme = acme_profile:PROFILE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (found,) = plugin_family_patterns(set())
    assert found.family == "acme" and found.decorators[0].name == "acme_action"
    assert plugin_family_patterns({"acme"}) == []  # a built-in of the same name wins


def test_a_helper_from_another_module_is_followed_but_its_lines_are_not_read_here(tmp_path: Path) -> None:
    """The write through an imported helper counts; TL102 does not read the helper's line numbers
    in the importing file (they are another file's)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(
        "def set_status(db, line_id, status):\n    db.lines[line_id].status = status\n"
    )
    (pkg / "tools.py").write_text(
        "# if line.status != 'active':\n"
        "#     raise ValueError('not active')\n"
        "from pkg.helpers import set_status\n"
        "def is_tool(kind):\n    return lambda f: f\n"
        "class Tools:\n"
        "    @is_tool('WRITE')\n"
        "    def suspend(self, line_id: str) -> str:\n"
        "        set_status(self.db, line_id, 'suspended')\n"
        "        return 'Suspended.'\n"
    )
    (result,) = lint_paths([str(pkg / "tools.py")], Settings(select=["TL1"])).files
    assert [(t.qualname, t.writes) for t in result.tools or []] == [("Tools.suspend", True)]
    assert result.reported == []


def test_a_configured_state_root_may_be_an_accessor_call(tmp_path: Path) -> None:
    module = tmp_path / "world.py"
    module.write_text(
        "def tool(f):\n    return f\n"
        "@tool\n"
        "def plant(tree: str, note: str) -> str:\n"
        "    fetch_world().trees.append(tree)\n"
        "    return 'Planted.'\n"
    )
    plain = lint_paths([str(module)], Settings(select=["TL1"])).files[0]
    assert [t.writes for t in plain.tools or []] == [False]
    configured = lint_paths([str(module)], Settings(select=["TL1"], state_roots=["fetch_world"])).files[0]
    assert [t.writes for t in configured.tools or []] == [True]
    assert {(f.line, f.code) for f in configured.reported} == {(4, "TL103")}
