"""Issue 26's peak memory: what a process keeps between files is bounded by what it costs. The parsed
trees the analysis follows into are bounded by their source bytes (`toollint.sources.MAX_PARSED_BYTES`),
the resolver's view of a module goes with its tree, and a package's files keep their answers to the
package-wide questions, not their bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint import sources
from toollint.analysis import dispatch
from toollint.analysis.resolver import load_module


@pytest.fixture
def empty_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "_PARSED", type(sources._PARSED)())
    monkeypatch.setattr(sources, "_parsed_bytes", 0)


def _modules(root: Path, count: int, size: int) -> list[Path]:
    paths = []
    for i in range(count):
        path = root / f"helper{i}.py"
        path.write_text(f"def helper{i}():\n    return 1\n" + "# padding\n" * (size // 10))
        paths.append(path)
    return paths


def test_the_parsed_trees_kept_stay_under_their_byte_bound(tmp_path: Path, empty_store: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_PARSED_BYTES", 3_000)
    paths = _modules(tmp_path, 10, 1_000)
    for path in paths:
        assert sources.parse_file(str(path)) is not None
        assert sources.parsed_bytes() <= 3_000
        assert sources.parsed_bytes() == sum(stamp[1] for stamp, _ in sources._PARSED.values())
    assert list(sources._PARSED) == [str(p) for p in paths[-2:]]  # the newest, least recently used out
    # one still kept is not parsed again; one that fell out is
    kept = sources.parse_file(str(paths[-1]))
    assert kept is sources.parse_file(str(paths[-1]))
    assert list(sources._PARSED)[-1] == str(paths[-1])


def test_the_newest_tree_is_kept_whatever_its_size(tmp_path: Path, empty_store: None,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_PARSED_BYTES", 100)
    (big,) = _modules(tmp_path, 1, 5_000)
    first = sources.parse_file(str(big))
    assert first is not None and first.tree is not None
    assert sources.parse_file(str(big)) is first  # followed again: not parsed again


def test_the_resolvers_module_goes_with_its_tree(tmp_path: Path, empty_store: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_PARSED_BYTES", 1_500)
    first, second = _modules(tmp_path, 2, 1_000)
    module = load_module(first, "helper0")
    assert module is not None and load_module(first, "helper0") is module  # its memo is shared
    assert module.definition("helper0") is not None
    load_module(second, "helper1")  # evicts the first tree, and its module with it
    assert str(first) not in sources._PARSED
    again = load_module(first, "helper0")
    assert again is not None and again is not module and again.definition("helper0") is not None


def test_a_package_keeps_its_answers_not_its_bytes(tmp_path: Path) -> None:
    (tmp_path / "api.py").write_text("class API:\n    def get(self):\n        return 1\n")
    (tmp_path / "task.py").write_text(
        'TOOLS = [{"name": "get", "parameters": {}}]\n'
        "def run(name):\n    api = API()\n    return getattr(api, name)()\n")
    (tmp_path / "schema.json").write_text('[{"name": "put", "parameters": {}}]')
    dispatch.package_texts.cache_clear()
    dispatch.package_dispatches.cache_clear()
    dispatch.package_declarations.cache_clear()
    files = dispatch.package_texts(str(tmp_path))
    assert not any(hasattr(file, attr) for file in files for attr in ("data", "_text", "__dict__"))
    assert dispatch.package_declarations(str(tmp_path)) == {"get", "put"}
    assert [(d.cls, d.where, d.line) for d in dispatch.package_dispatches(str(tmp_path))] == [
        ("API", "task.py", 4)]
