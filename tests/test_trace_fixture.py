"""Score-at-risk tracing on the fixture benchmark (tests/fixtures/trace_bench): every basis, the
unresolved fallback, TL401, bad input, and the `toollint trace` command."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from profile_fixtures import registered

from toollint.config import resolve_settings
from toollint.profiles import Profile
from toollint.profiles.agentdojo.tasks import agentdojo_tasks
from toollint.settings import TraceSettings
from toollint.trace.cli import main
from toollint.trace.ledger import Defect, Ledger, trace
from toollint.trace.readsites import ModuleCache, ReadSite, classify, parse_deepdiff_path
from toollint.trace.tasks import json_tasks, tasks_from_config, toolkit_methods

BENCH = Path(__file__).parent / "fixtures" / "trace_bench"
FIELD = "db.lines[*].data_balance"
DEFECT = Defect(
    "refuel_data:pre.line_active", "toolkit:TelecomTools.refuel_data", "pre.line_active", (FIELD,)
)


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    settings = resolve_settings([str(BENCH)], config_file=str(BENCH / "pyproject.toml"))
    tasks = tasks_from_config(settings.trace, BENCH)
    return trace([DEFECT], tasks, ModuleCache())


def test_ledger_matches_the_expected_rows(ledger: Ledger) -> None:
    assert ledger.csv_text() == (BENCH / "expected_ledger.csv").read_text()


def test_every_basis_is_counted_separately(ledger: Ledger) -> None:
    totals = ledger.totals(DEFECT.id)
    assert totals == {"exact_field": 4, "whole_state_hash": 2, "collection_only": 1, "unresolved": 5,
                      "exposed": 12, "traced": 17}


def test_tasks_reading_other_fields_or_only_the_agent_record_are_not_exposed(ledger: Ledger) -> None:
    exposed = {r.task for r in ledger.rows}
    # other_field reads status; not_counted's assertion is outside its reward_basis; actions_only and
    # cfg_msg read the agent's calls; cfg_answer reads the final message.
    assert exposed.isdisjoint({"other_field", "not_counted", "actions_only", "cfg_msg", "cfg_answer"})


def test_ungrounded_oracles_are_the_graders_reading_only_calls(ledger: Ledger) -> None:
    found = {(f.code, f.properties["task"]) for f in ledger.ungrounded}
    assert found == {("TL401", "actions_only"), ("TL401", "cfg_msg")}
    msg = next(f for f in ledger.ungrounded if f.properties["task"] == "cfg_msg")
    assert (msg.path, msg.line) == ("graders.py", 17)


def test_bad_input_gives_one_clear_line_each_and_the_rest_is_traced(ledger: Ledger) -> None:
    problems = [str(p) for p in ledger.problems]
    assert "broken_tasks.json:3: task file is not valid JSON: Expecting ',' delimiter" in problems
    assert ("tasks.json:10: task missing_grader: env assertion 'assert_no_such_thing' is not a method of any "
            "toolkit class") in problems
    assert any(p.startswith("toolkit.py:54: task cycle: grader TelecomTools.assert_cycle calls helpers in a "
                            "cycle (_ping (helper cycle))") for p in problems)
    assert "graders.py:1: task cfg_missing: grader nope: no function 'nope'" in problems
    assert all("\n" not in p for p in problems)
    # ...and the tasks around them were traced: the missing grader and the cycle are exposed as unresolved.
    rows = {r.task: r.basis for r in ledger.rows}
    assert rows["missing_grader"] == rows["cycle"] == rows["cfg_missing"] == "unresolved"
    assert rows["exact"] == "exact_field"


def test_a_grader_file_that_does_not_parse_is_reported_and_its_task_kept(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text("class T:\n    def assert_x(self:\n        pass\n")
    (tmp_path / "tasks.json").write_text(json.dumps([
        {"id": "a", "evaluation_criteria": {"env_assertions": [{"func_name": "assert_x"}]}},
        {"id": "b", "evaluation_criteria": {"reward_basis": ["DB"]}},
    ]))
    problems: list = []
    methods = toolkit_methods([tmp_path / "tools.py"], ModuleCache(), problems, tmp_path)
    tasks = json_tasks([tmp_path / "tasks.json"], methods, tmp_path)
    tasks.problems += problems
    ledger = trace([DEFECT], tasks)
    assert sorted(str(p) for p in ledger.problems) == [
        "tasks.json:1: task a: env assertion 'assert_x' is not a method of any toolkit class",
        "tools.py:2: toolkit file skipped: grader file does not parse: '(' was never closed",
    ]
    assert {r.task: r.basis for r in ledger.rows} == {"a": "unresolved", "b": "whole_state_hash"}


def test_an_agentdojo_task_file_that_does_not_parse_is_reported_and_other_suites_traced(
    tmp_path: Path,
) -> None:
    suites = tmp_path / "agentdojo" / "default_suites"
    (suites / "v1" / "banking").mkdir(parents=True)
    (suites / "v1" / "slack").mkdir(parents=True)
    (suites / "v1" / "banking" / "user_tasks.py").write_text("class UserTask0(:\n")
    (suites / "v1" / "slack" / "user_tasks.py").write_text(
        "@task_suite.register_user_task\n"
        "class UserTask0(SlackUserTask):\n"
        "    def utility(self, model_output, pre_environment, post_environment, strict=True):\n"
        "        return post_environment.db.lines['L1'].data_balance == 1\n"
    )
    tasks = agentdojo_tasks(tmp_path / "agentdojo")
    assert [str(p) for p in tasks.problems] == [
        "agentdojo/default_suites/v1/banking/user_tasks.py:1: task file does not parse: invalid syntax"]
    ledger = trace([DEFECT], tasks)
    assert [(r.task, r.basis) for r in ledger.rows] == [("slack/user_task_0", "exact_field")]


def test_a_task_class_without_a_grader_is_traced_as_unresolved(tmp_path: Path) -> None:
    suite = tmp_path / "agentdojo" / "default_suites" / "v1" / "banking"
    suite.mkdir(parents=True)
    (suite / "user_tasks.py").write_text(
        "@task_suite.register_user_task\nclass UserTask3(BankingUserTask):\n    PROMPT = 'x'\n")
    ledger = trace([DEFECT], agentdojo_tasks(tmp_path / "agentdojo"))
    assert [(r.task, r.basis) for r in ledger.rows] == [("banking/user_task_3", "unresolved")]
    assert [str(p) for p in ledger.problems] == [
        ("agentdojo/default_suites/v1/banking/user_tasks.py:1: task banking/user_task_3: grader "
        "UserTask3.utility: no method 'utility' on class 'UserTask3'")]


@pytest.mark.parametrize(("text", "path"), [
    ("root.calendar.events['7'].start_time", "calendar.events[*].start_time"),
    ("root.inbox.emails['{}']", "inbox.emails[*]"),
    ("root.db.lines['L1'].data_balance", "db.lines[*].data_balance"),
    ("root['users'][3].name", "[*][*].name"),
    ("root", None),
    ("rooted.thing", None),
    ("root.a b", None),
])
def test_deepdiff_paths_become_canonical_paths(text: str, path: str | None) -> None:
    assert parse_deepdiff_path(text) == path


@pytest.mark.parametrize(("kind", "path", "how", "detail", "basis"), [
    ("state", "db.lines[*].data_balance", "read", "", "exact_field"),
    ("state", "db.lines[*].data_balance.gb", "read", "", "exact_field"),
    ("state", "db.lines", "read", "", "collection_only"),
    ("state", "db.lines[*]", "read", "", "collection_only"),
    ("state", "db.lines[*].status", "read", "", None),
    ("state", "db.line", "read", "", None),  # a name prefix is not a path prefix
    ("opaque", "", "compare", "", "whole_state_hash"),
    ("opaque", "", "call", "DeepDiff", "whole_state_hash"),
    ("opaque", "", "call", "check_new_email", "unresolved"),
    ("opaque", "db.lines", "call", "audit", "unresolved"),
    ("opaque", "db.lines", "compare", "", "unresolved"),
    ("opaque", "@pre", "compare", "", None),  # the state before the run: the tool did not write it
    ("state", "@pre.db.lines[*].data_balance", "read", "", None),
    ("record", "", "record", "traces", None),
    ("whole_state", "", "reward_basis", "DB", "whole_state_hash"),
    ("missing", "", "missing", "", "unresolved"),
    ("state", "db.lines.L1.data_balance", "dotted", "", "exact_field"),
    ("state", "lines.*.data_balance", "dotted", "", "exact_field"),  # relative to the db object
    ("state", "db.lines", "dotted", "", "collection_only"),
    ("state", "db.lines.L1.status", "dotted", "", None),
    ("state", "users.U1.data_balance", "dotted", "", None),
])
def test_classify(kind: str, path: str, how: str, detail: str, basis: str | None) -> None:
    site = ReadSite(kind, path, "f.py", 1, how=how, detail=detail)  # type: ignore[arg-type]
    assert classify(site, FIELD) == basis


def test_a_whole_state_diff_excluding_the_field_does_not_expose_it() -> None:
    site = ReadSite("opaque", "", "f.py", 1, how="call", detail="WorkspaceDeepDiff", excluded=("db.lines",))
    assert classify(site, FIELD) is None
    assert classify(site, "db.users[*].name") == "whole_state_hash"


def test_cli_writes_ledger_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([
        "--tasks", str(BENCH / "tasks.json"), "--toolkit", str(BENCH / "toolkit.py"),
        "--grader", f"cfg_diff={BENCH / 'graders.py'}:grade_refuel_diff",
        "--tool", "refuel_data", "--clause", "pre.line_active", "--field", FIELD,
        "--ledger", str(tmp_path / "ledger.csv"), "--report", str(tmp_path / "report.html"),
    ])
    assert code == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0] == ("refuel_data:pre.line_active: 9 of 12 tasks exposed (3 exact_field, "
                                       "1 whole_state_hash, 1 collection_only, 4 unresolved)")
    assert "toollint trace: warning: " in out.err and "assert_no_such_thing" in out.err
    rows = list(csv.DictReader((tmp_path / "ledger.csv").open()))
    assert len(rows) == 9 and {r["basis"] for r in rows} == {"exact_field", "whole_state_hash",
                                                              "collection_only", "unresolved"}
    data = json.loads((tmp_path / "ledger.json").read_text())
    assert data["totals"]["exposed"] == 9 and data["defects"][0]["fields"] == [FIELD]
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--tool", "x"],
            "no tasks: give --benchmark NAME --tasks DIR, --tasks FILE or --grader ID=FILE:FUNC",
        ),
        (["--grader", "nonsense"], "--grader 'nonsense' is not ID=FILE:FUNCTION"),
        (["--grader", "a=g.py:f"], "give --tool and --field, or --contract and --clause"),
        (
            ["--agentdojo", "/nonexistent", "--tool", "t", "--field", "f"],
            "/nonexistent: not an agentdojo package (no default_suites/)",
        ),
        (
            ["--benchmark", "agentdojo", "--tasks", "/nonexistent", "--tool", "t", "--field", "f"],
            "/nonexistent: not an agentdojo package (no default_suites/)",
        ),
        (
            ["--benchmark", "agentdjo", "--tasks", ".", "--tool", "t", "--field", "f"],
            (
                "--benchmark: unknown benchmark 'agentdjo'; did you mean 'agentdojo'? "
                "(profiles: agentdojo, tau2, medagentbench, toolsandbox, taubench, bfcl)"
            ),
        ),
        (
            ["--benchmark", "agentdojo", "--tool", "t", "--field", "f"],
            "--benchmark agentdojo needs --tasks PATH (where its tasks are)",
        ),
    ],
)
def test_cli_usage_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == f"toollint trace: error: {message}\n"


def _agentdojo_tree(root: Path) -> Path:
    suite = root / "agentdojo" / "default_suites" / "v1" / "banking"
    suite.mkdir(parents=True)
    (suite / "user_tasks.py").write_text(
        "@task_suite.register_user_task\n"
        "class UserTask0(BankingUserTask):\n"
        "    def utility(self, model_output, pre_environment, post_environment, strict=True):\n"
        "        return post_environment.db.lines['L1'].data_balance == 1\n")
    return root / "agentdojo"


def test_a_profiles_tasks_by_benchmark_or_by_its_own_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = _agentdojo_tree(tmp_path)
    common = ["--tool", "refuel_data", "--field", FIELD]
    assert main(["--benchmark", "agentdojo", "--tasks", str(package), *common]) == 0
    by_benchmark = capsys.readouterr().out
    assert main(["--agentdojo", str(package), *common]) == 0
    assert (
        capsys.readouterr().out == by_benchmark == "refuel_data:defect: 1 of 1 tasks exposed (1 exact_field, "
        "0 whole_state_hash, 0 collection_only, 0 unresolved)\n"
    )


def test_a_profile_without_a_task_enumerator_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with registered(monkeypatch, Profile("bare")):
        assert main(["--benchmark", "bare", "--tasks", ".", "--tool", "t", "--field", "f"]) == 2
    assert capsys.readouterr().err == ("toollint trace: error: profile 'bare' has no task enumerator; give "
                                       "--tasks FILE or --grader\n")


def test_config_names_a_profiles_package(tmp_path: Path) -> None:
    package = _agentdojo_tree(tmp_path)
    # the profile: `benchmark`, else the one whose package the directory is
    for found in (tasks_from_config(TraceSettings(package=str(package)), tmp_path),
                  tasks_from_config(TraceSettings(package="agentdojo"), tmp_path, benchmark="agentdojo")):
        assert [t.id for t in found.tasks] == ["banking/user_task_0"] and found.problems == []

    def problems(config: TraceSettings, **kw: str) -> list[str]:
        return [str(p) for p in tasks_from_config(config, tmp_path, **kw).problems]

    assert problems(TraceSettings(package="nowhere"), benchmark="agentdojo") == [
        f"[tool.toollint.trace]:1: {tmp_path / 'nowhere'}: not an agentdojo package (no default_suites/)"]
    assert problems(TraceSettings(package="nowhere")) == [
        ("[tool.toollint.trace]:1: package = 'nowhere': say which benchmark it is (benchmark = \"NAME\" in "
        "[tool.toollint])")]
    assert problems(TraceSettings(package=True), benchmark="agentdjo") == [
        (
            "[tool.toollint.trace]:1: unknown benchmark 'agentdjo'; did you mean 'agentdojo'? "
            "(profiles: agentdojo, tau2, medagentbench, toolsandbox, taubench, bfcl)"
        )
    ]
    assert problems(TraceSettings(package=True), benchmark="agentdojo", python="/nonexistent/python") == [
        (
            "[tool.toollint.trace]:1: package = true: "
            "could not run /nonexistent/python: No such file or directory"
        )
    ]
    assert problems(TraceSettings(package=True), benchmark="agentdojo") == [
        (
            "[tool.toollint.trace]:1: package = true needs the benchmark's python "
            "([tool.toollint.confirm] python) "
            "to find the package"
        )
    ]


# --- collection membership -------------------------------------------------------------------------

MEMBERSHIP_TOOLS = '''\
from tau2.environment.toolkit import ToolKitBase, ToolType, is_tool


class Shop(ToolKitBase):
    def _bill(self, customer_id: str, amount: float) -> None:
        self.db.bills.append({"customer": customer_id, "amount": amount})  # only membership

    @is_tool(ToolType.WRITE)
    def charge(self, customer_id: str, order_id: str, amount: float) -> str:
        self._bill(customer_id, amount)
        self.db.orders[order_id].paid = True  # a field
        self.db.log.insert(0, order_id)  # membership
        del self.db.carts[customer_id]  # membership
        self.db.tags.pop(order_id)  # membership
        self.db.audit.extend([order_id])  # membership ...
        self.db.audit = []  # ... and reassigned whole: a field after all
        return "charged"
'''


def test_adding_or_removing_elements_writes_the_collections_membership(tmp_path: Path) -> None:
    from toollint.trace.ledger import tool_writes

    (tmp_path / "shop.py").write_text(MEMBERSHIP_TOOLS)
    writes = tool_writes(tmp_path / "shop.py", "Shop.charge")
    assert writes.paths == {"db.bills", "db.orders[*].paid", "db.log", "db.carts", "db.tags", "db.audit"}
    assert writes.collections == {"db.bills", "db.log", "db.carts", "db.tags"}
    assert writes.line == 9


@pytest.mark.parametrize(("kind", "path", "how", "basis"), [
    ("state", "db.bills", "read", "collection_only"),  # len(), a search, a listing
    ("state", "db.bills[*]", "read", "collection_only"),
    ("state", "db.bills[*].status", "read", "collection_only"),  # a field of a found element
    ("opaque", "db.bills", "compare", "collection_only"),
    ("opaque", "db.bills", "call", "unresolved"),  # handed to code toollint cannot follow
    ("state", "db", "read", "collection_only"),
    ("opaque", "", "compare", "whole_state_hash"),
    ("state", "db.lines", "read", None),
])
def test_classify_a_collections_membership(kind: str, path: str, how: str, basis: str | None) -> None:
    site = ReadSite(kind, path, "f.py", 1, how=how)  # type: ignore[arg-type]
    assert classify(site, "db.bills", collection=True) == basis


def test_a_collection_write_keeps_only_the_collection_of_an_effect_clauses_paths() -> None:
    from types import SimpleNamespace

    from toollint.contracts.host.predicate import compile_predicate

    from toollint.trace.ledger import ToolWrites, defect_from_clause

    clause = SimpleNamespace(id="eff.billed", kind="eff", predicate=compile_predicate(
        "len(post.db.bills) == len(pre.db.bills) + 1 and any(b.status == 'Draft' for b in post.db.bills)"))
    writes = ToolWrites(frozenset({"db.bills"}), frozenset({"db.bills"}))
    defect = defect_from_clause("d", "t", clause, writes)
    # `status` is read to find the bill; adding a bill writes no status of any other
    assert defect.fields == ("db.bills",) and defect.collections == ("db.bills",)


def test_state_roots_put_code_paths_in_the_snapshots_form() -> None:
    from toollint.trace.readsites import StateRoots

    agent = StateRoots("agent_db", (("db", "agent_db"),))
    assert agent.apply("db.lines[*].x") == "agent_db.lines[*].x"
    assert agent.apply("") == "agent_db"  # the toolkit used whole
    assert agent.apply("device.sim") == "agent_db.device.sim"  # a property of the toolkit over its db
    assert agent.apply("@pre.db.lines") == "@pre.agent_db.lines"
    assert agent.rewrite("db.lines") == "agent_db.lines"
    assert agent.rewrite("lines[*].x") == "lines[*].x"  # not the code's form: left for the tracer to report
    site = agent.site(ReadSite("opaque", "", "f.py", 3, how="call", detail="audit"))
    assert (site.path, site.scope) == ("agent_db", "agent_db")
    assert classify(site, "user_db.device.on") is None  # the agent's toolkit cannot see the user's state
    assert classify(site, "agent_db.lines[*].x") == "unresolved"
