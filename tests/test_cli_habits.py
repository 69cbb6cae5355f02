"""What a newcomer and a CI engineer trip on (issue 27), each through the command as typed: one error
path for every subcommand, misspelt commands, usage lines, and ruff's habits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toollint.cli import main

ROOT = Path(__file__).resolve().parents[1]
WRITER = '''from agentdojo.functions_runtime import Depends


def set_balance(account: Annotated[Account, Depends("bank")], amount: float) -> str:
    """Set the balance."""
    return "Balance updated successfully."
'''


def toollint(*argv: str, cwd: Path | None = None, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "toollint", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240, check=False, **kw)  # type: ignore[call-overload]


def closed_pipe(*argv: str, cwd: Path | None = None) -> tuple[int, str]:
    """Run toollint with its stdout a pipe whose reader has gone (`toollint ... | head` once head exits)."""
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run(
        [sys.executable, "-m", "toollint", *argv],
        cwd=cwd,
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=240,
        check=False,
    )
    os.close(write)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("argv", [
    ("contracts", "list"),  # a delegated subcommand: once went around the CLI's error handling
    ("rule", "--all"),
    ("demo", "--quiet"),
])
def test_a_closed_pipe_is_silent_and_exits_0_as_ruff_does(argv: tuple[str, ...]) -> None:
    code, err = closed_pipe(*argv)
    assert (code, err) == (0, ""), err


def test_head_reads_the_first_line_of_contracts_list_and_nothing_else_is_said() -> None:
    proc = subprocess.run(
        f"set -o pipefail; {sys.executable} -m toollint contracts list | head -1",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1 and proc.stderr == "", proc


def test_a_delegated_subcommand_failing_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import toollint.contracts.cli as contracts_cli

    def broken(argv: list[str]) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(contracts_cli, "main", broken)
    monkeypatch.delenv("TOOLLINT_DEBUG", raising=False)
    assert main(["contracts", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and "Traceback" not in err


def test_a_misspelt_command_gets_a_suggestion(tmp_path: Path) -> None:
    proc = toollint("chek", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "toollint: error: 'chek' is neither a command nor a file or directory; " \
                          "did you mean `toollint check`?\n"
    # A file of that name is linted, as `toollint PATH` promises; a word close to no command is a
    # missing path.
    (tmp_path / "chek").mkdir()
    assert "did you mean" not in toollint("chek", cwd=tmp_path).stderr
    assert "no such file or directory" in toollint("zzqx", cwd=tmp_path).stderr


def test_contracts_without_a_subcommand_prints_usage_and_exits_2() -> None:
    proc = toollint("contracts")
    assert proc.returncode == 2 and proc.stdout == ""
    usage, error = proc.stderr.splitlines()
    assert usage.startswith("usage: toollint contracts ") and "{check,list,draft}" in usage
    assert error == "toollint contracts: error: the following arguments are required: command"


# -- the command line wins over the configuration ---------------------------------------------------


@pytest.fixture
def writer_project(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text("from typing import Annotated\n\n" + WRITER.replace("Account", "dict"))
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nignore = ["TL101"]\n')
    return tmp_path


def test_select_on_the_command_line_beats_ignore_in_the_configuration(writer_project: Path) -> None:
    assert toollint("check", "tools.py", cwd=writer_project).returncode == 0  # the file's ignore applies
    proc = toollint("check", "--select", "TL101", "tools.py", cwd=writer_project)
    assert proc.returncode == 1 and " TL101 " in proc.stdout, proc
    proc = toollint("check", "--extend-select", "TL101", "tools.py", cwd=writer_project)
    assert proc.returncode == 1 and " TL101 " in proc.stdout, proc
    # --ignore on the command line still removes, whatever the file selects.
    (writer_project / "pyproject.toml").write_text('[tool.toollint]\nselect = ["TL101"]\n')
    assert toollint("check", "--ignore", "TL101", "tools.py", cwd=writer_project).returncode == 0


def test_per_file_ignores_still_apply_under_a_command_line_select(writer_project: Path) -> None:
    (writer_project / "pyproject.toml").write_text(
        '[tool.toollint]\nper-file-ignores = { "tools.py" = ["TL101"] }\n'
    )
    assert toollint("check", "--select", "TL101", "tools.py", cwd=writer_project).returncode == 0


def test_the_readme_documents_the_precedence() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "The command line wins over the configuration" in readme and '`ignore = ["TL101"]`' in readme


# -- one key style ----------------------------------------------------------------------------------


def test_snake_case_keys_are_read_with_a_warning_naming_the_kebab_case_one(writer_project: Path) -> None:
    (writer_project / "pyproject.toml").write_text(
        '[tool.toollint]\nextend_select = ["TL101"]\n'
        '[tool.toollint.confirm]\nsys_path = ["."]\nstartup-deadline = 9\n'
    )
    proc = toollint("check", "tools.py", cwd=writer_project)
    assert proc.returncode == 1 and " TL101 " in proc.stdout  # read, not refused
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("toollint: warning:")]
    assert len(warnings) == 2 and "'extend_select'" in warnings[0] and "spelt 'extend-select'" in warnings[0]
    assert "'sys_path'" in warnings[1] and "[tool.toollint.confirm] is spelt 'sys-path'" in warnings[1]
    assert toollint("check", "-q", "tools.py", cwd=writer_project).stderr == ""


def test_every_documented_key_is_kebab_case() -> None:
    from toollint.settings import ConfirmSettings, Settings, TraceSettings, table_keys

    for cls in (Settings, ConfirmSettings, TraceSettings):
        assert all("_" not in key for key in table_keys(cls)), cls
    docs = "\n".join(
        p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    )
    for cls in (Settings, ConfirmSettings, TraceSettings):
        for f in table_keys(cls).values():
            if "_" in f.name:
                assert f"`{f.name}`" not in docs and f"\n{f.name} =" not in docs, f.name


# -- --show-settings, --show-files, paths as typed ----------------------------------------------------


def test_show_settings_prints_the_resolved_settings_with_the_command_line_applied(
    writer_project: Path,
) -> None:
    proc = toollint("check", "--show-settings", "--select", "TL1", ".", cwd=writer_project)
    assert proc.returncode == 0, proc
    lines = proc.stdout.splitlines()
    assert lines[0] == "Resolved settings for: tools.py"
    assert lines[1] == f"Settings path: {writer_project / 'pyproject.toml'}"
    assert 'select = ["TL1"]' in lines and "ignore = []" in lines and "[tool.toollint.confirm]" in lines
    assert lines[-1] == "# Enabled codes (5): TL101, TL102, TL103, TL104, TL105"
    body = "\n".join(ln for ln in lines[2:] if not ln.startswith("#"))
    parsed = _toml(body)  # what it prints is TOML a user can paste
    assert parsed["tool"]["toollint"]["select"] == ["TL1"]


def _toml(text: str) -> dict[str, object]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads(text)


def test_show_files_lists_what_a_run_would_lint_and_nothing_else(writer_project: Path) -> None:
    (writer_project / "build").mkdir()
    (writer_project / "build" / "gen.py").write_text("x = 1\n")
    (writer_project / "notes.txt").write_text("")
    (writer_project / "pkg").mkdir()
    (writer_project / "pkg" / "a.py").write_text("x = 1\n")
    proc = toollint("check", "--show-files", ".", cwd=writer_project)
    assert (proc.returncode, sorted(proc.stdout.splitlines()), proc.stderr) == (
        0,
        ["pkg/a.py", "tools.py"],
        "",
    ), proc
    assert toollint("check", "--show-files", "missing", cwd=writer_project).returncode == 2


def test_paths_outside_the_working_directory_are_printed_as_typed(writer_project: Path) -> None:
    (writer_project / "sub").mkdir()
    proc = toollint("check", "--isolated", "../tools.py", cwd=writer_project / "sub")
    assert proc.stdout.startswith("../tools.py:8:5: TL101 "), proc
    proc = toollint("check", "--isolated", "..", cwd=writer_project / "sub")
    assert proc.stdout.startswith("../tools.py:8:5: TL101 "), proc
    absolute = str(writer_project / "tools.py")
    assert toollint("check", "--isolated", absolute, cwd=writer_project / "sub").stdout.startswith(
        absolute + ":8:5:"
    )
    assert toollint("check", "--isolated", "tools.py", cwd=writer_project).stdout.startswith("tools.py:8:5:")


# -- writers create their folder; --baseline says what it hid -----------------------------------------


@pytest.mark.parametrize(
    "option", [("-o",), ("--sarif-output",), ("--write-baseline",), ("--output-format", "json", "-o")]
)
def test_every_writer_creates_its_output_folder(writer_project: Path, option: tuple[str, ...]) -> None:
    target = writer_project / "new" / "deeper" / "out.txt"
    proc = toollint("check", "--isolated", *option, "new/deeper/out.txt", "tools.py", cwd=writer_project)
    assert proc.returncode in (0, 1) and "error" not in proc.stderr, proc
    assert target.is_file() and target.stat().st_size > 0


def test_baseline_says_how_many_findings_it_hid(writer_project: Path) -> None:
    assert (
        toollint(
            "check", "--isolated", "--write-baseline", "b/base.json", "tools.py", cwd=writer_project
        ).returncode
        == 0
    )
    proc = toollint("check", "--isolated", "--baseline", "b/base.json", "tools.py", cwd=writer_project)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "toollint: warning: 1 finding(s) recorded in baseline b/base.json not shown (--baseline)",
        "All checks passed! Checked 1 file, 1 tool (0 writers).",
    ]


# -- witnesses stay out of git status -------------------------------------------------------------------


def test_confirm_leaves_git_status_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    project = tmp_path / "proj"
    shutil.copytree(ROOT / "tests" / "fixtures" / "dynamic_bench", project)
    (project / "pyproject.toml").write_text(
        '[tool.toollint]\ncontract-dirs = ["contracts"]\ntool-decorators = ["tool"]\n\n'
        '[tool.toollint.confirm]\n'
        'adapter = "toolkit"\nfactory = "bank:make_bank"\nsys-path = ["."]\ndeadline = 3\n'
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=project, check=True)
    monkeypatch.chdir(project)
    assert main(["check", "-q", "--confirm", "bank.py"]) == 1
    assert list((project / ".toollint" / "witnesses").glob("*.json"))  # witnesses were written
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
    # A witness folder the user names is theirs: no .gitignore is put there.
    assert main(["check", "-q", "--confirm", "--witness-dir", "kept", "bank.py"]) == 1
    assert not (project / "kept" / ".gitignore").exists() and list((project / "kept").glob("*.json"))


def test_tau2_src_given_the_checkout_root_uses_its_src_tau2_and_says_so(tau2_checkout: Path) -> None:
    # Once: 57 false TL309/TL304 problems, with no hint that `src/tau2` was meant.
    contracts = ROOT / "toollint" / "profiles" / "tau2" / "contracts"
    proc = toollint("contracts", "check", "--tau2-src", str(tau2_checkout), str(contracts))
    assert proc.returncode == 0 and "TL309" not in proc.stdout, proc.stdout[-2000:]
    assert (
        f"toollint contracts check: note: package dir for 'tau2': using {tau2_checkout / 'src' / 'tau2'}, "
        f"the package inside the checkout {tau2_checkout}" in proc.stderr.splitlines()
    )


def test_a_file_level_noqa_does_what_the_readme_says(writer_project: Path) -> None:
    (writer_project / "tools.py").write_text("# toollint: noqa\n" + (writer_project / "tools.py").read_text())
    proc = toollint("check", "--isolated", "tools.py", cwd=writer_project)
    shown = "All checks passed! Checked 1 file, 1 tool (0 writers) (1 suppressed)."
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", shown + "\n")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"`{shown}`" in readme and "skips the file" not in readme


def test_a_tool_no_suite_registers_is_said_so_not_missing_from_one_suite() -> None:
    from toollint.dynamic.checker import missing_tool

    hello = {
        "variant": "v1.2.2/banking",
        "benchmark_version": "0.1.35",
        "registered_anywhere": ["send_money"],
    }
    assert missing_tool("download_file", 11, "agentdojo", hello) == (
        "tool 'download_file' is registered by no suite of agentdojo 0.1.35: "
        "no agent can call it, so it cannot be run"
    )
    assert missing_tool("send_money", 11, "agentdojo", hello) == (
        "tool 'send_money' is not among the 11 tools the agentdojo host lists for v1.2.2/banking")
    del hello["registered_anywhere"]  # an adapter that does not say: the host's own list is all there is
    assert "is not among the 11 tools" in missing_tool("download_file", 11, "agentdojo", hello)


def test_the_agentdojo_host_says_which_tools_any_suite_registers(agentdojo_python: Path) -> None:
    script = (
        "from toollint.profiles.agentdojo.host.adapter import AgentDojoAdapter\n"
        "class Shims:\n    def freeze_clock(self, modules): pass\n"
        "hello = AgentDojoAdapter({'suite': 'banking'}, Shims()).hello()\n"
        "names = hello['registered_anywhere']\n"
        "print(hello['variant'], 'download_file' in names, 'send_money' in names, 'send_email' in names)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([str(agentdojo_python), "-c", script], capture_output=True, text=True, env=env,
                          timeout=240, check=False)
    # banking's host knows send_email (the workspace suite's) is registered somewhere, download_file nowhere
    assert proc.stdout.split() == ["v1.2.2/banking", "False", "True", "True"], proc.stderr[-2000:]


def test_the_demo_runs_from_a_venv_that_git_ignores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # Python 3.13's venv writes `.venv/.gitignore` (`*`): inside a git checkout, the installed examples
    # were all "ignored" and `toollint demo` (the README's first command) found no Python file.
    import shutil

    from toollint import cli

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    venv = tmp_path / ".venv"
    shutil.copytree(cli.EXAMPLES_DIR, venv / "site-packages" / "toollint" / "examples")
    (venv / ".gitignore").write_text("# created by venv\n*\n")
    monkeypatch.setattr(cli, "EXAMPLES_DIR", venv / "site-packages" / "toollint" / "examples")
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 1
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 6 and "Found 6 findings in 2 files" in err
