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
