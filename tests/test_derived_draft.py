"""`toollint contracts draft --from-findings PATH`: one reviewable contract per flagged tool, written
with what it already confirms, clean under `contracts check`; bad input is one line and exit 2."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from toollint.contracts.cli import main
from toollint.contracts.loader import load_contracts

BENCH = Path(__file__).parent / "fixtures" / "derived_bench"
DOC = Path(__file__).resolve().parents[1] / "docs" / "contracts.md"
CONFIG = (
    '[tool.toollint.confirm]\nadapter = "toolkit"\nfactory = "bank:make_bank"\nsys-path = ["."]\n'
    "deadline = 10\n"
)


def draft(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["draft", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str, str]:
    project = tmp_path_factory.mktemp("draft") / "bench"
    shutil.copytree(BENCH, project)
    (project / "pyproject.toml").write_text(CONFIG)
    out_dir = project / "contracts" / "derived"
    code, out, err = draft("--from-findings", str(project / "bank.py"), "-o", str(out_dir))
    return project, code, out, err


def test_one_contract_per_flagged_tool_saying_what_it_confirms(drafted: tuple[Path, int, str, str]) -> None:
    _, code, out, err = drafted
    assert code == 0, err
    lines = sorted(out.splitlines())
    assert len(lines) == 7 and all(line.startswith("wrote ") for line in lines)
    top_up = next(line for line in lines if "Bank.top_up.yaml" in line)
    assert top_up.endswith(": 1 clause(s); confirms TL201 pre.commented_guard_71")
    release = next(line for line in lines if "Bank.release_funds.yaml" in line)
    assert "confirms TL203 eff.undoes_hold_funds_balance" in release
    withdraw = next(line for line in lines if "Bank.withdraw.yaml" in line)
    assert withdraw.endswith("CONFORMS: confirms nothing, the findings it tests are refuted")
    # "" legal for a nickname or an e-mail by their `str` annotation alone: sent as legal, it would confirm
    # the finding's own premise; the clauses are kept, untested, saying why
    contact = next(line for line in lines if "Bank.update_contact.yaml" in line)
    assert contact.endswith("CONFORMS: confirms nothing; not tested: arg.nickname (legality_unknown), "
                            "arg.email (legality_unknown)")


def test_what_it_writes_loads_and_checks_clean(drafted: tuple[Path, int, str, str]) -> None:
    project, *_ = drafted
    directory = project / "contracts" / "derived"
    contracts, errors = load_contracts([directory])
    assert errors == [] and len(contracts) == 7 and all(c.derived for c in contracts)
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(directory)], stdout=out, stderr=err) == 0, out.getvalue() + err.getvalue()
    assert out.getvalue() == "All contracts passed.\n"


def test_the_documented_run_prints_what_the_doc_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/contracts.md's `draft --from-findings` example, run as written in the fixture project."""
    text = DOC.read_text()
    section = text[text.index("## `toollint contracts draft --from-findings PATH`"):]
    documented = [line for line in section.split("## `toollint contracts draft TOOLREF`")[0].splitlines()
                  if line.startswith("wrote ")]
    project = tmp_path / "bench"
    shutil.copytree(BENCH, project)
    (project / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(project)
    code, out, err = draft("--from-findings", "bank.py", "-o", "contracts/derived")
    assert code == 0, err
    assert len(documented) == 7 and sorted(out.splitlines()) == sorted(documented)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--from-findings", "no/such/dir"], "no/such/dir: no such file or directory"),
        (["pkg.mod:tool", "--from-findings", "."], "give a TOOLREF or --from-findings PATH, not both"),
        ([], "give a TOOLREF (package.module:function) or --from-findings PATH"),
        (
            ["--from-findings", str(BENCH), "--python", "/no/such/python"],
            "--python /no/such/python: no such file",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_two(argv: list[str], words: str) -> None:
    code, out, err = draft(*argv)
    assert code == 2 and out == "" and words in err and len(err.strip().splitlines()) == 1


def test_nothing_to_derive_is_said_and_exit_one(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("def helper(x: int) -> int:\n    return x + 1\n")
    code, out, err = draft("--from-findings", str(tmp_path), "-o", str(tmp_path / "out"))
    assert code == 1 and out == ""
    assert "no static finding" in err and "nothing to derive" in err
