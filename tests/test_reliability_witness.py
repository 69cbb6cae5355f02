"""Witnesses as hostile input (issue 28, item 3): replay runs only what the user named, reads only
regular files of bounded size, refuses an edited witness, and a witness is written atomically.

A "marker" is a file the planted code would create when imported or run: it must never appear."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.cli import replay_main
from toollint.dynamic.confirm import run_confirm
from toollint.dynamic.replay import replay
from toollint.dynamic.witness import save_witness, witness_digest

from toollint.settings import ConfirmSettings, Settings

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"


def bench_settings() -> Settings:
    return Settings(
        confirm=ConfirmSettings(
            adapter="toolkit", factory="bank:make_bank", sys_path=[str(BENCH)], deadline=5
        )
    )


@pytest.fixture(scope="module")
def witness_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real witness as --confirm writes it: set_balance_truthy drops balance=0.0 (arg.balance)."""
    found, errors = load_contracts([BENCH / "contracts" / "set_balance_truthy.yaml"])
    assert errors == []
    run = run_confirm(found, bench_settings(), witness_dir=tmp_path_factory.mktemp("w"))
    return Path(
        next(f.properties["witness"] for f in run.findings if f.properties["clause"] == "arg.balance")
    )


@pytest.fixture
def witness(witness_file: Path) -> dict[str, Any]:
    return json.loads(witness_file.read_text())  # type: ignore[no-any-return]


def resealed(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with a digest that matches it: a tamperer who recomputes the digest (it is a check
    against edits, not a signature), so the trust checks are what must stop it."""
    data = json.loads(json.dumps(data))
    data["digest"] = witness_digest(data)
    return data


def dump(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


# --- nothing the witness names runs ----------------------------------------------------------------


PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n"


def test_a_contract_a_witness_points_at_never_gets_its_adapter_file_run(
        witness: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "marker"
    evil = tmp_path / "evil"
    evil.mkdir()
    adapter = evil / "adapter_evil.py"
    adapter.write_text(
        PLANTED.format(marker=str(marker)) + "def make_adapter(options, shims):\n    raise SystemExit\n"
    )
    contract = evil / "set_balance_truthy.yaml"
    text = (BENCH / "contracts" / "set_balance_truthy.yaml").read_text()
    contract.write_text(text.replace("adapter: {name: toolkit}", f"adapter: {{name: {adapter}}}"))
    tampered = json.loads(json.dumps(witness))
    tampered["clause"]["contract"] = str(contract)
    tampered["worker"] = {"adapter": str(adapter), "options": {}, "python": sys.executable, "seed": 0}
    monkeypatch.chdir(tmp_path)
    assert replay_main([str(dump(evil / "w.json", resealed(tampered))), "--repeat", "1"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("NOT REPLAYED arg.balance: the witness names adapter"), out
    assert f"the adapter block of {contract} is not used" in out and "--trust-witness" in out
    assert not marker.exists()


def test_a_configuration_beside_a_witness_is_offered_not_used(
        witness: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "marker"
    shipped = tmp_path / "downloaded"
    shipped.mkdir()
    (shipped / "evilmod.py").write_text(
        PLANTED.format(marker=str(marker)) + "def make():\n    raise SystemExit\n"
    )
    (shipped / "pyproject.toml").write_text(
        "[tool.toollint.confirm]\nadapter = 'toolkit'\nfactory = 'evilmod:make'\n"
        f"sys_path = [{str(shipped)!r}]\n")
    tampered = json.loads(json.dumps(witness))
    tampered["worker"] = {
        "adapter": "toolkit",
        "options": {"factory": "evilmod:make", "sys_path": [str(shipped)]},
        "python": sys.executable,
        "seed": 0,
    }
    home = tmp_path / "elsewhere"
    home.mkdir()
    monkeypatch.chdir(home)  # the user's own folder, no configuration
    path = dump(shipped / "w.json", resealed(tampered))
    assert replay_main([str(path), "--repeat", "1"]) == 2
    out = capsys.readouterr().out
    assert "adapter options that differ from the project's in factory" in out, out
    assert f"--config {shipped / 'pyproject.toml'}" in out
    assert not marker.exists()


def test_the_users_own_configuration_replays_a_witness_from_its_folder(
        witness_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The path `check --confirm` prints: from the project, with no flags."""
    (tmp_path / "pyproject.toml").write_text(
        "[tool.toollint.confirm]\nadapter = 'toolkit'\nfactory = 'bank:make_bank'\n"
        f"sys_path = [{str(BENCH)!r}]\n")
    monkeypatch.chdir(tmp_path)
    assert replay_main([str(witness_file), "--repeat", "1"]) == 1
    assert capsys.readouterr().out.startswith("STILL VIOLATES arg.balance")


# --- an edited witness is refused, never FIXED -----------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("balance", float("inf")),
    ("balance", [[[[[]]]]]),
    ("balance", "x" * (50 << 20)),
    ("owner", "someone else"),
], ids=["inf", "nested", "50MB string", "extra argument"])
def test_an_edited_witness_is_refused_as_edited(witness: dict[str, Any], tmp_path: Path,
                                                 field: str, value: Any) -> None:
    edited = json.loads(json.dumps(witness))
    edited["probe"]["args"][field] = value
    outcome = replay(dump(tmp_path / "w.json", edited), repeat=1, settings=bench_settings())
    assert outcome.code == 2, outcome.sentence
    assert "was edited after toollint wrote it" in outcome.sentence


