"""The distribution: a name of our own on the package index, the `toollint` command and import kept,
every package shipped, and the docs installing what pyproject.toml builds."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# "toollint" on the package index is another project's linter (checked when the name was chosen:
# `pip index versions toollint-bench` finds no versions; `toollint` has releases of its own).
NOT_OURS = "toollint"


def test_the_distribution_name_is_ours_and_the_command_is_toollint() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "toollint-bench" != NOT_OURS
    assert project["scripts"] == {"toollint": "toollint.cli:main"}
    assert project["entry-points"]["flake8.extension"] == {"TL": "toollint.flake8_plugin:ToollintChecker"}


def test_the_docs_install_that_name() -> None:
    for doc in ("README.md", "docs/integrations.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        installs = re.findall(r"pip install ([\w.\-\[\]']+)", text)
        named = [i for i in installs if not i.startswith((".", "'.", "-"))]
        assert named and set(named) == {"toollint-bench"}, (doc, installs)


def test_every_package_is_listed_for_a_non_editable_install() -> None:
    # `pip install .` ships only the packages listed: a new subpackage left out breaks every install.
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "toollint").rglob("__init__.py")}
    on_disk = {name for name in on_disk if "examples" not in name.split(".")[1:] or name == "toollint.examples"}
    assert on_disk - listed == set()


def test_sarif_needs_no_object_model() -> None:
    # The SARIF writer builds plain dicts; sarif-om is no longer a dependency.
    assert not any(d.startswith("sarif-om") for d in PYPROJECT["project"]["dependencies"])
