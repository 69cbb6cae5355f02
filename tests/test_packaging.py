"""The distribution: a name of our own on the package index, the `toollint` command and import kept,
every package shipped, and the docs installing what pyproject.toml builds."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

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
    assert project["scripts"] == {"toollint": "toollint.cli:run"}
    assert project["entry-points"]["flake8.extension"] == {"TL": "toollint.flake8_plugin:ToollintChecker"}


def test_no_doc_installs_the_unpublished_name_and_each_says_it_is_not_published() -> None:
    # `toollint-bench` is reserved on the package index but not published: `pip install toollint-bench`
    # fails for every reader, so the docs install a clone or a wheel built from one
    # (tests/test_docs_examples.py runs each install line's check) and say plainly why.
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        commands = [
            ln for ln in text.splitlines() if re.match(r"\s*(?:[$-] )?(?:- run: )?pip install", ln.strip())
        ]
        named = [c for c in commands if {"toollint", "toollint-bench"} & set(c.split("#")[0].split())]
        assert not named, (doc, named)
        assert "github.com/toollint" not in text, doc
    for doc in ("README.md", "docs/integrations.md"):
        assert "not yet published" in (ROOT / doc).read_text(encoding="utf-8"), doc
    assert "urls" not in PYPROJECT["project"], "no guessed Homepage: the repository has no public URL yet"


def test_toollint_help_names_no_install_that_fails() -> None:
    import subprocess

    helps = [
        subprocess.run(
            [sys.executable, "-m", "toollint", *args, "--help"], capture_output=True, text=True, check=False
        ).stdout
        for args in ((), ("check",))
    ]
    assert all(h.strip() for h in helps)
    assert not any("pip install" in h or "toollint-bench" in h for h in helps)


PROFILES = ROOT / "toollint" / "profiles"


def test_every_package_is_listed_for_a_non_editable_install() -> None:
    # `pip install .` ships only the packages listed, and the profile folders the `toollint.profiles`
    # glob ships whole: a new subpackage anywhere else, left out, breaks every install.
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "toollint").rglob("__init__.py")}
    on_disk = {
        name for name in on_disk if "examples" not in name.split(".")[1:] or name == "toollint.examples"
    }
    assert {n for n in on_disk if not n.startswith("toollint.profiles.")} - listed == set()
    assert not any(n.startswith("toollint.profiles.") for n in listed), "a profile ships by the glob"
    assert PYPROJECT["tool"]["setuptools"]["package-data"]["toollint.profiles"] == ["*/**/*"]


def _profile_files() -> list[str]:
    """Every file of every profile folder, as the wheel names it (bytecode aside)."""
    return sorted(
        "toollint/" + p.relative_to(ROOT / "toollint").as_posix()
        for p in PROFILES.glob("*/**/*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def test_a_profile_folder_ships_whole_with_no_entry_of_its_own(wheel: list[str]) -> None:
    # Issue 25: a benchmark profile is one folder plus its name in the registry data (builtin.py);
    # packaging picks up its modules, its host/ folder and its contracts with no line in pyproject.toml.
    from toollint.profiles.builtin import BENCHMARKS

    folders = sorted(p.name for p in PROFILES.iterdir() if (p / "__init__.py").is_file())
    assert sorted(BENCHMARKS) == folders
    shipped = {n for n in wheel if n.startswith("toollint/profiles/")}
    assert set(_profile_files()) <= shipped
    for name in folders:
        assert f"toollint/profiles/{name}/__init__.py" in shipped
    assert {"toollint/profiles/tau2/host/adapter.py", "toollint/profiles/taubench/host/validation_host.py",
            "toollint/profiles/tau2/contracts/airline/cancel_reservation.yaml"} <= shipped
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in wheel)


def test_sarif_needs_no_object_model() -> None:
    # The SARIF writer builds plain dicts; sarif-om is no longer a dependency.
    assert not any(d.startswith("sarif-om") for d in PYPROJECT["project"]["dependencies"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], str, str]:
    """A wheel built from a copy of the checkout (a stray bytecode file in a profile folder included):
    its file names, its METADATA, and the build's output."""
    import shutil
    import subprocess
    import zipfile

    tmp_path = tmp_path_factory.mktemp("wheel")
    source = (
        tmp_path / "src"
    )  # pip builds in the tree it is given: not in the checkout (no build/ left there)
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__", "tests", "bench"),
    )
    stray = source / "toollint" / "profiles" / "taubench" / "__pycache__" / "tasks.cpython-311.pyc"
    stray.parent.mkdir()
    stray.write_bytes(b"")
    build = subprocess.run(  # -v: the build backend's own warnings are shown
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("toollint_bench-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    return names, metadata, build.stdout + build.stderr


@pytest.fixture(scope="module")
def wheel(built: tuple[list[str], str, str]) -> list[str]:
    return built[0]


def test_the_wheel_ships_the_licence_and_the_docs_in_the_current_metadata_form(
    built: tuple[list[str], str, str],
) -> None:
    # PEP 639: `license = "MIT"` plus `license-files` (the table form is deprecated by setuptools); the
    # LICENSE file and docs/ (what SARIF's helpUri points at) travel in the wheel.
    names, metadata, output = built
    assert PYPROJECT["project"]["license"] == "MIT" and PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "deprecat" not in output.lower() and "absent from the `packages`" not in output, output
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert "toollint/docs/rules.md" in names and "toollint/docs/method.md" in names
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
