"""bugbear's test: lint every .py file of the running interpreter's standard library and installed
site-packages without a single internal error. Deselect with `-m "not slow"`."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from toollint.engine import INTERNAL_ERROR, lint_paths
from toollint.settings import Settings


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_no_internal_error_on_stdlib_and_site_packages() -> None:
    paths = sysconfig.get_paths()
    roots = sorted({Path(paths["stdlib"]), Path(paths["purelib"]), Path(paths["platlib"])})
    # every static rule, TL9 diagnostics; site-packages under the stdlib dir is skipped by the default
    # excludes when walking the stdlib and linted as its own root
    result = lint_paths([str(r) for r in roots if r.is_dir()], Settings(select=["TL"]), jobs=2)
    assert len(result.files) > 1000  # the walk really covered the installation
    errors = [f"{f.path}: {f.message}" for f in result.findings if f.code == INTERNAL_ERROR]
    assert errors == [], f"{len(errors)} internal errors, first ones:\n" + "\n".join(errors[:20])
