"""Shared fixtures. The real benchmarks under test are never installed into toollint's own
environment: each is hosted in a venv of its own, created once and cached (agentdojo==0.1.35 from
PyPI; tau2-bench's dependencies, with the pinned snapshot's own source on the host's sys.path)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _corpora import (  # noqa: F401 - shared with bench/
    AGENTDOJO,
    CACHE,
    Unavailable,
    VenvError,
    ensure_agentdojo_venv,
    ensure_tau2_venv,
    ensure_taubench_venv,
    tau2_root,
    taubench_root,
)


@pytest.fixture(scope="session", autouse=True)
def private_seal_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The witness seal key (`$XDG_CACHE_HOME/toollint/witness-seal.key`) in a folder of the test
    session's own, for this process and every toollint it starts: tests never write the user's
    ~/.cache/toollint. (Only the seal key reads XDG_CACHE_HOME; the cached benchmark venvs stay under
    ~/.cache/toollint-tests, found from the home folder.)"""
    cache = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


def _rules_from_elsewhere() -> list[str]:
    """Registered rules whose check is not toollint's own. A test's own rule is put in with monkeypatch
    (undone after it); a rule module imported a second time under another name (`from rules import ...`:
    the checkout's folder, not the installed `toollint.rules`) registers its code again with that copy's
    check, which the engine takes for a plugin's rule (and so parses every module of literals for it)."""
    from toollint import registry  # loads no rule

    return sorted(f"{r.code} from {r.check.__module__}" for r in registry._RULES.values()
                  if r.check is not None and not r.check.__module__.startswith("toollint.rules."))


def pytest_collection_finish(session: pytest.Session) -> None:
    if foreign := _rules_from_elsewhere():
        raise pytest.UsageError(f"a test module's import registered rules from elsewhere: {foreign}")


@pytest.fixture
def ctrl_c_reaches_children() -> Iterator[None]:
    """For a test that sends a child toollint SIGINT: this process holds Python's own handler meanwhile, so
    a child starts with SIGINT at its default (an exec resets handled signals) and turns it into
    KeyboardInterrupt. A suite started in the background (`pytest &` from a script) inherits SIGINT
    ignored, which its children keep, and Python leaves an ignored SIGINT ignored: the Ctrl-C did nothing."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture(autouse=True)
def no_rule_from_elsewhere_left() -> Iterator[None]:
    yield
    assert not _rules_from_elsewhere(), "this test left rules from elsewhere in the registry"


def _ensure_agentdojo_venv() -> Path:
    try:
        return ensure_agentdojo_venv()
    except VenvError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def agentdojo_python() -> Path:
    """The interpreter of a venv holding agentdojo==0.1.35 and its dependencies."""
    return _ensure_agentdojo_venv()


@pytest.fixture(scope="session")
def agentdojo_src(agentdojo_python: Path) -> Path:
    """The installed `agentdojo` package directory (real third-party benchmark code)."""
    out = subprocess.run(
        [str(agentdojo_python), "-c", "import agentdojo, os; print(os.path.dirname(agentdojo.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def toollint_python() -> str:
    return sys.executable


@pytest.fixture(scope="session")
def tau2_checkout() -> Path:
    """The tau2-bench checkout the tests read (`TOOLLINT_TAU2`, else the pinned shared snapshot)."""
    try:
        return tau2_root()
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def tau2_python(tau2_checkout: Path) -> Path:
    """The interpreter of a cached Python 3.12 venv holding tau2-bench's dependencies (not tau2)."""
    try:
        return ensure_tau2_venv()
    except Unavailable as exc:
        pytest.skip(str(exc))
    except VenvError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def taubench_checkout() -> Path:
    """The original tau-bench (`TOOLLINT_TAUBENCH`, else the pinned extract in shared/corpus)."""
    try:
        return taubench_root()
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def taubench_python(taubench_checkout: Path) -> Path:
    """The interpreter of a cached venv holding tau-bench's dependencies (not tau-bench)."""
    try:
        return ensure_taubench_venv()
    except Unavailable as exc:
        pytest.skip(str(exc))
    except VenvError as exc:
        pytest.fail(str(exc))
