"""The `toollint` command: exit codes, formats, selection, rule docs, demo, subcommand dispatch."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_rules import FLAG, fake_rules  # noqa: F401 - fixture

from toollint import registry
from toollint.cli import main

pytestmark = pytest.mark.usefixtures("fake_rules")
BAD = "def bad_one():\n    pass\n\n\ndef bad_two(x):\n    return x\n"
ONLY_FAKE = ["--select", "TL19,TL9"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    (tmp_path / "pkg" / "good.py").write_text("def fine():\n    pass\n")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_findings_exit_1_with_flake8_style_lines_and_summary(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "check", *ONLY_FAKE, "pkg")
    assert code == 1
    assert out.splitlines() == [
        "pkg/bad.py:1:1: TL190 [flag-bad-function] function `bad_one` is bad",
        "pkg/bad.py:5:1: TL190 [flag-bad-function] function `bad_two` is bad",
    ]
    assert err == "Found 2 findings in 1 file. Checked 2 files, 0 tools.\n"


def test_no_subcommand_means_check(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *ONLY_FAKE, "pkg") == run(capsys, "check", *ONLY_FAKE, "pkg")
    assert run(capsys, "pkg/bad.py", "--select", FLAG)[0] == 1


NO_TOOLS = ("No tools found in 1 file: nothing was checked (how toollint finds tools: README, 'How toollint "
            "finds tools'; or name them with `tools`/`tool-decorators` in [tool.toollint]).\n")


def test_clean_run_prints_only_the_summary_and_exits_0(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No tool in good.py: the summary says nothing was checked rather than "all good".
    assert run(capsys, *ONLY_FAKE, "pkg/good.py") == (0, "", NO_TOOLS)
    (project / "pkg" / "tool.py").write_text("@tool\ndef fine(x):\n    return x\n")
    assert run(capsys, *ONLY_FAKE, "pkg/tool.py") == (
        0,
        "",
        "All checks passed! Checked 1 file, 1 tool (0 writers).\n",
    )
    # A tool that writes state is counted among the writers: the tools the rules judge.
    (project / "pkg" / "tool.py").write_text(
        "@tool\ndef fine(x):\n    return x\n\n"
        "class T:\n    @tool\n    def put(self, k, v):\n        self.db[k] = v\n"
    )
    assert run(capsys, *ONLY_FAKE, "pkg/tool.py") == (
        0,
        "",
        "All checks passed! Checked 1 file, 2 tools (1 writer).\n",
    )


def test_exit_zero_and_quiet(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *ONLY_FAKE, "--exit-zero", "-q", "pkg")
    assert code == 0 and out.count("\n") == 2 and err == ""


def test_ignore_by_name_and_select_by_prefix(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--select", "TL19", "--ignore", "flag-bad-function", "pkg")[0] == 0
    assert run(capsys, "--select", "TL9", "--extend-select", "flag-bad-function", "pkg")[0] == 1


def test_unknown_selector_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--select", "TL1,no-such-rule", "pkg")
    assert (code, out) == (2, "")
    assert err == "toollint: error: unknown rule selector 'no-such-rule' in select\n"


def test_bad_option_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--output-format", "xml", "pkg")[0] == 2
    assert run(capsys, "--jobs", "-3", "pkg")[0] == 2


def test_suppressed_count_in_summary(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pkg" / "bad.py").write_text(BAD.replace("bad_one():", "bad_one():  # noqa: TL190"))
    code, out, err = run(capsys, *ONLY_FAKE, "pkg")
    assert code == 1 and out.count("\n") == 1
    assert err == "Found 1 finding in 1 file (1 suppressed). Checked 2 files, 0 tools.\n"


def test_json_shape(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE, "--output-format", "json", "pkg")
    data = json.loads(out)
    assert code == 1 and len(data) == 2
    first = data[0]
    assert {k: first[k] for k in ("code", "name", "filename", "location", "tool", "suppressed")} == {
        "code": FLAG,
        "name": "flag-bad-function",
        "filename": "pkg/bad.py",
        "location": {"row": 1, "column": 1},
        "tool": "bad_one",
        "suppressed": False,
    }
    assert first["end_location"] == {"row": 2, "column": 9}
    assert set(first) >= {"message", "fix", "related", "properties", "url", "level"}


def test_json_of_a_clean_run_is_an_empty_list(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *ONLY_FAKE, "--output-format", "json", "pkg/good.py")[:2] == (0, "[]\n")


def test_full_format_shows_source_and_caret(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE, "--output-format", "full", "pkg/bad.py")
    lines = out.splitlines()
    assert code == 1
    assert lines[:4] == [
        "pkg/bad.py:1:1: TL190 [flag-bad-function] function `bad_one` is bad",
        "  |",
        "1 | def bad_one():",
        "  | ^^^^^^^^^^^^^^",
    ]
    assert run(capsys, *ONLY_FAKE, "--show-source", "pkg/bad.py")[1] == out


def test_full_format_shows_fix_hint_and_related(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint.model import Fix, RelatedLocation

    def with_extras(ctx):  # type: ignore[no-untyped-def]
        f = ctx.finding(FLAG, ctx.tree.body[0], "msg", end_line=1, end_col=8)
        f.fix = Fix("test `x is not None` instead", ())
        f.related.append(RelatedLocation("pkg/bad.py", 5, 1, "partner here"))
        yield f

    monkeypatch.setitem(registry._RULES, FLAG, dataclasses.replace(registry._RULES[FLAG], check=with_extras))
    out = run(capsys, *ONLY_FAKE, "--output-format", "full", "pkg/bad.py")[1]
    assert "  | ^^^^^^^\n" in out
    assert "  = help: test `x is not None` instead\n" in out
    assert "  = note: pkg/bad.py:5:1: partner here\n" in out


def test_statistics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE, "--statistics", "pkg")
    assert code == 1 and out == "2\tTL190\t[flag-bad-function] Bad function\n"
    assert run(capsys, *ONLY_FAKE, "--statistics", "pkg/good.py")[:2] == (0, "No findings.\n")
    stats = json.loads(run(capsys, *ONLY_FAKE, "--statistics", "--output-format", "json", "pkg")[1])
    assert stats == [{"code": FLAG, "name": "flag-bad-function", "count": 2}]


def test_output_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE, "-o", "report.txt", "pkg")
    assert code == 1 and out == ""
    assert (project / "report.txt").read_text().count("TL190") == 2
    code, _, err = run(capsys, *ONLY_FAKE, "-o", str(project / "no" / "dir" / "r.txt"), "pkg")
    assert code == 1 and (project / "no" / "dir" / "r.txt").is_file()  # its folder is made, as --report's is
    (project / "blocker").write_text("")
    code, _, err = run(capsys, *ONLY_FAKE, "-o", str(project / "blocker" / "r.txt"), "pkg")
    assert code == 2 and err.startswith("toollint: error: cannot write")


def test_sarif_output_or_a_clean_message(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *ONLY_FAKE, "--output-format", "sarif", "pkg")
    try:
        import toollint.reporters.sarif  # noqa: F401
    except ImportError:
        assert (code, err) == (2, "toollint: error: sarif output is not available in this installation\n")
    else:
        sarif = json.loads(out)
        assert code == 1 and len(sarif["runs"][0]["results"]) == 2


def test_rule_doc_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rule", "TL904")
    assert code == 0 and out.startswith("# internal-error (TL904)\n") and "## What it does" in out
    assert run(capsys, "rule", "internal-error")[1] == out
    code, out, _ = run(capsys, "rule", "--all")
    assert code == 0 and len(out.splitlines()) == len(registry.all_rules())
    assert any(line.split()[:2] == ["TL190", "flag-bad-function"] for line in out.splitlines())
    listed = json.loads(run(capsys, "rule", "--all", "--output-format", "json")[1])
    assert [r["code"] for r in listed] == [r.code for r in registry.all_rules()]
    one = json.loads(run(capsys, "rule", "TL190", "--output-format", "json")[1])
    assert one["name"] == "flag-bad-function" and one["doc"].startswith("## What it does")


def test_unknown_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "rule", "TL999")
    assert (code, out) == (2, "") and "unknown rule 'TL999'" in err


def test_real_rules_have_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    for r in registry.static_rules():
        if r.code.startswith("TL10"):
            out = run(capsys, "rule", r.code)[1]
            assert "## What it does" in out and "## Example" in out, r.code


def test_demo_lints_the_bundled_examples(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import cli

    code, out, _ = run(capsys, "demo")
    has_examples = any(p.name != "__init__.py" for p in cli.EXAMPLES_DIR.glob("**/*.py"))
    if has_examples:
        assert code == 1
        # What the README says the demo shows: each tool rule and a grader rule.
        assert {line.split()[1] for line in out.splitlines()} == {"TL101", "TL102", "TL103", "TL104", "TL105",
                                                                   "TL401"}
    else:
        assert code == 0


def test_delegated_subcommands_only_when_importable(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from toollint import cli

    monkeypatch.setitem(cli.DELEGATED, "fakesub", ("toollint_no_such_module.cli", "main", "nothing"))
    assert "fakesub" not in run(capsys, "--help")[1]
    calls: list[list[str]] = []
    module = type(sys)("toollint_fake_cli")

    def fake_main(argv: list[str]) -> int:
        calls.append(argv)
        return 3

    module.main = fake_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toollint_fake_cli", module)
    monkeypatch.setattr(cli, "_importable", lambda name: name == "toollint_fake_cli")
    monkeypatch.setitem(cli.DELEGATED, "fakesub", ("toollint_fake_cli", "main", "a fake"))
    assert main(["fakesub", "--x", "y"]) == 3 and calls == [["--x", "y"]]
    assert "fakesub" in run(capsys, "--help")[1]


def test_check_steps_post_process_the_result(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import cli

    def drop_all(ctx, result):  # type: ignore[no-untyped-def]
        assert ctx.options.paths == ("pkg",) and ctx.settings.project_root == project
        for file_result in result.files:
            file_result.findings = []
        return result

    monkeypatch.setattr(cli, "CHECK_STEPS", [drop_all])
    assert run(capsys, *ONLY_FAKE, "pkg")[0] == 0


def test_unexpected_exception_is_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    import toollint.pipeline.check

    monkeypatch.setattr(toollint.pipeline.check, "lint_paths", explode)
    code, _, err = run(capsys, "pkg")
    assert code == 2 and err.count("\n") == 1 and "internal error: RuntimeError: disk on fire" in err


def test_python_m_and_console_script(project: Path) -> None:
    for argv in ([sys.executable, "-m", "toollint"], [str(Path(sys.executable).parent / "toollint")]):
        proc = subprocess.run([*argv, "--select", "TL9", "pkg"], capture_output=True, text=True, check=False)
        assert (proc.returncode, proc.stdout) == (0, ""), argv
        assert proc.stderr.startswith("No tools found in 2 files"), argv
    proc = subprocess.run(
        [sys.executable, "-m", "toollint", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and proc.stdout.startswith("toollint ")


def test_subcommand_probe_does_not_import_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint.cli import _importable

    package = tmp_path / "slowpkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "cli.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _importable("slowpkg.cli") and not _importable("slowpkg.nothere")
    assert "slowpkg" not in sys.modules
    assert _importable("toollint.engine") and not _importable("toollint_absent.cli")


def test_no_path_means_the_current_directory(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE)
    assert code == 1 and {line.split(":")[0] for line in out.splitlines()} == {"pkg/bad.py"}


def test_config_found_from_the_target_applies_end_to_end(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pkg" / "pyproject.toml").write_text(
        '[tool.toollint]\nselect = ["TL19"]\nextend-exclude = ["bad.py"]\n'
    )
    assert run(capsys, "pkg")[:2] == (0, "")  # bad.py excluded by the config found above the target
    assert run(capsys, "pkg/bad.py")[0] == 1  # named explicitly: linted anyway
    assert run(capsys, "--force-exclude", "pkg/bad.py")[:3] == (0, "", "No Python files checked.\n")
    assert run(capsys, "--isolated", "--select", FLAG, "pkg")[0] == 1


# --- habits: stdin, output formats, colour ------------------------------------------------------

FRONTENDS = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


def test_stdin_with_stdin_filename_gives_that_files_findings(tmp_path: Path) -> None:
    shutil.copy(FRONTENDS, tmp_path / "file.py")
    on_disk = subprocess.run([sys.executable, "-m", "toollint", "check", "file.py"], cwd=tmp_path,
                             capture_output=True, text=True, check=False)
    piped = subprocess.run(f"cat file.py | {sys.executable} -m toollint check --stdin-filename file.py -",
                           shell=True, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (piped.returncode, piped.stdout) == (on_disk.returncode, on_disk.stdout) == (1, on_disk.stdout)
    assert on_disk.stdout.count("file.py:") == 6
    # Without a name the findings are named "-"; --stdin-filename alone also reads stdin.
    bare = subprocess.run([sys.executable, "-m", "toollint", "check", "-"], cwd=tmp_path, capture_output=True,
                          text=True, check=False, input=FRONTENDS.read_text(encoding="utf-8"))
    assert bare.stdout.splitlines()[0].startswith("-:26:5: TL102")
    alone = subprocess.run([sys.executable, "-m", "toollint", "check", "--stdin-filename", "x/file.py"],
                           cwd=tmp_path, capture_output=True, text=True, check=False, input="x = 1\n")
    assert alone.returncode == 0 and alone.stderr.startswith("No tools found in 1 file")


def test_stdin_uses_the_configuration_of_its_file_name(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # per-file-ignores, not ignore: the command line's --select wins over a file's ignore (as in ruff)
    (project / "pkg" / "pyproject.toml").write_text(
        '[tool.toollint]\nper-file-ignores = { "bad.py" = ["TL190"] }\n'
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    assert run(capsys, *ONLY_FAKE, "--stdin-filename", "pkg/bad.py", "-")[:2] == (0, "")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    code, out, _ = run(capsys, *ONLY_FAKE, "--stdin-filename", "elsewhere/bad.py", "-")
    assert code == 1 and out.splitlines()[0].startswith("elsewhere/bad.py:1:1: TL190")


def test_stdin_cannot_be_fixed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--fix", "-")
    assert (
        code == 2
        and err == "toollint: error: --fix and --diff rewrite files; they cannot be used with stdin (-)\n"
    )


def test_github_format_is_workflow_commands_with_escaping(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE, "--output-format", "github", "pkg")
    assert code == 1
    assert out.splitlines()[0] == (
        "::warning file=pkg/bad.py,line=1,col=1,endLine=2,endColumn=9,"
        "title=toollint (TL190)::TL190 [flag-bad-function] function `bad_one` is bad"
    )
    from toollint.model import Finding
    from toollint.reporters.github import annotation

    tricky = Finding("TL901", "100% broken:\r\nline two", "a,b:c%.py", 3, 4)
    assert annotation(tricky) == ("::error file=a%2Cb%3Ac%25.py,line=3,col=4,title=toollint (TL901)::"
                                  "TL901 [syntax-error] 100%25 broken:%0D%0Aline two")


def test_gitlab_format_is_code_quality_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ONLY_FAKE, "--output-format", "gitlab", "pkg")
    issues = json.loads(out)
    assert code == 1 and len(issues) == 2
    first = issues[0]
    assert first["check_name"] == "TL190" and first["severity"] == "minor"
    assert first["location"] == {"path": "pkg/bad.py", "lines": {"begin": 1, "end": 2}}
    assert first["description"] == "TL190 [flag-bad-function] function `bad_one` is bad"
    assert len({i["fingerprint"] for i in issues}) == 2  # distinct, stable (toollint/v1)
    assert run(capsys, *ONLY_FAKE, "--output-format", "gitlab", "pkg")[1] == out


def test_junit_format_is_xml_with_a_failure_per_finding(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import xml.etree.ElementTree as ET

    code, out, _ = run(capsys, *ONLY_FAKE, "--output-format", "junit", "pkg")
    root = ET.fromstring(out)
    assert code == 1 and root.tag == "testsuites" and root.get("failures") == "2"
    cases = root.findall("./testsuite/testcase")
    assert [(c.get("classname"), c.get("line")) for c in cases] == [("pkg/bad.py", "1"), ("pkg/bad.py", "5")]
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "TL190"
    assert failure.text == "pkg/bad.py:1:1: TL190 [flag-bad-function] function `bad_one` is bad"
    clean = ET.fromstring(run(capsys, *ONLY_FAKE, "--output-format", "junit", "pkg/good.py")[1])
    assert (
        clean.get("failures") == "0" and clean.find("./testsuite/testcase").get("name") == "All checks passed"
    )


def test_junit_escapes_what_xml_cannot_hold() -> None:
    import xml.etree.ElementTree as ET

    from toollint.model import Finding
    from toollint.reporters import Report
    from toollint.reporters.junit import write_junit

    stream = io.StringIO()
    write_junit(Report([Finding("TL901", "bad \x00 byte", "caf\udce9.py", 1)]), stream)
    case = ET.fromstring(stream.getvalue()).find("./testsuite/testcase")
    assert case is not None and case.get("classname") == "caf\\xe9.py"
    assert "bad \\x00 byte" in (case.find("failure").text or "")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("environ", "choice", "colored"),
    [
        ({}, "auto", False),
        ({"FORCE_COLOR": "1"}, "auto", True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, "auto", False),
        ({}, "always", True),
        ({"FORCE_COLOR": "1"}, "never", False),
    ],
)
def test_colour_follows_no_color_force_color_and_the_option(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str], choice: str, colored: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    code, out, err = run(capsys, *ONLY_FAKE, "--color", choice, "pkg")
    assert code == 1
    assert ("\033[" in out) is colored and ("\033[" in err) is colored
    plain = re.sub(r"\033\[[0-9;]*m", "", out)
    assert plain.splitlines()[0] == "pkg/bad.py:1:1: TL190 [flag-bad-function] function `bad_one` is bad"


def test_colour_on_a_terminal_and_not_in_a_pipe() -> None:
    from toollint.console import use_color

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert use_color(Tty(), environ={}) and not use_color(io.StringIO(), environ={})
    assert not use_color(Tty(), environ={"TERM": "dumb"}) and not use_color(Tty(), environ={"NO_COLOR": "x"})
    assert use_color(Tty(), environ={"NO_COLOR": ""})  # an empty NO_COLOR does not count (no-color.org)
