"""Graders as a target: discovery (profile patterns and `graders = [...]`), the basis of each grader
(reads state / reads the record / gated on state but grades the write from the record), TL401-TL405
on annotated fixtures (`# expect: TL401` on the lines), the tracer asking the same analysis, and the
real benchmarks (skipped with a one-line reason where a snapshot is absent)."""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest
from expectations import expected

from toollint.analysis import analyze_module
from toollint.analysis.grading import decide_basis, names_write, url_resource
from toollint.cli import main
from toollint.config import ConfigError, resolve_settings
from toollint.engine import lint_paths, lint_source
from toollint.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "graders"
BENCH = Path(__file__).resolve().parents[1] / "bench"
BENCHMARKS = Path(os.environ.get("TOOLLINT_BENCHMARKS") or "/work/shared/benchmarks")
MEDAGENTBENCH = BENCHMARKS / "medagentbench"
TAU2 = Path(os.environ.get("TOOLLINT_TAU2") or BENCHMARKS / "tau2-bench")


@pytest.mark.parametrize("name", ["record_graders.py", "fhir_graders.py", "grader_smells.py",
                                  "static_companions.py"])
def test_findings_match_the_annotations(name: str) -> None:
    path = FIXTURES / name
    source = path.read_text()
    (result,) = lint_paths([str(path)], Settings(select=["TL4"])).files
    assert {(f.line, f.code) for f in result.reported} == expected(source)


def test_a_finding_in_a_helper_of_another_module_is_reported_at_the_graders_call() -> None:
    package = FIXTURES / "elsewhere"
    result = lint_paths([str(package)], Settings(select=["TL4"]))
    for file in result.files:
        assert {(f.line, f.code) for f in file.reported} == expected(Path(file.path).read_text()), file.path
    (finding,) = result.reported
    assert Path(finding.path).name == "checker.py" and finding.message.endswith(", at runner.py:9")
    assert [(Path(r.path).name, r.line) for r in finding.related] == [("runner.py", 9)]


def _facts(path: Path) -> dict[str, tuple[str, bool]]:
    (result,) = lint_paths([str(path)], Settings(select=["TL4"])).files
    return {g.qualname: (g.basis, g.credits_write) for g in result.graders or []}


def test_every_grader_gets_a_basis() -> None:
    assert _facts(FIXTURES / "fhir_graders.py") == {
        "task1": ("reads_record", True), "task2": ("gated_on_state", True), "task3": ("reads_state", True),
        "task4": ("reads_state", False)}
    facts = _facts(FIXTURES / "record_graders.py")
    assert facts["UserTask1.utility_from_traces"] == ("reads_record", True)
    assert facts["UserTask3.utility_from_traces"] == ("reads_state", True)  # read back: silent
    assert facts["UserTask4.utility_from_traces"] == (
        "no_state",
        False,
    )  # a write in the record only fails it
    assert facts["UserTask5.utility"] == ("reads_state", False)
    assert "UserTask8.utility" not in facts  # abstract: raises NotImplementedError
    assert "UserTask5.ground_truth" not in facts


def test_the_finding_carries_the_basis_and_points_at_the_evidence() -> None:
    (result,) = lint_paths([str(FIXTURES / "fhir_graders.py")], Settings(select=["TL401"])).files
    by_grader = {f.properties["grader"]: f for f in result.reported}
    gated = by_grader["task2"]
    assert gated.properties["basis"] == "gated_on_state"
    assert gated.properties["targets"] == ["MedicationRequest"]
    assert gated.properties["state_reads"] == ["GET Observation"]
    assert (
        "reads live state (GET Observation, line 44) only to decide whether a write is due" in gated.message
    )
    assert "a POST request `posts_of` finds in it, line 17" in gated.message
    assert [r.line for r in gated.related][:2] == [17, 18]  # the POST test and the 'accepted' reply test
    assert by_grader["task1"].properties["basis"] == "reads_record"


