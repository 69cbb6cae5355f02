"""The results cache (`.toollint_cache/`): used as a user runs it (the CLI, cold, warm, after an edit,
`--no-cache`), never stale (an edited, added or removed helper in another module changes the finding),
safe to read (a planted pickle runs nothing) and shared with `--jobs` workers."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from toollint import engine
from toollint.cache import CACHE_DIR_NAME, ResultCache, read_cache_file
from toollint.engine import lint_paths
from toollint.settings import Settings

TOOLS = '''\
from pkg.store import save_email


def is_tool(kind):
    return lambda f: f


class AccountTools:
    def __init__(self, db) -> None:
        self.db = db

    @is_tool("WRITE")
    def change_email(self, user_id: str, new_email: str) -> str:
        save_email(self.db, user_id, new_email)
        return "Email updated successfully."
'''
WRITES = 'def save_email(db, user_id, email):\n    db.users[user_id]["email"] = email\n'
ONLY_PRINTS = "def save_email(db, user_id, email):\n    print(user_id, email)\n"
FINDING = "pkg/tools.py:15:9: TL101 [literal-success-in-writer]"


def _project(root: Path, store: str | None = WRITES) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "tools.py").write_text(TOOLS)
    if store is not None:
        (root / "pkg" / "store.py").write_text(store)
    return root


def _toollint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLLINT_")}
    return subprocess.run([sys.executable, "-m", "toollint", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _cache_files(root: Path) -> list[Path]:
    return sorted((root / CACHE_DIR_NAME).glob("results-*.pickle"))


def test_cold_warm_edit_and_no_cache_from_the_command_line(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cold = _toollint(root, ".")
    assert cold.returncode == 0, cold.stderr
    assert (root / CACHE_DIR_NAME / ".gitignore").read_text().splitlines()[-1] == "*"  # ignores itself in git
    (cache_file,) = _cache_files(root)
    written = cache_file.stat().st_mtime_ns

    warm = _toollint(root, ".")
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert cache_file.stat().st_mtime_ns == written  # every file answered from the cache: nothing rewritten

    # The tool's module is unchanged; the helper it calls in another module no longer writes.
    (root / "pkg" / "store.py").write_text(ONLY_PRINTS)
    edited = _toollint(root, ".")
    assert edited.returncode == 1
    assert FINDING in edited.stdout
    assert _toollint(root, ".").stdout == edited.stdout  # warm again, still the new finding
    assert _toollint(root, "--no-cache", ".").stdout == edited.stdout

    (root / "pkg" / "store.py").write_text(WRITES)  # and back
    assert _toollint(root, ".").returncode == 0


def test_no_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = _toollint(root, "--no-cache", ".")
    assert result.returncode == 0, result.stderr
    assert not (root / CACHE_DIR_NAME).exists()


def test_a_helper_module_that_appears_or_disappears_changes_the_finding(tmp_path: Path) -> None:
    root = _project(tmp_path, store=None)
    assert FINDING in _toollint(root, ".").stdout  # the import resolves to nothing: no write is seen
    (root / "pkg" / "store.py").write_text(WRITES)
    assert _toollint(root, ".").returncode == 0
    (root / "pkg" / "store.py").unlink()
    assert FINDING in _toollint(root, ".").stdout


def test_settings_are_part_of_the_key(tmp_path: Path) -> None:
    root = _project(tmp_path, store=ONLY_PRINTS)
    assert FINDING in _toollint(root, ".").stdout
    assert _toollint(root, "--ignore", "TL101", ".").returncode == 0
    (root / "pyproject.toml").write_text('[tool.toollint]\nignore = ["TL101"]\n')
    assert _toollint(root, ".").returncode == 0
    (root / "pyproject.toml").write_text("[tool.toollint]\n")
    assert FINDING in _toollint(root, ".").stdout


def test_cache_dir_key_moves_the_cache(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.toollint]\ncache-dir = "build/lint-cache"\n')
    assert _toollint(root, ".").returncode == 0
    assert not (root / CACHE_DIR_NAME).exists()
    assert list((root / "build" / "lint-cache").glob("results-*.pickle"))


def test_a_corrupt_or_planted_cache_file_is_ignored_and_runs_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path, store=ONLY_PRINTS)
    assert FINDING in _toollint(root, ".").stdout
    (cache_file,) = _cache_files(root)
    marker = tmp_path / "pwned"

    class Planted:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    cache_file.write_bytes(pickle.dumps(Planted()))
    assert read_cache_file(cache_file) is None
    cache_file.write_bytes(pickle.dumps(Settings()))  # toollint's own, but not a result's plain data
    assert read_cache_file(cache_file) is None
    cache_file.write_bytes(pickle.dumps(Planted()))
    result = _toollint(root, ".")
    assert FINDING in result.stdout, result.stderr
    assert not marker.exists()
    cache_file.write_bytes(b"not a pickle at all")
    assert FINDING in _toollint(root, ".").stdout
    assert read_cache_file(cache_file) is not None  # rewritten whole


def test_warm_run_lints_nothing_and_returns_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, store=ONLY_PRINTS)
    monkeypatch.chdir(root)
    settings = Settings(project_root=root)
    cold_cache = ResultCache(root / CACHE_DIR_NAME)
    cold = lint_paths(["."], settings, cache=cold_cache)
    cold_cache.save()

    linted: list[str] = []
    real = engine._lint_source

    def counting(source: bytes | str, path: str, *rest: object) -> engine.FileResult:
        linted.append(path)
        return real(source, path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "_lint_source", counting)
    warm_cache = ResultCache(root / CACHE_DIR_NAME)
    warm = lint_paths(["."], settings, cache=warm_cache)
    assert linted == []
    assert warm_cache.hits == len(cold.files) == 3
    assert [f.findings for f in warm.files] == [f.findings for f in cold.files]
    assert [(f.tools, f.graders, f.reached) for f in warm.files] == [
        (f.tools, f.graders, f.reached) for f in cold.files
    ]
    tools = next(f for f in warm.files if f.path.endswith("tools.py"))
    assert [dep for dep, _ in tools.reached] == [os.path.join("pkg", "store.py")]

    (root / "pkg" / "store.py").write_text(WRITES)
    edited = lint_paths(["."], settings, cache=ResultCache(root / CACHE_DIR_NAME))
    # the helper itself, and the one file whose facts rest on it; not the package's __init__.py
    assert linted == [os.path.join("pkg", "store.py"), os.path.join("pkg", "tools.py")]
    assert not any(f.reported for f in edited.files)


def test_jobs_share_the_cache_across_processes(tmp_path: Path) -> None:
    root = _project(tmp_path, store=ONLY_PRINTS)
    for i in range(20):  # enough files for a process pool of two
        (root / f"module_{i}.py").write_text(f"def f_{i}(x):\n    return x + {i}\n")
    serial = _toollint(root, "--no-cache", "--jobs", "1", ".")
    cold = _toollint(root, "--jobs", "2", ".")
    warm = _toollint(root, "--jobs", "2", ".")
    assert serial.stdout == cold.stdout == warm.stdout
    assert FINDING in warm.stdout
    assert "Checked 23 files" in warm.stderr


def _cached_run(root: Path) -> tuple[ResultCache, engine.RunResult]:
    """One run over the project with its cache, saved after it."""
    run_cache = ResultCache(root / CACHE_DIR_NAME)
    result = lint_paths(["."], Settings(project_root=root), cache=run_cache)
    run_cache.save()
    return run_cache, result


def _digests_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the contents the cache hashes (each one it read)."""
    from toollint import cache

    count = [0]
    real = cache.digest

    def counting(data: bytes | str) -> str:
        count[0] += 1
        return real(data)

    monkeypatch.setattr(cache, "digest", counting)
    return count


