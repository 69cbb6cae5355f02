"""`check --confirm` under faults (issue 17): a benchmark too slow to start, bad limits, a missing
interpreter, a memory cap, malformed contracts. The static findings and the rest of the run survive
every one of them; a usage or configuration error is exit 2 with one line."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from toollint.cli import main

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
CONFIG = """
[tool.toollint]
contract-dirs = ["contracts"]
tool-decorators = ["tool"]

[tool.toollint.confirm]
adapter = "toolkit"
factory = "{factory}"
sys-path = ["."]
{extra}
"""
SLOW_BANK = """
import time
from bank import make_bank as _make_bank

def make_bank():
    time.sleep(60)  # a benchmark slower to build than any deadline here
    return _make_bank()
"""


def project(
    root: Path, monkeypatch: pytest.MonkeyPatch, factory: str = "bank:make_bank", extra: str = ""
) -> Path:
    shutil.copytree(BENCH, root)
    (root / "slow_bank.py").write_text(SLOW_BANK)
    (root / "pyproject.toml").write_text(CONFIG.format(factory=factory, extra=extra))
    monkeypatch.chdir(root)
    return root


def test_a_benchmark_that_cannot_start_in_time_is_untestable_once_and_the_static_findings_stay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path / "p", monkeypatch, "slow_bank:make_bank", "deadline = 1\nstartup-deadline = 2")
    began = time.monotonic()
    code = main(["check", "--confirm", "--output-format", "json", "bank.py"])
    out = capsys.readouterr()
    assert code == 1, out.err  # the static findings, not an internal error (was: RecursionError, exit 2)
    assert time.monotonic() - began < 60  # one start-up, not a restart per request
    findings = json.loads(out.out)
    static = [f for f in findings if f["code"].startswith("TL1")]
    assert static and all(
        f["properties"]["verdict"] == "UNTESTABLE" for f in static if "verdict" in f["properties"]
    )
    untestable = [line for line in out.err.splitlines() if line.startswith("confirm: UNTESTABLE")]
    assert len(untestable) == 1 and "start_timeout" in untestable[0], out.err
    assert "did not start within 2 s" in untestable[0]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("deadline = -1", "'deadline' in {config} [tool.toollint.confirm] must be greater than 0 (got -1)"),
        (
            "deadline = inf",
            (
                "'deadline' in {config} [tool.toollint.confirm] must be a positive, finite number of "
                "seconds (got inf)"
            ),
        ),
        (
            "startup-deadline = -5",
            ("'startup-deadline' in {config} [tool.toollint.confirm] must be greater than 0 (got -5)"),
        ),
        (
            "startup-deadline = nan",
            ("'startup-deadline' in {config} [tool.toollint.confirm] must be greater than 0 (got nan)"),
        ),
        (
            'max-memory = "lots"',
            (
                "'max-memory' in {config} [tool.toollint.confirm] must be a size such as \"2 GiB\" "
                "or a number of bytes (got 'lots')"
            ),
        ),
        (
            "max-memory = 1024",
            (
                "'max-memory' in {config} [tool.toollint.confirm] must be at least 64 MiB (an "
                "interpreter needs that much to start) (got 1024)"
            ),
        ),
    ],
)
def test_a_bad_confirm_limit_is_exit_2_naming_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        setting: str, message: str) -> None:
    root = project(tmp_path / "p", monkeypatch, extra=setting)
    assert main(["check", "--confirm", "bank.py"]) == 2
    err = capsys.readouterr().err
    assert err == f"toollint: error: {message.format(config=root / 'pyproject.toml')}\n"


def test_a_missing_python_is_exit_2_not_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path / "p", monkeypatch)
    missing = tmp_path / "nope" / "python"
    assert main(["check", "--confirm", "--python", str(missing), "bank.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"toollint: error: --python: {missing}: no such file") and err.count("\n") == 1


def test_max_memory_is_passed_to_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path / "p", monkeypatch, extra='max-memory = "1 GiB"\ndeadline = 3')
    assert main(["check", "--confirm", "--witness-dir", "w", "bank.py"]) == 1
    witness = json.loads(next((tmp_path / "p" / "w").glob("*.json")).read_text())
    assert witness["worker"]["max_memory"] == 1 << 30  # and replay runs under the same cap
