"""`check --no-bundled-contracts`: the bundled libraries are left out of `--confirm`; without
`--confirm` the flag does nothing, and the run says so instead of ignoring it."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.cli import main

FLAGGED = '''\
STATE = {"accounts": {}}


def tool(fn):
    return fn


@tool
def set_note(account_id: str, note: str) -> str:
    """Set the note of an account; note: the new note, empty to clear it."""
    if note:
        STATE["accounts"][account_id] = note
    return "Note updated."
'''


def test_without_confirm_the_flag_is_said_to_do_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench.py").write_text(FLAGGED)
    code = main(["check", "--no-bundled-contracts", "bench.py"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == 1 and "TL104" in out  # the static findings are reported as ever
    assert "warning: --no-bundled-contracts has no effect without --confirm or --confirm-all" in out + err


def test_with_confirm_and_no_host_the_run_says_what_the_oracles_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench.py").write_text(FLAGGED)
    main(["check", "--confirm", "--no-bundled-contracts", "bench.py"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "has no effect" not in out + err
    # A flagged tool outside any profile, no factory configured: derivable, but nowhere to run.
    assert (
        "confirm: derived oracles need a host for set_note: no benchmark profile hosts them; set `factory`"
        in err
    )