def test_show_graders_lists_each_grader_with_its_basis(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--isolated", "--show-graders", "--exit-zero", str(FIXTURES / "fhir_graders.py")])
    assert code == 0
    err = capsys.readouterr().err
    assert "fhir_graders.py:31: task1 [reads_record] TL401 reads the record; credits a POST request" in err
    assert "fhir_graders.py:55: task3 [reads_state] reads state; credits a POST request" in err
    assert "task4 [reads_state] reads state; fails when the record shows a write; reads GET Patient" in err
    assert "4 graders (2 ungrounded)" in err


def test_a_write_the_run_undoes_is_graded_from_the_record_without_a_finding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """invite_user_to_slack then remove_user_from_slack: the final state cannot show the attack, so the
    record is the right basis; the same calls without the removal are still flagged."""
    facts = _facts(FIXTURES / "record_graders.py")
    assert facts["InjectionTask2.security_from_traces"] == ("undone_in_run", True)
    assert facts["InjectionTask3.security_from_traces"] == ("reads_record", True)
    assert facts["InjectionTask1.security_from_traces"] == ("reads_record", True)  # different nouns: no undo
    code = main(["check", "--isolated", "--show-graders", "--exit-zero", str(FIXTURES / "record_graders.py")])
    assert code == 0
    err = capsys.readouterr().err
    assert ("InjectionTask2.security_from_traces [undone_in_run] grades a write the run undoes, which only "
            "the record can show") in err


def test_undoes_pairs_verbs_on_the_same_nouns() -> None:
    from toollint.analysis.vocabulary import undoes

    assert undoes("remove_user_from_slack", "invite_user_to_slack")
    assert undoes("cancel_reservation", "book_reservation")
    assert not undoes("remove_user_from_slack", "add_user_to_channel")
    assert not undoes("invite_user_to_slack", "invite_user_to_slack")
    assert not undoes("send_money", "remove_user_from_slack")


def test_configured_graders_take_roles_from_parameter_names(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toollint]\ngraders = ["checks:grade", "checks:Judge.score"]\n'
    )
    (tmp_path / "checks.py").write_text(
        "def grade(task, messages):\n"
        "    return any(m['name'] == 'create_order' for m in messages)\n"
        "class Judge:\n"
        "    def score(self, task, messages, env):\n"
        "        if not any(m['name'] == 'create_order' for m in messages):\n"
        "            return False\n"
        "        return env.orders[-1].sku == task.sku\n"
        "def not_configured(task, messages):\n"
        "    return any(m['name'] == 'create_order' for m in messages)\n")
    settings = resolve_settings([str(tmp_path)])
    (result,) = lint_paths([str(tmp_path / "checks.py")], settings).files
    assert {g.qualname: g.basis for g in result.graders or []} == {
        "grade": "reads_record",
        "Judge.score": "reads_state",
    }
    assert [(f.code, f.line) for f in result.reported] == [("TL401", 2)]


def test_a_configured_graders_longer_names_take_roles_from_their_words() -> None:
    from toollint.analysis.graders import roles_by_name

    fn = ast.parse(
        "def check(multi_turn_model_result_list_decoded, multi_turn_ground_truth_list, agent_response,\n"
        "          expected_output, possible_answer, test_entry, final_state):\n    pass\n"
    ).body[0]
    assert isinstance(fn, ast.FunctionDef)
    roles, _ = roles_by_name(fn)
    assert roles == {
        "multi_turn_model_result_list_decoded": "record",
        "agent_response": "record",
        "final_state": "state",
    }  # gold (`expected_output`, `possible_answer`) and task data: none


@pytest.mark.parametrize("value, message", [
    ('"checks:grade"', "'graders' in {} [tool.toollint] must be a list of strings, not a string"),
    ('["checks.grade"]', ("'graders' in {} [tool.toollint] entries must look like \"pkg.module:function\" or "
                         "\"pkg.module:Class.method\", not 'checks.grade' (got ['checks.grade'])")),
])
def test_a_bad_graders_entry_is_one_clear_line(tmp_path: Path, value: str, message: str) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(f"[tool.toollint]\ngraders = {value}\n")
    with pytest.raises(ConfigError) as info:
        resolve_settings([str(tmp_path)])
    assert str(info.value) == message.format(config)


def test_a_huge_grader_is_analysed_without_a_crash() -> None:
    chain = " + ".join(["x"] * 2500)  # a 2500-term expression: nothing here recurses on its length
    src = ("class UserTask1(BaseUserTask):\n"
           "    def utility_from_traces(self, model_output, pre_environment, post_environment, traces):\n"
           f"        return any(c.function == 'send_money' for c in traces) and model_output == {chain}\n")
    result = lint_source(src, "huge.py", Settings(select=["TL4", "TL9"]))
    assert [f.code for f in result.reported] == ["TL401"]
    assert [g.basis for g in result.graders or []] == ["reads_record"]


