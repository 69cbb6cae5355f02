"""bugbear's test: lint every .py file of the running interpreter's standard library and installed
site-packages without a single internal error. The whole sweep is slow (`pytest -m slow`, run by
.ci/run after the default suite); the default run lints a sample of the standard library."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from toollint.engine import INTERNAL_ERROR, RunResult, lint_paths
from toollint.settings import Settings


def assert_no_internal_error(result: RunResult) -> None:
    errors = [f"{f.path}: {f.message}" for f in result.findings if f.code == INTERNAL_ERROR]
    assert errors == [], f"{len(errors)} internal errors, first ones:\n" + "\n".join(errors[:20])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_no_internal_error_on_stdlib_and_site_packages() -> None:
    paths = sysconfig.get_paths()
    roots = sorted({Path(paths["stdlib"]), Path(paths["purelib"]), Path(paths["platlib"])})
    # every static rule, TL9 diagnostics; site-packages under the stdlib dir is skipped by the default
    # excludes when walking the stdlib and linted as its own root
    result = lint_paths([str(r) for r in roots if r.is_dir()], Settings(select=["TL"]), jobs=2)
    assert len(result.files) > 1000  # the walk really covered the installation
    assert_no_internal_error(result)


def test_no_internal_error_on_a_sample_of_the_stdlib() -> None:
    # The fast sample: the stdlib's top-level modules (about 200 files of every style and age).
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sample = sorted(str(p) for p in stdlib.glob("*.py"))
    result = lint_paths(sample, Settings(select=["TL"]), jobs=1)
    assert len(result.files) > 100
    assert_no_internal_error(result)


def test_a_file_too_large_to_analyse_is_a_tl906_not_the_machines_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28: a generated 50 MB file took 29 s and 5.7 GB; one over the estimate is refused unread."""
    from toollint.cli import main
    from toollint.engine import BYTES_PER_SOURCE_BYTE, STATIC_MEMORY_CEILING

    size = STATIC_MEMORY_CEILING // BYTES_PER_SOURCE_BYTE + 1000
    line = "value_0000000 = compute(1, 2, 3)\n"
    (tmp_path / "generated.py").write_text(line * (size // len(line) + 1))
    (tmp_path / "small.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["--isolated", "."]) == 1
    out = capsys.readouterr().out
    assert "generated.py:1:1: TL906 [too-large] file too large to analyse: 21.5 MB of source would take " \
           "about 2.0 GiB to parse, over the static run's 2.0 GiB memory ceiling" in out, out


# In a fresh interpreter: the ceiling lowers the address-space limit of the process it runs in.
CEILING_DRIVER = r"""
import sys
from toollint import engine
from toollint.settings import Settings
engine.STATIC_MEMORY_CEILING = 64 << 20  # a 64 MiB ceiling...
engine.BYTES_PER_SOURCE_BYTE = 1  # ...that the estimate does not see coming
result = engine.lint_paths([sys.argv[1]], Settings(), jobs=int(sys.argv[2]))
print([(f.code, f.message) for r in result.files for f in r.findings])
with open("/proc/self/status") as status:  # the limit is restored after the file
    print(next(l for l in status if l.startswith("VmPeak")))
import resource
print(resource.getrlimit(resource.RLIMIT_AS))
big = bytearray(256 << 20)  # the process itself is not capped any more
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_memory_ceiling_turns_a_runaway_analysis_into_a_tl906(tmp_path: Path, jobs: int) -> None:
    import subprocess
    import sys

    line = "value = [compute(1, 2, 3), compute(4, 5, 6)]\n"
    (tmp_path / "big.py").write_text(line * 40_000)  # 1.8 MB: a few hundred MB of syntax tree
    for i in range(20):
        (tmp_path / f"small_{i}.py").write_text("x = 1\n")
    proc = subprocess.run(
        [sys.executable, "-c", CEILING_DRIVER, str(tmp_path), str(jobs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "'TL906', \"file too large to analyse: its analysis ran out of memory (1.8 MB of source), over the "
        "static run's 64 MiB memory ceiling; the static rules skipped it" in proc.stdout
    ), proc.stdout
    assert "(-1, -1)" in proc.stdout
