"""Cached venvs and the corpora shared by the tests and the bench scripts.

`tests/conftest.py` imports `ensure_venv`/`ensure_agentdojo_venv`/`ensure_tau2_venv` from here, so
the test fixtures and the bench scripts install and reuse the very same venvs (no benchmark is ever
installed into toollint's own environment).

tau2-bench is not on PyPI and needs Python 3.12+: its venv holds only the dependencies its
`pyproject.toml` declares, never the benchmark code. The host adapter puts the checkout's `src/` on
`sys.path` and points `TAU2_DATA_DIR` at its `data/`, so the code confirmed is exactly the code linted.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from collections.abc import Callable, Sequence
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - toollint's own venv is 3.11 here; tomli is its 3.10 dependency
    import tomli as tomllib

AGENTDOJO = "agentdojo==0.1.35"
CACHE = Path(os.environ.get("TOOLLINT_TEST_CACHE", Path.home() / ".cache" / "toollint-tests"))
STDLIB_PACKAGES = ("email", "json", "http")


class VenvError(RuntimeError):
    """A cached venv could not be created or its packages installed."""


def venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(name: str, requirements: Sequence[str], *, no_deps: bool = False) -> Path:
    """The interpreter of CACHE/name holding `requirements`, created and installed once (`no_deps`:
    the packages' own files only, for code that is read and never run)."""
    root = CACHE / name
    py = venv_python(root)
    marker = root / ".toollint-ready"
    wanted = "\n".join([*requirements, *(["--no-deps"] if no_deps else [])])
    if marker.exists() and py.exists() and marker.read_text() == wanted:
        return py
    root.parent.mkdir(parents=True, exist_ok=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", *(["--no-deps"] if no_deps else []), *requirements],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if proc.returncode != 0:
        raise VenvError(
            f"could not install {' '.join(requirements)} into {root}:\n{proc.stdout}\n{proc.stderr}"
        )
    marker.write_text(wanted)
    return py


def ensure_agentdojo_venv() -> Path:
    return ensure_venv("venv-agentdojo-0.1.35", [AGENTDOJO])


# --- tau2-bench -------------------------------------------------------------------------------------

TAU2_COMMIT = "c3398666"  # the pinned snapshot under shared/benchmarks/tau2-bench


class Unavailable(RuntimeError):
    """What a test or bench script needs is not on this machine; the message is the one-line reason."""


def tau2_root() -> Path:
    """The tau2-bench checkout: `TOOLLINT_TAU2`, else the pinned snapshot in a `shared/benchmarks/`
    beside the repository or one of its parent folders (worktrees sit one level deeper than main)."""
    env = os.environ.get("TOOLLINT_TAU2")
    if env:
        root = Path(env).expanduser()
        if not (root / "src" / "tau2").is_dir():
            raise Unavailable(f"TOOLLINT_TAU2={env} is not a tau2-bench checkout (no src/tau2)")
        return root.resolve()
    here = Path(__file__).resolve().parent
    for base in here.parents:
        candidate = base / "shared" / "benchmarks" / "tau2-bench"
        if (candidate / "src" / "tau2").is_dir():
            return candidate
    raise Unavailable("tau2-bench snapshot not found (no shared/benchmarks/tau2-bench; set TOOLLINT_TAU2)")


def find_python312() -> Path:
    """A Python 3.12 interpreter: `TOOLLINT_PYTHON312`, else the newest `versions/3.12.*` under
    `pyenv root`, else `python3.12` on PATH."""
    env = os.environ.get("TOOLLINT_PYTHON312")
    if env:
        if not Path(env).is_file():
            raise Unavailable(f"TOOLLINT_PYTHON312={env} does not exist")
        return Path(env)
    roots = []
    try:
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30, check=False)
        if out.returncode == 0 and out.stdout.strip():
            roots.append(Path(out.stdout.strip()))
    except (OSError, subprocess.TimeoutExpired):
        pass
    roots.append(Path.home() / ".pyenv")
    for root in roots:
        found = sorted(glob.glob(str(root / "versions" / "3.12.*" / "bin" / "python3.12")),
                       key=lambda p: [int(x) for x in re.findall(r"\d+", Path(p).parents[1].name)])
        if found:
            return Path(found[-1])
    on_path = shutil.which("python3.12")
    if on_path:
        return Path(on_path)
    raise Unavailable(
        "no Python 3.12 for tau2-bench (none under `pyenv root`/versions/3.12.*; set TOOLLINT_PYTHON312)"
    )


def tau2_requirements(root: Path, extras: Sequence[str] = ()) -> list[str]:
    """tau2's declared dependencies (plus those of the named optional extras) from its pyproject.toml."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project.get("dependencies") or [])
    for extra in extras:
        reqs += [
            r for r in project.get("optional-dependencies", {}).get(extra, []) if not r.startswith("tau2")
        ]
    return reqs


def ensure_tau2_venv(extras: Sequence[str] = ()) -> Path:
    """The interpreter of a cached Python 3.12 venv holding tau2's dependencies (not tau2 itself).

    Keyed by the requirement list, so a checkout declaring other dependencies gets a venv of its
    own; once installed, the exact versions are pinned in `requirements.lock` beside it and a rebuild
    installs those. Raises `Unavailable` (a one-line reason) when the checkout or Python 3.12 is
    missing, `VenvError` when pip fails.
    """
    root = tau2_root()
    reqs = tau2_requirements(root, extras)
    key = hashlib.sha256("\n".join(reqs).encode()).hexdigest()[:10]
    home = CACHE / f"venv-tau2-{key}"
    py = venv_python(home)
    marker = home / ".toollint-ready"
    lock = CACHE / f"tau2-{key}.requirements.lock"
    if marker.exists() and py.exists() and marker.read_text() == "\n".join(reqs):
        return py
    base = find_python312()
    home.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([str(base), "-m", "venv", "--clear", str(home)], capture_output=True, text=True,
                          timeout=600, check=False)
    if proc.returncode != 0:
        raise VenvError(f"could not create {home} with {base}:\n{proc.stderr}")
    install = ["-r", str(lock)] if lock.is_file() else reqs
    proc = subprocess.run([str(py), "-m", "pip", "install", "--quiet", *install], capture_output=True,
                          text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise VenvError(f"could not install tau2's dependencies into {home}:\n{proc.stdout}\n{proc.stderr}")
    frozen = subprocess.run([str(py), "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                            timeout=300, check=False)
    if frozen.returncode == 0 and not lock.is_file():
        lock.write_text(frozen.stdout)
    marker.write_text("\n".join(reqs))
    return py


# --- tau-bench (the original, in shared/corpus) ------------------------------------------------------

TAUBENCH_COMMIT = "59a200c6"  # the pinned extract under shared/corpus/tau-bench
# What `tau_bench.envs` imports (types.py: pydantic; envs/user.py: litellm), at the versions tau2's venv
# resolved here; setup.py's model clients (openai, anthropic, ...) serve the agents, never the reward.
TAUBENCH_REQUIREMENTS = ("litellm==1.82.6", "pydantic==2.14.4")


def taubench_root() -> Path:
    """The tau-bench checkout: `TOOLLINT_TAUBENCH`, else the pinned extract in a `shared/corpus/` beside
    the repository or one of its parent folders."""
    env = os.environ.get("TOOLLINT_TAUBENCH")
    if env:
        root = Path(env).expanduser()
        if not (root / "tau_bench" / "envs" / "base.py").is_file():
            raise Unavailable(f"TOOLLINT_TAUBENCH={env} is not a tau-bench checkout (no tau_bench/envs)")
        return root.resolve()
    for base in Path(__file__).resolve().parents:
        candidate = base / "shared" / "corpus" / "tau-bench"
        if (candidate / "tau_bench" / "envs" / "base.py").is_file():
            return candidate
    raise Unavailable("tau-bench not found (no shared/corpus/tau-bench; set TOOLLINT_TAUBENCH)")


def ensure_taubench_venv() -> Path:
    """The interpreter of a cached venv holding tau-bench's dependencies (never tau-bench: the driver puts
    the checkout on its path). Raises `Unavailable` without the checkout, `VenvError` when pip fails."""
    taubench_root()
    return ensure_venv(f"venv-taubench-{TAUBENCH_COMMIT}", list(TAUBENCH_REQUIREMENTS))


# --- per benchmark profile, as data (a new profile adds its entries here, nothing else) ------------------

# The cached interpreter a profile's tests and bench runs use; a profile not listed needs --python.
INTERPRETERS: dict[str, Callable[[], Path]] = {
    "agentdojo": ensure_agentdojo_venv, "tau2": ensure_tau2_venv, "taubench": ensure_taubench_venv,
}
# What a profile's run lints, for a benchmark checked out rather than installed: its adapter is told the
# checkout from there (the profile's host_options), as `toollint check --confirm DIR` does.
LINTED_TREES: dict[str, Callable[[], list[str]]] = {
    "tau2": lambda: [str(tau2_root() / "src" / "tau2" / "domains")],
    "taubench": lambda: [str(taubench_root() / "tau_bench" / "envs")],
}


def package_dir(python: Path, package: str) -> Path:
    """Where `package` is installed for that interpreter (nothing of it is imported here)."""
    out = subprocess.run(
        [
            str(python),
            "-c",
            (
                "import importlib.util, os; "
                f"print(os.path.dirname(importlib.util.find_spec({package!r}).origin))"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def stdlib_corpus() -> list[Path]:
    """The running interpreter's email, json and http packages."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [stdlib / name for name in STDLIB_PACKAGES]