def test_constants_that_name_a_write() -> None:
    assert [names_write(t) for t in ("POST", "POST ", "GET", "send_money", "get_balance", "Email sent",
                                     "Invalid request", "post")] == \
        ["verb", "verb", None, "tool", None, "reply", None, None]
    assert url_resource("{}Observation?patient={}&code=MG") == "Observation"
    assert url_resource("https://h/api/users/{}/orders?x=1") == "orders"
    assert decide_basis(True, ["Observation"], frozenset({"MedicationRequest"})) == "gated_on_state"
    assert decide_basis(True, ["MedicationRequest"], frozenset({"MedicationRequest"})) == "reads_state"
    assert decide_basis(True, ["Observation", None], frozenset({"MedicationRequest"})) == "reads_state"
    assert decide_basis(True, [], frozenset()) == "reads_record"
    assert decide_basis(False, [], frozenset()) == "no_state"


def test_grader_discovery_is_cheap_where_there_are_no_graders() -> None:
    analysis = analyze_module(ast.parse("def f(x):\n    return x\n"))
    assert analysis.graders == [] and analysis.grader_facts() == []


# --- the tracer asks the same analysis ----------------------------------------------------------------


def test_the_tracer_reports_tl401_exactly_where_the_rule_does(tmp_path: Path) -> None:
    from toollint.trace.ledger import trace
    from toollint.trace.tasks import tasks_from_config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.toollint]\ngraders = ["fhir_graders:task1", "fhir_graders:task3"]\n'
        '[tool.toollint.trace.tasks]\nt1 = "fhir_graders.py:task1"\nt3 = "fhir_graders.py:task3"\n'
        '[tool.toollint.trace]\nrecord-params = ["results"]\n')
    (tmp_path / "fhir_graders.py").write_text((FIXTURES / "fhir_graders.py").read_text())
    settings = resolve_settings([str(tmp_path)])
    ledger = trace([], tasks_from_config(settings.trace, tmp_path))
    traced = {(f.properties["task"], f.line, f.properties["basis"]) for f in ledger.ungrounded}
    (result,) = lint_paths([str(tmp_path / "fhir_graders.py")], settings).files
    static = {
        (f.properties["grader"], f.line, f.properties["basis"]) for f in result.reported if f.code == "TL401"
    }
    assert traced == {("t1", 34, "reads_record")}  # t3 reads the order back: silent in both
    assert ("task1", 34, "reads_record") in static and not any(g == "task3" for g, _, _ in static)


# --- the real benchmarks ----------------------------------------------------------------------------


def _bench() -> object:
    sys.path.insert(0, str(BENCH))
    import graders as bench_graders  # bench/ is not a package

    return bench_graders


def test_medagentbench_check_reports_the_phantom_post_and_the_write_graders(
        capsys: pytest.CaptureFixture[str]) -> None:
    if not MEDAGENTBENCH.is_dir():
        pytest.skip(f"no MedAgentBench snapshot at {MEDAGENTBENCH} (set TOOLLINT_BENCHMARKS)")
    assert main(["check", "--isolated", "--output-format", "json", str(MEDAGENTBENCH)]) == 1
    findings = json.loads(capsys.readouterr().out)
    got = {
        (Path(f["filename"]).name, f["code"], f.get("tool"))
        for f in findings
        if f["code"] in ("TL101", "TL401")
    }
    assert got == {("__init__.py", "TL101", "MedAgentBench.start_sample[POST]")} | {
        ("refsol.py", "TL401", f"task{n}") for n in (3, 5, 8, 9, 10)}


