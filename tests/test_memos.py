"""What a run learnt of the file system is forgotten when the next run in the same process starts
(`toollint.memos`): a test session or an editor lints again after files appeared, or from another
working directory where the same relative paths name other files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toollint.engine import lint_paths
from toollint.settings import Settings

TOOLS = '''\
from pkg.utils import save_email


def tool(fn):
    return fn


@tool
def change_email(user_id: str, new_email: str) -> str:
    """Change a user's email."""
    save_email(DB, user_id, new_email)
    return "Email updated."


DB = {"users": {}}
'''
ALONE = TOOLS.replace("from pkg.utils import save_email\n", "def save_email(db, user_id, email):\n    pass\n")
UTILS = '''\
def save_email(db, user_id, email):
    db.users[user_id]["email"] = email
'''


def _package(root: Path, tools: str, utils: str | None) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "tools.py").write_text(tools)
    if utils is not None:
        (root / "pkg" / "utils.py").write_text(utils)
    return root


def test_a_helper_module_that_appears_between_two_runs_is_followed(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_package(tmp_path, TOOLS, None))
    assert lint_paths(["pkg/tools.py"], Settings(), jobs=1).writer_count == 0  # nothing to follow yet
    (tmp_path / "pkg" / "utils.py").write_text(UTILS)
    # The module search of the first run found no pkg/utils.py; this run looks again.
    assert lint_paths(["pkg/tools.py"], Settings(), jobs=1).writer_count == 1


def test_a_run_in_another_folder_rests_on_none_of_the_first_runs_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_package(tmp_path / "first", TOOLS, UTILS))
    first = lint_paths(["pkg"], Settings(), jobs=1)
    assert [(r.path.replace(os.sep, "/"), [dep for dep, _ in r.reached]) for r in first.files
            if r.path.endswith("tools.py")] == [("pkg/tools.py", ["pkg/utils.py"])]
    # Same relative paths, another project: its tools.py imports nothing, so its result (the cache's key)
    # rests on no file, whatever the earlier run's tools.py reached.
    monkeypatch.chdir(_package(tmp_path / "second", ALONE, None))
    second = lint_paths(["pkg"], Settings(), jobs=1)
    tools = [(r.path.replace(os.sep, "/"), r.reached) for r in second.files if r.path.endswith("tools.py")]
    assert tools == [("pkg/tools.py", ())]
