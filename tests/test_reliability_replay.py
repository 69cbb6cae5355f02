"""`toollint replay` on witnesses that cannot be trusted (issue 17, items 2, 4, 9, 12): malformed
files are exit 2 with the reason, never a traceback or exit 1 (which reads as a confirmed defect);
a clause gone from the contract is exit 2, not FIXED; a witness naming an interpreter, adapter or
adapter options the project does not configure is refused unless --trust-witness."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.cli import replay_main
from toollint.dynamic.confirm import run_confirm
from toollint.dynamic.replay import replay, witness_problem

from toollint.settings import Settings

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
HOSTILE = Path(__file__).parent / "fixtures" / "hostile_host" / "adapter_hostile.py"


def bench_settings(root: Path = BENCH) -> Settings:
    return Settings(
        confirm={"adapter": "toolkit", "factory": "bank:make_bank", "sys_path": [str(root)], "deadline": 5}
    )


@pytest.fixture(scope="module")
def witness(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real witness: set_balance_truthy drops balance=0.0 (arg.balance, TL202)."""
    found, errors = load_contracts([BENCH / "contracts" / "set_balance_truthy.yaml"])
    assert errors == []
    run = run_confirm(found, bench_settings(), witness_dir=tmp_path_factory.mktemp("w"))
    path = next(f.properties["witness"] for f in run.findings if f.properties["clause"] == "arg.balance")
    return json.loads(Path(path).read_text())  # type: ignore[no-any-return]