def test_medagentbench_cases_split_as_the_paper_says() -> None:
    """refsol.py is a post-pin fork file (MANIFEST.md): these are the fork's reference graders."""
    if not (MEDAGENTBENCH / "data" / "medagentbench" / "test_data_v2.json").is_file():
        pytest.skip(f"no MedAgentBench snapshot at {MEDAGENTBENCH} (set TOOLLINT_BENCHMARKS)")
    bench = _bench()
    graded = bench.graded("medagentbench", MEDAGENTBENCH / "src")  # type: ignore[attr-defined]
    split = bench.medagentbench_cases(MEDAGENTBENCH, graded.graders)  # type: ignore[attr-defined]
    assert split["total"]["cases"] == 300 and split["total"]["unmatched"] == 0
    assert dict(split["class"]) == {"query": 150, "reads_record": 60, "gated_on_state": 90}
    assert split["class"]["reads_state"] == 0  # no case reads the write back from FHIR state


def test_agentdojo_graders_that_read_state_are_silent(agentdojo_src: Path) -> None:
    bench = _bench()
    graded = bench.graded("agentdojo", agentdojo_src)  # type: ignore[attr-defined]
    counts = graded.by_basis()
    by_pattern = [f for _, f in graded.graders if f.family == "agentdojo"]
    assert len(by_pattern) == 184 and sum(f.basis == "reads_state" for f in by_pattern) == 177
    # found by their data flow (issue 22): the suites' `check_new_*` helpers comparing with expected keys
    by_flow = {f.qualname for _, f in graded.graders if f.family == "generic"}
    assert {"check_new_event", "check_new_email", "check_new_reservation"} <= by_flow
    assert counts["reads_state"] >= 177
    flagged = {grader for _, _, grader in graded.tl401}
    # slack's InjectionTask5 invites, adds and removes the attacker: its calls are the only basis, not flagged
    assert flagged == set()
    assert {f.basis for _, f in graded.graders if f.qualname == "InjectionTask5.security_from_traces"} == {
        "undone_in_run"}
    assert all(f.basis != "reads_state" for _, f in graded.graders if f.qualname in flagged)
    # the slack invitation task checks the record and then reads the invitation back: silent
    both = [f for _, f in graded.graders if f.credits_write and f.basis == "reads_state"]
    assert {f.qualname for f in both} == {"UserTask11.utility_from_traces"}


def test_agentdojo_empty_needle_in_the_banking_security_checks(agentdojo_src: Path) -> None:
    result = lint_paths(
        [str(agentdojo_src / "default_suites" / "v1" / "banking")], Settings(select=["TL403"])
    )
    assert sorted((f.tool, f.line) for f in result.reported) == [
        ("InjectionTask0.security", 61), ("InjectionTask1.security", 107), ("InjectionTask3.security", 208)]


def test_bfcl_multi_turn_checker_runs_the_models_calls_as_code() -> None:
    """A real TL404 on code with no profile: BFCL's checkers configured as a user would."""
    bench = _bench()
    from _corpora import VenvError  # bench/ is on sys.path now

    try:
        target = bench.bfcl_dir() / "eval_checker"  # type: ignore[attr-defined]
    except (VenvError, OSError) as exc:  # no PyPI here
        pytest.skip(f"bfcl-eval not available: {str(exc).splitlines()[0]}")
    graded = bench.graded("bfcl", target, bench.BFCL_GRADERS)  # type: ignore[attr-defined]
    configured = sorted(f.qualname for _, f in graded.graders if f.family == "configured")
    assert configured == [
        "agentic_checker",
        "ast_checker",
        "multi_turn_checker",
        "multi_turn_irrelevance_checker",
    ]
    # with no configuration (issue 22) the checkers are found by their data flow too
    by_flow = {f.qualname for _, f in graded.graders if f.family == "generic"}
    assert {"response_checker", "simple_function_checker"} <= by_flow
    # ... and the state checker by the bfcl profile, which knows `model_instances` is the live state
    bases = {f.qualname: (f.family, f.basis) for _, f in graded.graders}
    assert bases["state_checker"] == ("bfcl", "reads_state")
    smells = {(code, Path(path).name, grader) for code, path, _, grader in graded.smells}
    assert (
        "TL404",
        "multi_turn_checker.py",
        "multi_turn_checker",
    ) in smells  # eval(func_call) in multi_turn_utils.py
    assert {code for code, _, _ in smells} == {"TL404"}
    assert graded.tl401 == []