def test_a_file_written_just_now_is_read_again_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its timestamps cannot tell a second write within their resolution from none: no status is kept
    root = _project(tmp_path, store=ONLY_PRINTS)
    monkeypatch.chdir(root)
    for _ in range(2):  # cold, then warm: neither keeps a status
        _cached_run(root)
    saved = read_cache_file(_cache_files(root)[0])
    assert saved is not None and len(saved.entries) == 3 and saved.statuses == {}
    read = _digests_read(monkeypatch)
    warm_cache, _ = _cached_run(root)
    assert warm_cache.hits == 3 and read[0] == 3


@pytest.mark.skipif(os.name != "posix", reason="statuses are trusted where every write moves st_ctime")
def test_unchanged_statuses_answer_without_reading_and_a_write_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # as if every file had been written long ago
    root = _project(tmp_path, store=ONLY_PRINTS)
    monkeypatch.chdir(root)
    _, cold = _cached_run(root)
    assert any(f.reported for f in cold.files)

    read = _digests_read(monkeypatch)
    warm_cache, warm = _cached_run(root)
    assert warm_cache.hits == 3 and read[0] == 0  # nothing read, the helper tools.py rests on included
    assert [f.findings for f in warm.files] == [f.findings for f in cold.files]

    store = root / "pkg" / "store.py"
    store.write_text(WRITES)
    os.utime(store, ns=(store.stat().st_atime_ns, store.stat().st_mtime_ns - 10**9))  # mtime set back
    edited_cache, edited = _cached_run(root)
    assert edited_cache.hits == 1  # the package's __init__.py; store.py and the tools resting on it linted
    assert not any(f.reported for f in edited.files)
