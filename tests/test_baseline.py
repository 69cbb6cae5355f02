"""Baselines and --diff-base: findings compared by `toollint/v1` fingerprint, not by line."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from toollint.baseline import BaselineError, apply_baseline, files_at_ref, load_baseline, write_baseline
from toollint.cli import main
from toollint.model import Finding

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"
NEW_DEFECT = """

def set_limit(account: Annotated[dict, Depends("bank_account")], limit: int | None = None) -> str:
    '''Set the daily limit. limit: the new limit, 0 for none (so 0 is legal, and the premise medium).'''
    if limit:
        account["limit"] = limit
    return str(account.get("limit"))  # not a success message: one finding (TL104) for this defect
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # finding paths are relative to the working directory


def _f(code: str, line: int, message: str, tool: str = "update", path: str = "tools.py") -> Finding:
    return Finding(code, message, path, line, 5, tool=tool)


# --- the baseline file ----------------------------------------------------------------------------


def test_round_trip_and_line_moves(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text("x = 1\n", encoding="utf-8")
    before = [
        _f("TL104", 10, "`amount` at line 10"),
        _f("TL103", 20, "`note` is only logged", tool="schedule"),
    ]
    assert write_baseline(tmp_path / "b.json", before, tmp_path) == 2
    baseline = load_baseline(tmp_path / "b.json")
    after = [
        _f("TL104", 14, "`amount` at line 14"),
        _f("TL103", 24, "`note` is only logged", tool="schedule"),
    ]
    outcome = apply_baseline(after, baseline, tmp_path, linted=["tools.py"])
    assert outcome.kept == [] and outcome.matched == 2 and outcome.stale == []


def test_new_findings_kept_and_stale_entries_reported(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("x = 1\n", encoding="utf-8")
    recorded = [
        _f("TL104", 10, "`amount` is truth-tested"),
        _f("TL101", 30, "literal success"),
        _f("TL101", 5, "literal success", path="other.py"),
        _f("TL102", 5, "guard", path="gone.py"),
    ]
    write_baseline(tmp_path / "b.json", recorded, tmp_path)
    now = [_f("TL104", 10, "`amount` is truth-tested"), _f("TL104", 12, "`recurring` is truth-tested")]
    outcome = apply_baseline(now, load_baseline(tmp_path / "b.json"), tmp_path, linted=["tools.py"])
    assert [f.message for f in outcome.kept] == ["`recurring` is truth-tested"]
    # Fixed in a linted file, or its file deleted: stale. other.py was not linted this run: left alone.
    assert sorted((e.path, e.code) for e in outcome.stale) == [("gone.py", "TL102"), ("tools.py", "TL101")]


def test_a_second_identical_finding_is_new(tmp_path: Path) -> None:
    one = [_f("TL104", 10, "same")]
    write_baseline(tmp_path / "b.json", one, tmp_path)
    two = [_f("TL104", 10, "same"), _f("TL104", 40, "same")]
    outcome = apply_baseline(two, load_baseline(tmp_path / "b.json"), tmp_path)
    assert [f.line for f in outcome.kept] == [40]


def test_suppressed_and_internal_errors_never_baselined(tmp_path: Path) -> None:
    quiet = _f("TL104", 10, "noqa'd")
    quiet.suppressed = True
    crash = _f("TL904", 1, "internal error in TL101")
    assert write_baseline(tmp_path / "b.json", [quiet, crash, _f("TL101", 3, "x")], tmp_path) == 1
    outcome = apply_baseline([crash], load_baseline(tmp_path / "b.json"), tmp_path)
    assert outcome.kept == [crash]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "not found; create it with --write-baseline"),
        ("{not json", "is not valid JSON (line 1"),
        ('{"findings": []}', "is not a toollint baseline"),
        (
            '{"toollint-baseline": 99, "fingerprint": "toollint/v1", "findings": []}',
            "rewrite it with --write-baseline",
        ),
        (
            '{"toollint-baseline": 1, "fingerprint": "toollint/v1", "findings": {}}',
            "'findings' must be a list",
        ),
        (
            '{"toollint-baseline": 1, "fingerprint": "toollint/v1", "findings": [{"code": "TL1"}]}',
            "entry 1 needs",
        ),
        (b"\xff\xfe\x00", "cannot read baseline"),
    ],
)
def test_bad_baseline_files(tmp_path: Path, content: str | bytes | None, expected: str) -> None:
    path = tmp_path / "b.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    assert expected in str(info.value) and "\n" not in str(info.value)