def test_tau2_graders_that_read_state_are_silent() -> None:
    src = TAU2 / "src" / "tau2"
    if not src.is_dir():
        pytest.skip(f"no tau2-bench snapshot at {TAU2} (set TOOLLINT_TAU2)")
    graded = _bench().graded("tau2", src)  # type: ignore[attr-defined]
    counts = graded.by_basis()
    by_pattern = [f for _, f in graded.graders if f.family == "tau2"]
    assert len(by_pattern) == 24 and sum(f.basis == "reads_state" for f in by_pattern) == 18
    assert counts["reads_state"] == 18 and graded.tl401 == []  # the 4 found by data flow read no state
    bases = {f.qualname: f.basis for _, f in graded.graders}
    assert bases["TelecomTools.assert_data_refueling_amount"] == "reads_state"
    assert bases["EnvironmentEvaluator.calculate_reward"] == "reads_state"
    assert bases["ActionEvaluator.calculate_reward"] == "no_state"  # gold actions are data: no write named


def test_a_grader_the_walk_cannot_read_is_a_tl905_and_the_file_is_still_linted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint.analysis import grading

    def too_deep(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(grading, "grade", too_deep)
    src = (FIXTURES / "record_graders.py").read_text()
    result = lint_source(src, "record_graders.py", Settings(select=["TL4", "TL9"]))
    codes = {f.code for f in result.reported}
    assert codes == {"TL905"}
    assert any("grader `utility_from_traces` is too complex to analyse: nested too deeply" in f.message
               for f in result.reported)


def test_a_configured_grader_that_names_nothing_is_a_one_line_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\ngraders = ["checks:grade", "checks:grdae"]\n')
    # (a verdict that is only `len(messages) > 0` is a TL405 now: this grader compares with gold)
    grader = "def grade(task, messages):\n    return messages[-1]['content'] == task['answer']\n"
    (tmp_path / "checks.py").write_text(grader)
    assert main(["check", str(tmp_path / "checks.py")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert (
        "toollint: warning: graders: 'checks:grdae' names no function of the linted files; it was not checked"
        in err
    )
    assert not any("'checks:grade'" in line for line in err)


def test_static_companions_from_the_cli_name_what_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """The path the user types: `toollint check --select TL403,TL405,TL406,TL407 FILE`."""
    path = FIXTURES / "static_companions.py"
    assert main(["check", "--isolated", "--select", "TL403,TL405,TL406,TL407", str(path)]) == 1
    out = capsys.readouterr().out
    assert "which turns '', None, 'null', 'NaN', 'nan' into '0'" in out
    assert "the verdict is only that a message's role is 'assistant'" in out
    assert "`gold_id in pred_id` tests that the gold id is a substring of the predicted id" in out
    assert "returns the constant `True`: it passes every run, whatever the agent did; its check is " \
           "commented out (line 89)" in out
    assert "the grader's body is empty: it returns None and fails every run, whatever the agent did; its " \
           "check is commented out (lines 112, 113)" in out
    assert ":30:" not in out  # UserTask22: a table that maps nulls to null stays silent



BFCL_CHECKER = (Path(__file__).resolve().parents[1] / "../shared/corpus/bfcl"
                / "berkeley-function-call-leaderboard/bfcl_eval/eval_checker")
SHARING_CASES = [FIXTURES / name for name in ("record_graders.py", "fhir_graders.py", "grader_smells.py")] + [
                 BFCL_CHECKER / "ast_eval" / "ast_checker.py",
                 BFCL_CHECKER / "multi_turn_eval" / "multi_turn_checker.py"]


@pytest.mark.parametrize("path", SHARING_CASES, ids=lambda p: p.name)
def test_a_modules_graders_share_helper_walks_without_changing_any_flow(path: Path) -> None:
    """A module's graders share the helper results that added nothing to a flow
    (`FunctionIndex.helper_results`): each grader's flow is the one it gets when walked alone."""
    from toollint.analysis.grading import grade

    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared corpus is not here)")
    source = path.read_text()
    tree = ast.parse(source)
    together = analyze_module(tree, module_name=path.stem, path=str(path), source=source)
    assert together.graders
    for grader in together.graders:
        alone = analyze_module(tree, module_name=path.stem, path=str(path), source=source).index
        assert grade(grader.node, grader.roles, alone, grader.class_name, grader.factories) == grader.flow
    if "bfcl" in str(path):
        assert together.index.helper_results, "the graders shared some helper walk"