def test_an_edited_result_is_refused_and_a_witness_without_digest_too(witness: dict[str, Any],
                                                                       tmp_path: Path) -> None:
    edited = json.loads(json.dumps(witness))
    edited["probe"]["result"]["status"] = "error"
    assert (
        "was edited"
        in replay(dump(tmp_path / "a.json", edited), repeat=1, settings=bench_settings()).sentence
    )
    del edited["digest"]
    outcome = replay(dump(tmp_path / "b.json", edited), repeat=1, settings=bench_settings())
    assert outcome.code == 2 and "carries no digest" in outcome.sentence


# --- reads that end --------------------------------------------------------------------------------


def _replay_capped(witness: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`toollint replay WITNESS` in a process capped at 2 GiB and 30 s: a reader that does not stop
    (of /dev/zero, of a FIFO) fails this test instead of taking the machine's memory or hanging it."""
    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    code = "import sys; from toollint.dynamic.cli import replay_main; sys.exit(replay_main([sys.argv[1]]))"
    return subprocess.run([sys.executable, "-c", code, witness], check=False, capture_output=True, text=True,
                          timeout=30, cwd=cwd, preexec_fn=cap)


def test_a_device_witness_is_refused_at_once(tmp_path: Path) -> None:
    began = time.monotonic()
    proc = _replay_capped("/dev/zero", tmp_path)
    assert time.monotonic() - began < 10
    assert proc.returncode == 2, proc.stderr[-500:]
    assert proc.stdout.strip() == (
        "NOT REPLAYED: /dev/zero is a character device, not a regular file; a witness is a JSON "
        "file written by `toollint check --confirm`"
    )


def test_a_fifo_witness_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "w.json"
    os.mkfifo(fifo)
    proc = _replay_capped(str(fifo), tmp_path)
    assert proc.returncode == 2
    assert f"NOT REPLAYED: {fifo} is a FIFO (named pipe), not a regular file" in proc.stdout


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_witness_naming_a_device_or_fifo_contract_is_refused(witness: dict[str, Any], tmp_path: Path,
                                                                target: str) -> None:
    if target == "fifo":
        target = str(tmp_path / "c.yaml")
        os.mkfifo(target)
    moved = json.loads(json.dumps(witness))
    moved["clause"]["contract"] = target  # not covered by the digest: a contract may move
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + (2 << 30), hard))  # a reader that never stops fails here
    try:
        outcome = replay(dump(tmp_path / "w.json", moved), repeat=1, settings=bench_settings())
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert outcome.code == 2
    assert "the witness's contract cannot be loaded" in outcome.sentence
    assert "not a regular file" in outcome.sentence


