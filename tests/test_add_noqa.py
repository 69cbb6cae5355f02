"""`toollint check --add-noqa` (ruff's option): a `# noqa: TLxxx` on every current finding's line,
merged with the comment already there, idempotent, written as --fix writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toollint.add_noqa import add_noqa

HEADER = "from typing import Annotated\n\nfrom agentdojo.functions_runtime import Depends\n\n"


def writer(name: str, returns: str) -> str:
    return (f'\n\ndef {name}(account: Annotated[dict, Depends("bank")], x: float) -> str:\n'
            f'    """Set {name}."""\n    return {returns}\n')


SOURCE = (HEADER
          + writer("set_plain", '"Updated successfully."')
          + writer("set_with_codes", '"Updated successfully."  # noqa: E501 -- long, on purpose')
          + writer("set_with_name", '"Updated successfully."  # noqa: literal-success-in-writer')
          + writer("set_other", '"Updated successfully."  # type: ignore[return-value]'))


def toollint(cwd: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", *argv], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=240, check=False)


def test_add_noqa_twice_leaves_the_file_as_after_once_and_the_check_passes(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(SOURCE)
    assert toollint(tmp_path, "tools.py").returncode == 1
    first = toollint(tmp_path, "--add-noqa", "tools.py")
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "Added 3 noqa directives to 1 file.\n")
    once = path.read_text()
    second = toollint(tmp_path, "--add-noqa", "tools.py")
    assert (second.returncode, second.stderr) == (0, "Added 0 noqa directives.\n")
    assert path.read_text() == once
    after = toollint(tmp_path, "tools.py")
    assert after.returncode == 0 and "4 suppressed" in after.stderr  # three added, one there already, after
    # Every existing comment and code is kept; the new code joins a noqa list before its reason.
    lines = once.splitlines()
    assert '    return "Updated successfully."  # noqa: TL101' in lines
    assert '    return "Updated successfully."  # noqa: E501, TL101 -- long, on purpose' in lines
    assert (
        '    return "Updated successfully."  # noqa: literal-success-in-writer' in lines
    )  # already suppressed
    assert '    return "Updated successfully."  # type: ignore[return-value]  # noqa: TL101' in lines


def test_line_endings_and_encoding_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    text = "# -*- coding: latin-1 -*-\n" + SOURCE.replace("Updated", "Mis à jour")
    path.write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    assert toollint(tmp_path, "--add-noqa", "tools.py").returncode == 0
    data = path.read_bytes()
    assert data.count(b"\r\n") == text.count("\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert "Mis à jour successfully.\"  # noqa: TL101" in data.decode("latin-1")


def test_a_line_ending_inside_a_string_or_a_backslash_is_left_with_a_warning() -> None:
    text = 'x = """a\nb"""\ny = 1 + \\\n    2\nz = 3\n'
    added = add_noqa(text, {1: {"TL101"}, 3: {"TL101"}, 5: {"TL102", "TL101"}})
    assert added.text == 'x = """a\nb"""\ny = 1 + \\\n    2\nz = 3  # noqa: TL101, TL102\n'
    assert added.skipped == [(1, "it ends inside a string"), (3, "it continues with a backslash")]


def test_stdin_is_refused(tmp_path: Path) -> None:
    proc = toollint(tmp_path, "--add-noqa", "--stdin-filename", "t.py", "-", stdin=SOURCE)
    assert proc.returncode == 2 and "cannot be used with stdin" in proc.stderr


def test_after_a_baseline_only_new_findings_get_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(HEADER + writer("set_old", '"Updated successfully."'))
    assert toollint(tmp_path, "--write-baseline", "base.json", "tools.py").returncode == 0
    path.write_text(path.read_text() + writer("set_new", '"Saved successfully."'))
    assert toollint(tmp_path, "--baseline", "base.json", "--add-noqa", "tools.py").returncode == 0
    marked = [ln for ln in path.read_text().splitlines() if "noqa" in ln]
    assert marked == ['    return "Saved successfully."  # noqa: TL101']


@pytest.mark.parametrize("doc", ["README.md", "docs/integrations.md"])
def test_the_docs_name_the_option(doc: str) -> None:
    assert "--add-noqa" in (Path(__file__).resolve().parents[1] / doc).read_text(encoding="utf-8")