# --- through the CLI ------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FIXTURE, tmp_path / "tools.py")
    return tmp_path


def test_cli_write_then_use_baseline(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--write-baseline", "baseline.json", "."]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "wrote 6 finding(s) to baseline baseline.json" in out.err
    assert len(json.loads(Path("baseline.json").read_text(encoding="utf-8"))["findings"]) == 6

    assert main(["check", "--baseline", "baseline.json", "."]) == 0
    assert capsys.readouterr().out == ""

    # Move everything down two lines, add a new defect, fix an old one.
    text = "\n\n" + Path("tools.py").read_text(encoding="utf-8").replace(
        "    if amount:\n", "    if amount is not None:\n"
    )
    Path("tools.py").write_text(text + NEW_DEFECT, encoding="utf-8")
    assert main(["check", "--baseline", "baseline.json", "--output-format", "json", "."]) == 1
    out = capsys.readouterr()
    reported = json.loads(out.out)
    assert [(f["code"], f["tool"]) for f in reported] == [("TL104", "set_limit")]
    assert (
        "1 stale entry" in out.err
        and "stale: tools.py:28: TL104 in `update_scheduled_transaction`" in out.err
    )


def test_cli_bad_baseline_is_one_line_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--baseline", "missing.json", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "baseline missing.json not found" in err and "Traceback" not in err


def test_cli_write_and_read_baseline_are_exclusive(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--write-baseline", "a.json", "--baseline", "b.json", "."]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


# --- --diff-base ----------------------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(project: Path) -> Path:
    (project / "pkg").mkdir()
    shutil.move(project / "tools.py", project / "pkg" / "tools.py")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "base")
    return project


def test_diff_base_reports_only_new_findings(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = repo / "pkg" / "tools.py"
    tools.write_text("# moved\n\n" + tools.read_text(encoding="utf-8") + NEW_DEFECT, encoding="utf-8")
    (repo / "pkg" / "fresh.py").write_text(
        "from typing import Annotated\nfrom agentdojo.functions_runtime import Depends\n"
        + NEW_DEFECT.replace("set_limit", "set_cap"),
        encoding="utf-8",
    )
    assert main(["check", "--diff-base", "HEAD", "--output-format", "json", "pkg"]) == 1
    out = capsys.readouterr()
    found = sorted((Path(f["filename"]).name, f["tool"]) for f in json.loads(out.out))
    assert found == [("fresh.py", "set_cap"), ("tools.py", "set_limit")]
    assert "6 finding(s) already present at HEAD" in out.err

    # From a subdirectory, naming the file relatively: same answer.
    monkeypatch.chdir(repo / "pkg")
    assert main(["check", "--diff-base", "HEAD", "--output-format", "json", "tools.py"]) == 1
    assert [f["tool"] for f in json.loads(capsys.readouterr().out)] == ["set_limit"]


def test_files_at_ref_reads_blobs_and_missing_files(repo: Path) -> None:
    (repo / "my tools.py").write_text("y = 2\n", encoding="utf-8")
    _git(repo, "add", "my tools.py")
    _git(repo, "commit", "-q", "-m", "a file name with a space")
    (repo / "new file.py").write_text("x = 1\n", encoding="utf-8")
    contents = files_at_ref("HEAD", ["pkg/tools.py", "new file.py", "pkg", "my tools.py", "/elsewhere/x.py"])
    assert contents["pkg/tools.py"] == FIXTURE.read_bytes()
    assert contents["my tools.py"] == b"y = 2\n"
    assert contents["new file.py"] is None and contents["pkg"] is None and contents["/elsewhere/x.py"] is None


@pytest.mark.parametrize(
    ("ref", "git_repo", "expected"),
    [
        ("no-such-ref", True, "not a commit in this repository"),
        ("HEAD", False, "is not inside a git repository"),
    ],
)
def test_diff_base_errors_are_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], ref: str, git_repo: bool, expected: str
) -> None:
    if git_repo:
        _git(project, "init", "-q")
    else:
        assert (
            subprocess.run(["git", "rev-parse"], cwd=project, capture_output=True, check=False).returncode
            != 0
        )
    assert main(["check", "--diff-base", ref, "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err


def test_cli_unwritable_baseline_is_one_line_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "blocker").write_text("")  # a file where the baseline's folder would be
    assert main(["check", "--write-baseline", "blocker/b.json", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write baseline blocker/b.json: blocker is not a directory" in err