# --- written whole or not at all -------------------------------------------------------------------


WRITER = """
import json, sys
from pathlib import Path
from toollint.dynamic.witness import save_witness
data = json.loads(Path(sys.argv[1]).read_text())
data["probe"]["args"]["note"] = sys.argv[3] * (32 << 20)  # a 32 MB witness
print("go", flush=True)
while True:
    save_witness(Path(sys.argv[2]), data)
    print("wrote", flush=True)
"""


def _kill_mid_write(source: Path, target: Path, fill: str, delay: float, writes: int = 0) -> None:
    """Kill -9 the writer `delay` s after its `writes`-th complete write (0: after it started)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(source), str(target), fill], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"go\n"
    for _ in range(writes):
        assert proc.stdout.readline() == b"wrote\n"
    time.sleep(delay)
    proc.kill()
    proc.wait()


def _assert_whole(path: Path, fills: set[str]) -> str:
    data = json.loads(path.read_text())  # never torn: it parses
    assert data["digest"] == witness_digest(data)
    note = data["probe"]["args"]["note"]
    assert len(note) == 32 << 20 and note[0] in fills
    return str(note[0])


def _kill_while_writing(source: Path, target: Path, fill: str) -> None:
    """Kill -9 the writer the moment a write is seen under way: a temporary file beside the target,
    or the target itself no longer its whole size (truncated to be written in place)."""
    whole = target.stat().st_size
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(source), str(target), fill], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"go\n"
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if [p for p in target.parent.iterdir() if p != target] or target.stat().st_size != whole:
                break
        else:
            raise AssertionError("no write seen within 60 s")
    finally:
        proc.kill()
        proc.wait()


def test_a_witness_killed_mid_write_is_the_old_one_or_the_new(witness_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "big.json"
    _kill_mid_write(witness_file, target, "a", 0.0, writes=1)  # a first, whole witness
    assert _assert_whole(target, {"a"}) == "a"
    _kill_while_writing(witness_file, target, "b")  # killed while rewriting it
    _assert_whole(target, {"a", "b"})
    _kill_mid_write(witness_file, target, "c", 0.4)  # and at a time, wherever the writer is then
    _assert_whole(target, {"a", "b", "c"})


@pytest.mark.slow
def test_a_witness_killed_at_many_points_is_never_torn(witness_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "big.json"
    _kill_mid_write(witness_file, target, "a", 0.0, writes=1)
    for i in range(12):
        _kill_mid_write(witness_file, target, "bc"[i % 2], 0.05 + 0.1 * i)
        _assert_whole(target, {"a", "b", "c"})


def test_save_witness_writes_a_digest_replay_accepts(witness: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    save_witness(path, witness)
    assert replay(path, repeat=1, settings=bench_settings()).code == 1


def test_ctrl_c_during_replay_is_one_line_not_a_traceback(
        witness_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import toollint.dynamic.replay as replay_module

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(replay_module, "replay", interrupted)
    assert replay_main([str(witness_file)]) == 2
    assert capsys.readouterr().out == "NOT REPLAYED: interrupted\n"


def test_the_seal_key_lives_in_the_sessions_folder_never_the_users_cache(
        witness_file: Path, private_seal_key: Path) -> None:
    """Sealing a witness (here, and in every toollint a test starts) writes the key under the test
    session's XDG_CACHE_HOME (tests/conftest.py), not the user's ~/.cache/toollint."""
    from toollint.dynamic.witness import seal_key_path

    key = private_seal_key / "toollint" / "witness-seal.key"
    assert seal_key_path() == key and not key.is_relative_to(Path.home() / ".cache")
    assert key.is_file() and len(key.read_bytes()) == 32  # --confirm sealed `witness_file` with it
    child = subprocess.run(
        [sys.executable, "-c", "from toollint.dynamic.witness import seal_key_path; print(seal_key_path())"],
        capture_output=True, text=True, check=True)
    assert child.stdout.strip() == str(key)
