"""tau2-bench with no contract anywhere (`--no-bundled-contracts`): the paper's two published defects,
`refuel_data` (TL201) and `cancel_reservation` (TL203), confirmed from TL102 and TL105 alone, by the
command a maintainer would type; the contracts it derived check clean against the snapshot. Skips
with a one-line reason where the snapshot or Python 3.12 is absent. Slow (a tau2 host over every
domain, about 40 s); the same oracles on the toolkit fixture (tests/test_derived_fixture.py) are the
fast sample of the default run."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from toollint.contracts.cli import main as contracts_main
from toollint.contracts.loader import load_contracts


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], cwd: Path) -> None:
        self.code, self.out, self.err, self.cwd = proc.returncode, proc.stdout, proc.stderr, cwd

    def line(self, code: str, tool: str) -> str:
        return next(line for line in self.out.splitlines() if f" {code} " in line and tool in line)


@pytest.fixture(scope="module")
def run(tau2_python: Path, tau2_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("tau2-derived")
    proc = subprocess.run(
        [sys.executable, "-m", "toollint", "check", "--confirm", "--no-bundled-contracts",
         "--python", str(tau2_python), str(tau2_checkout / "src" / "tau2" / "domains")],
        capture_output=True, text=True, timeout=1800, check=False, cwd=tmp)
    return Run(proc, tmp)


@pytest.mark.slow
def test_both_published_defects_are_confirmed_from_the_findings_alone(run: Run) -> None:
    assert run.code == 1, run.err
    refuel = run.line("TL201", "refuel_data(")
    assert "VIOLATES pre.commented_guard_629 (TL201 Unenforced Precondition)" in refuel
    assert (
        "succeeded although pre.commented_guard_629 was false (where pre.agent_db.lines{line_id=L" in refuel
    )
    assert "}.status='Suspended')" in refuel
    seats = run.line("TL203", "eff.undoes_book_reservation_available_seats")
    assert "book_reservation(" in seats and "then cancel_reservation(reservation_id=" in seats
    assert "/available_seats/" in seats and "not back to" in seats
    # The static findings that pointed at them carry the verdicts.
    assert re.search(r"TL102 \[commented-out-guard\] `refuel_data` .*\[derived VIOLATES: ", run.out)
    assert re.search(r"TL105 \[unpaired-verb-field\] .*`db.flights\[\*\].dates\[\*\].available_seats\[\*\]`"
                     r".*\[derived VIOLATES: ", run.out)
    # A cancelled reservation stays listed under its user: a soft delete. The derived round trip used
    # to refute TL105's finding on it; since issue 21 a closing cancel's history lists are not owed by
    # the partner, so the rule no longer makes it.
    assert "`db.users[*].reservations`" not in run.out


@pytest.mark.slow
def test_no_authored_contract_ran_and_the_derived_rows_are_counted_apart(run: Run) -> None:
    summary = [line for line in run.err.splitlines() if line.startswith("confirm")]
    assert not any(re.match(r"confirm: \d+ tool\(s\)", line) for line in summary)  # no authored contract
    derived = next(
        line for line in summary if line.startswith("confirm: derived oracles: ") and "tool(s)" in line
    )
    # Two tools: refuel_data and cancel_reservation. (banking_knowledge's example tool is not flagged
    # since its "executed successfully" reply claims only that it ran; suspend_line's logged `reason`
    # rests on a low-confidence premise since issue 21: not reported by default, no oracle.)
    assert re.search(
        r"confirm: derived oracles: 2 tool\(s\): 2 VIOLATES, 0 FLAKY, 0 CONFORMS, 0 UNTESTABLE", derived
    )


@pytest.mark.slow
def test_the_derived_contracts_check_clean_against_the_snapshot(run: Run, tau2_checkout: Path) -> None:
    directory = run.cwd / ".toollint" / "derived"
    contracts, errors = load_contracts([directory])
    assert errors == [] and all(c.derived for c in contracts)
    assert sorted(c.tool_name for c in contracts) == ["cancel_reservation", "refuel_data"]
    out, err = io.StringIO(), io.StringIO()
    code = contracts_main(
        ["check", "--package-dir", f"tau2={tau2_checkout / 'src' / 'tau2'}", str(directory)],
        stdout=out,
        stderr=err,
    )
    assert (code, out.getvalue()) == (0, "All contracts passed.\n"), err.getvalue()


# docs/confirm.md's tau2 run is a worked example (`tau2-derived-confirm`) that tests/test_docs_examples.py
# runs as shown.


@pytest.mark.slow
def test_the_derived_contract_docs_contracts_md_quotes_is_the_file_written(
    run: Run, tau2_checkout: Path
) -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "contracts.md").read_text()
    block = doc.split("`.toollint/derived/TelecomTools.refuel_data.yaml`, as is):\n\n```yaml\n", 1)[1].split(
        "```", 1
    )[0]
    written = (run.cwd / ".toollint" / "derived" / "TelecomTools.refuel_data.yaml").read_text()
    assert written.replace(str(tau2_checkout), "shared/benchmarks/tau2-bench") == block