def write(tmp_path: Path, data: Any, name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_every_witness_the_checker_writes_matches_the_schema(witness: dict[str, Any]) -> None:
    assert witness_problem(witness) is None


def _set(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    *parents, leaf = dotted.split(".")
    node = data
    for key in parents:
        node = node[key]
    if value is KeyError:
        del node[leaf]
    else:
        node[leaf] = value
    return data


MALFORMED: list[tuple[str, Any, str]] = [
    ("deep JSON", "[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ("seed NaN", ("worker.seed", float("nan")), "expected integer, got number in worker > seed"),
    ("seed Infinity", ("worker.seed", float("inf")), "expected integer, got number in worker > seed"),
    ("probe.args a list", ("probe.args", [1, 2]), "expected object, got array in probe > args"),
    ("top level a list", "[1, 2, 3]", "expected object, got array at top level"),
    ("no clause", ("clause", KeyError), "missing required key 'clause' at top level"),
    ("clause id a number", ("clause.id", 7), "expected string, got integer in clause > id"),
    (
        "contract null",
        ("clause.contract", None),
        "expected string, got null in clause 'arg.balance' > contract",
    ),
    ("options a string", ("worker.options", "rm -rf"), "expected object, got string in worker > options"),
    ("code not TL2xx", ("code", "TL999"), "'TL999' is not well-formed in code"),
    ("history positions strings", ("history_positions", ["0"]), "expected integer, got string"),
    (
        "partner malformed",
        ("partner", {"kind": "arg", "tool": "t", "args": "x"}),
        "expected object, got string",
    ),
    ("diff not a list", ("probe.diff", {"op": "add"}), "expected array, got object in probe > diff"),
    ("empty file", "", "not JSON"),
    ("not UTF-8", b"\xff\xfe{}", "not UTF-8"),
    ("newer version", ("witness_version", 99), "is a version 99 witness"),
]


@pytest.mark.parametrize(("name", "change", "reason"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_witness_is_exit_2_with_the_reason(
        witness: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        name: str, change: Any, reason: str) -> None:
    path = tmp_path / "w.json"
    if isinstance(change, bytes):
        path.write_bytes(change)
    elif isinstance(change, str):
        path.write_text(change)
    else:
        path.write_text(json.dumps(_set(witness, *change)))
    assert replay_main([str(path), "--repeat", "1"]) == 2
    out = capsys.readouterr()
    assert out.out.startswith("NOT REPLAYED") and reason in out.out, out.out
    assert out.out.count("\n") == 1 and "Traceback" not in out.err


def test_a_witness_whose_clause_left_the_contract_is_not_replayed_rather_than_fixed(
        witness: dict[str, Any], tmp_path: Path) -> None:
    contract = tmp_path / "set_balance_truthy.yaml"
    text = (BENCH / "contracts" / "set_balance_truthy.yaml").read_text()
    contract.write_text(text.replace("id: arg.balance", "id: arg.balance_renamed"))
    moved = _set(witness, "clause.contract", str(contract))
    outcome = replay(write(tmp_path, moved), repeat=1, settings=bench_settings())
    assert outcome.code == 2, outcome.sentence
    assert outcome.sentence == (f"NOT REPLAYED arg.balance: the contract {contract} no longer has clause "
                                "'arg.balance'")


def test_the_witness_as_recorded_replays_under_the_project_configuration(witness: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    assert replay(write(tmp_path, witness), repeat=1, settings=bench_settings()).code == 1


@pytest.mark.parametrize(("field", "value", "says"), [
    ("worker.python", "/tmp/evil/bin/python", "interpreter /tmp/evil/bin/python"),
    ("worker.adapter", str(HOSTILE), f"adapter {str(HOSTILE)!r}, the project's is 'toolkit'"),
    ("worker.options.factory", "os:abort", "adapter options that differ from the project's in factory"),
    ("worker.options.sys_path", ["/tmp/evil"], "in sys_path"),
])
def test_a_witness_naming_another_host_is_refused_unless_trusted(
        witness: dict[str, Any], tmp_path: Path, field: str, value: Any, says: str) -> None:
    evil = _set(witness, field, value)
    outcome = replay(write(tmp_path, evil), repeat=1, settings=bench_settings())
    assert outcome.code == 2 and says in outcome.sentence, outcome.sentence
    assert "--trust-witness" in outcome.sentence


def test_trust_witness_runs_the_recorded_host(witness: dict[str, Any], tmp_path: Path) -> None:
    # A project configured elsewhere; the witness's own (here: the real one) runs only when trusted.
    other = Settings(confirm={"adapter": "toolkit", "factory": "bank:make_bank", "sys_path": [str(tmp_path)]})
    path = write(tmp_path, witness)
    assert replay(path, repeat=1, settings=other).code == 2
    assert replay(path, repeat=1, settings=other, trust_witness=True).code == 1


def test_python_on_the_command_line_is_the_users_choice(witness: dict[str, Any], tmp_path: Path) -> None:
    moved = _set(witness, "worker.python", "/somewhere/else/bin/python")  # the venv moved
    assert (
        replay(write(tmp_path, moved), repeat=1, python=sys.executable, settings=bench_settings()).code == 1
    )


def test_replay_offers_the_configuration_found_from_the_witness_folder(
        witness: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "proj"
    shutil.copytree(BENCH, project)
    (project / "pyproject.toml").write_text(
        "[tool.toollint]\ncontract-dirs = ['contracts']\n[tool.toollint.confirm]\nadapter = 'toolkit'\n"
        f"factory = 'bank:make_bank'\nsys-path = [{str(BENCH)!r}]\n")
    wdir = project / ".toollint" / "witnesses"
    wdir.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # not the project: the witness's folder leads to it, as an offer only
    path = write(wdir, witness)
    assert replay_main([str(path), "--repeat", "1"]) == 2
    assert f"--config {project / 'pyproject.toml'}" in capsys.readouterr().out
    assert replay_main([str(path), "--repeat", "1", "--config", str(project / "pyproject.toml")]) == 1
    assert capsys.readouterr().out.startswith("STILL VIOLATES arg.balance")
    monkeypatch.chdir(project)  # in the project, as `check --confirm` prints it: no flags
    assert replay_main([str(path), "--repeat", "1"]) == 1


@pytest.mark.parametrize("deadline", ["-1", "0", "nan", "soon"])
def test_replay_with_a_bad_deadline_is_exit_2_in_one_line(
        witness: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], deadline: str) -> None:
    assert replay_main([str(write(tmp_path, witness)), f"--deadline={deadline}"]) == 2
    err = capsys.readouterr().err
    assert f"argument --deadline: must be a positive number of seconds, not '{deadline}'" in err
    assert "Traceback" not in err
