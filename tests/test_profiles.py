"""Benchmark profiles: the registry (built-in and entry-point profiles), picking a run's profile from
the linted tree or `benchmark = "NAME"`, and the parts a profile lends the generic modules."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from profile_fixtures import FakeEntryPoint, registered
from toollint.dynamic.protocol import SERVICES, Worker, WorkerError, WorkerSpec, adapter_argument

from toollint import profiles
from toollint.cli import main
from toollint.config import ConfigError, resolve_settings
from toollint.profiles import (
    Profile,
    ProfileError,
    all_profiles,
    detect_profile,
    detection_scores,
    get_profile,
    registry_problems,
    select_profile,
)

TAU2 = Path(os.environ.get("TOOLLINT_TAU2") or Path("/work/shared/benchmarks/tau2-bench"))
DYNAMIC_BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"


def test_builtin_profiles_are_registered_with_their_parts_on_disk() -> None:
    names = [p.name for p in all_profiles()]
    assert names[:2] == ["agentdojo", "tau2"]
    agentdojo = get_profile("agentdojo")
    assert agentdojo.adapter_file is not None and agentdojo.adapter_file.name == "adapter.py"
    assert agentdojo.contracts_dir is not None and len(list(agentdojo.contracts_dir.rglob("*.yaml"))) == 69
    assert agentdojo.part_names() == ["tasks", "state_schemas", "draft_hints", "validation"]
    for key in agentdojo.part_names():  # every part's loader imports its module
        loader = getattr(agentdojo, key)
        assert callable(loader) and callable(loader()), key
    for profile in all_profiles():  # a registered profile's paths are inside its own folder
        for path in (profile.adapter, profile.contracts_dir):
            if path is not None:
                assert path.is_relative_to(Path(profiles.__file__).parent / profile.name)


def test_a_missing_part_is_one_clear_error() -> None:
    with pytest.raises(ProfileError, match=r"^profile 'bare' has no 'validation' part$"):
        Profile("bare").driver(SERVICES)


def test_an_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(ProfileError, match=r"unknown benchmark 'agentdjo'; did you mean 'agentdojo'\?"):
        get_profile("agentdjo")
    with pytest.raises(ProfileError, match=r"^unknown benchmark 'zzz' \(profiles: agentdojo, tau2"):
        get_profile("zzz")


def test_variants_of_a_contract() -> None:
    agentdojo = get_profile("agentdojo")
    assert agentdojo.variants_of({"suite": "banking"}) == ["banking"]
    assert agentdojo.variants_of({"suite": "slack", "suites": ["slack", "workspace"]}) == [
        "slack",
        "workspace",
    ]
    assert Profile("x").variants_of({"suite": "banking"}) == []


# --- detection ------------------------------------------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_detection_reads_imports_and_paths(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {
        "a/tools.py": "from agentdojo.functions_runtime import Depends\n",
        "a/more.py": "import agentdojo.task_suite as ts\n",
        "b/airline.py": "from tau2.environment.toolkit import ToolKitBase, is_tool\n",
        "c/plain.py": "import json\n# agentdojo in a comment is no import\nx = 'from tau2 import y'\n",
    })
    scores = detection_scores([tree])
    assert {name: n for name, n in scores.items() if n} == {"agentdojo": 2, "tau2": 1}
    assert set(scores) == {p.name for p in all_profiles()}  # every profile is scored, 0 when unseen
    assert detect_profile([tree]).name == "agentdojo"  # type: ignore[union-attr]
    assert detect_profile([tree / "b"]).name == "tau2"  # type: ignore[union-attr]
    assert detect_profile([tree / "c"]) is None
    assert detect_profile([tree / "c" / "plain.py", tree / "b" / "airline.py"]).name == "tau2"  # type: ignore[union-attr]
    # a path marker alone: a file that sits inside the benchmark's own layout
    (tmp_path / "x" / "tau2" / "domains" / "mock").mkdir(parents=True)
    (tmp_path / "x" / "tau2" / "domains" / "mock" / "tools.py").write_text("from .data_model import DB\n")
    assert detect_profile([tmp_path / "x"]).name == "tau2"  # type: ignore[union-attr]


def test_detection_on_the_real_benchmarks(agentdojo_src: Path) -> None:
    assert detect_profile([agentdojo_src / "default_suites" / "v1" / "tools"]).name == "agentdojo"  # type: ignore[union-attr]
    domains = TAU2 / "src" / "tau2" / "domains"
    if not domains.is_dir():
        pytest.skip(f"no tau2-bench snapshot at {TAU2} (set TOOLLINT_TAU2)")
    assert detect_profile([domains]).name == "tau2"  # type: ignore[union-attr]


def test_the_benchmark_key_wins_over_detection(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"t.py": "import agentdojo\n"})
    assert select_profile("tau2", [tree]).name == "tau2"  # type: ignore[union-attr]
    assert select_profile(None, [tree]).name == "agentdojo"  # type: ignore[union-attr]
    with pytest.raises(
        ProfileError,
        match=r"^pyproject.toml \[tool.toollint\] benchmark: unknown benchmark 'tau3'; "
        r"did you mean 'tau2'\?",
    ):
        select_profile("tau3", [tree], where="pyproject.toml [tool.toollint] benchmark")


@pytest.mark.parametrize(("value", "message"), [
    ('"agentdjo"', "unknown benchmark 'agentdjo'; did you mean 'agentdojo'?"),
    ("3", "'benchmark' in {path} [tool.toollint] must be a string, not an integer"),
    ('""', "'benchmark' in {path} [tool.toollint] must not be empty (got '')"),
])
def test_a_bad_benchmark_key_is_a_one_line_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], value: str,
                                                        message: str) -> None:
    shutil.copytree(DYNAMIC_BENCH, tmp_path / "proj")
    config = tmp_path / "proj" / "pyproject.toml"
    config.write_text(f"[tool.toollint]\nbenchmark = {value}\ntool-decorators = [\"tool\"]\n")
    monkeypatch.chdir(tmp_path / "proj")
    assert main(["check", "--confirm", "bank.py"]) == 2
    err = capsys.readouterr().err.strip()
    assert message.format(path=config) in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_benchmark_key_is_read_into_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nbenchmark = "tau2"\n')
    assert resolve_settings([str(tmp_path)]).benchmark == "tau2"
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nbenchmrk = "tau2"\n')
    with pytest.raises(ConfigError, match="did you mean 'benchmark'"):
        resolve_settings([str(tmp_path)])


# --- third-party profiles ------------------------------------------------------------------------

ADAPTER = '''
class Counter:
    def __init__(self, options, shims):
        self.start = int(options.get("start", 0))
        self.value = self.start

    def hello(self):
        return {"adapter": "counter", "variant": "one", "tools": [{"name": "bump", "frame": ["/value"]}]}

    def build(self, task_id):
        self.value = self.start

    def reset(self):
        self.value = self.start

    def snapshot(self):
        return {"value": self.value}

    def call(self, tool, args, want_view=True):
        self.value += int(args.get("by", 1))
        return {"status": "ok", "value": "bumped"}


def make_adapter(options, shims):
    return Counter(options, shims)
'''


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    adapter = tmp_path / "counter_adapter.py"
    adapter.write_text(ADAPTER)
    with registered(monkeypatch,
                    Profile("counter", adapter=adapter, import_markers=("counterbench",)),
                    FakeEntryPoint("factory", lambda: Profile("made")),  # a callable returning a profile
                    FakeEntryPoint("broken", ImportError("No module named 'nowhere'")),
                    FakeEntryPoint("notaprofile", 42),
                    FakeEntryPoint("clash", Profile("agentdojo"))):
        yield adapter


def test_entry_point_profiles_join_the_registry_and_bad_ones_are_reported(plugins: Path) -> None:
    names = [p.name for p in all_profiles()]
    assert names[:2] == ["agentdojo", "tau2"] and {"counter", "made"} <= set(names)
    assert names.count("agentdojo") == 1  # a plugin cannot take a built-in's name
    problems = registry_problems()
    assert len(problems) == 3
    assert any(
        "'broken' (plugin:broken) failed to load: ImportError: No module named 'nowhere'" in p
        for p in problems
    )
    assert any("'notaprofile' (plugin:notaprofile) is a int, not a toollint Profile" in p for p in problems)
    assert any("names profile 'agentdojo', which is already registered; skipped" in p for p in problems)


def test_a_third_party_profile_is_detected_and_hosts_its_benchmark(plugins: Path, tmp_path: Path) -> None:
    tree = _tree(tmp_path / "src", {"tools.py": "import counterbench\n"})
    assert detect_profile([tree]).name == "counter"  # type: ignore[union-attr]
    assert adapter_argument("counter") == str(plugins)
    with Worker(WorkerSpec("counter", {"start": 5})) as worker:
        assert worker.hello["adapter"] == "counter"
        probe = worker.request("probe", tool="bump", args={"by": 2})
        assert [(op["path"], op["before"], op["after"]) for op in probe["diff"]] == [("/value", 5, 7)]


def test_adapter_names_are_checked_before_a_worker_starts(plugins: Path) -> None:
    assert adapter_argument("toolkit") == "toolkit"
    assert adapter_argument("") == ""
    assert adapter_argument("some/dir/adapter.py") == "some/dir/adapter.py"
    with pytest.raises(WorkerError, match=r"unknown adapter 'toolkt'; did you mean 'toolkit'\? \(adapters: "):
        adapter_argument("toolkt")
    with pytest.raises(WorkerError, match=r"^profile 'made' has no host adapter"):
        adapter_argument("made")
    with pytest.raises(WorkerError) as info:
        Worker(WorkerSpec("toolkt", {})).start()
    assert info.value.kind == "startup"


# --- what the contract tools ask of a profile ---------------------------------------------------

TOOL = '''from typing import Annotated
from agentdojo.functions_runtime import Depends


def pay(account: Annotated[dict, Depends("bank_account")], amount: float) -> str:
    """Pay an amount.

    :param amount: how much
    """
    account["paid"] = amount
    return "paid"
'''


def _draft(args: list[str]) -> dict[str, Any]:
    import io

    from toollint.contracts.cli import main as contracts_main

    out, err = io.StringIO(), io.StringIO()
    assert contracts_main(["draft", *args], stdout=out, stderr=err) == 0, err.getvalue()
    import yaml

    return yaml.safe_load(out.getvalue())  # type: ignore[no-any-return]


def test_a_draft_names_an_adapter_that_exists(tmp_path: Path) -> None:
    # a tool in the profile's package: its adapter, and the profile's hints (the registering suite)
    tools = tmp_path / "agentdojo" / "default_suites" / "v1" / "tools"
    tools.mkdir(parents=True)
    (tools / "bank.py").write_text(TOOL)
    (tmp_path / "agentdojo" / "default_suites" / "v1" / "banking").mkdir()
    (tmp_path / "agentdojo" / "default_suites" / "v1" / "banking" / "task_suite.py").write_text(
        "TOOLS = [\n    pay,\n]\n")
    adapter = _draft(["agentdojo.default_suites.v1.tools.bank:pay", "--src", str(tmp_path)])["adapter"]
    assert adapter == {"name": "agentdojo", "suite": "banking", "depends": {"account": "bank_account"},
                       "frame": ["bank_account"]}
    # a package no profile knows: the generic toolkit adapter, never the package's name
    (tmp_path / "mybench").mkdir()
    (tmp_path / "mybench" / "tools.py").write_text(TOOL)
    assert _draft(["mybench.tools:pay", "--src", str(tmp_path)])["adapter"]["name"] == "toolkit"


def test_the_profiles_command_lists_them_and_says_which_a_tree_picks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toollint.profiles.__main__ import main as profiles_main

    tree = _tree(
        tmp_path, {"a.py": "import agentdojo\n", "b.py": "import agentdojo\n", "c.py": "import tau2\n"}
    )
    assert profiles_main([str(tree)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("agentdojo  ") and "69 contracts" in lines[0]
    assert lines[-1] == "picked: agentdojo (2 files import agentdojo or sit in its layout; tau2: 1)"
    assert profiles_main([str(tree / "c.py"), "--benchmark", "agentdojo"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "picked: agentdojo (named by --benchmark)"
    assert profiles_main(["--benchmark", "agentdjo"]) == 2
    assert capsys.readouterr().err == (
        "python -m toollint.profiles: error: --benchmark: unknown benchmark "
        "'agentdjo'; did you mean 'agentdojo'? (profiles: agentdojo, tau2, medagentbench, "
        "toolsandbox, taubench, bfcl)\n"
    )


def test_a_contract_without_an_adapter_is_hosted_by_its_benchmarks_or_the_runs_profile(
        plugins: Path, tmp_path: Path) -> None:
    from toollint.contracts.loader import load_contract
    from toollint.dynamic.confirm import default_adapter, run_profile, worker_spec

    from toollint.settings import ConfirmSettings, Settings

    (tmp_path / "c.yaml").write_text(
        "tool: mybench.tools:bump\nbenchmark: BENCH\nsource: {file: tools.py}\nclauses:\n"
        "  - id: eff.bumped\n    predicate: post.value == pre.value + 1\n"
        "    provenance: {tier: author-specified, inferred: true}\n")
    text = (tmp_path / "c.yaml").read_text()
    (tmp_path / "c.yaml").write_text(text.replace("BENCH", "counter"))
    assert default_adapter(load_contract(tmp_path / "c.yaml")) == "counter"  # its benchmark's profile
    (tmp_path / "c.yaml").write_text(text.replace("BENCH", "mybench"))
    mine = load_contract(tmp_path / "c.yaml")
    assert default_adapter(mine) == "toolkit"
    tree = _tree(tmp_path / "src", {"tools.py": "import counterbench\n"})
    profile = run_profile(Settings(), [str(tree / "tools.py")])
    assert profile is not None and profile.name == "counter"
    assert worker_spec(mine, ConfirmSettings(), profile=profile).adapter == "counter"  # the run's profile
    assert (
        worker_spec(mine, ConfirmSettings(adapter="toolkit"), profile=profile).adapter == "toolkit"
    )  # config wins
    with pytest.raises(
        ConfigError, match=r"^benchmark: unknown benchmark 'countr'; did you mean 'counter'\?"
    ):
        run_profile(Settings(benchmark="countr"))


def test_a_profile_derives_adapter_options_from_the_linted_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint.contracts.loader import load_contract
    from toollint.dynamic.confirm import worker_spec

    from toollint.settings import ConfirmSettings

    adapter = tmp_path / "counter_adapter.py"
    adapter.write_text(ADAPTER)
    (tmp_path / "counter_parts.py").write_text(
        "def host_options(linted):\n    return {'start': len(linted), 'root': 'from-the-tree'}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "c.yaml").write_text(
        "tool: counterbench.tools:bump\nbenchmark: counter\nsource: {file: tools.py}\nclauses:\n"
        "  - id: eff.bumped\n    predicate: post.value == pre.value + 1\n"
        "    provenance: {tier: author-specified, inferred: true}\n")
    contract = load_contract(tmp_path / "c.yaml")
    def host_options() -> Any:
        import counter_parts  # type: ignore[import-not-found]

        return counter_parts.host_options

    with registered(monkeypatch, Profile("counter", adapter=adapter, host_options=host_options)):
        spec = worker_spec(contract, ConfirmSettings(), linted=["a.py", "b.py", "c.py"])
        assert spec.options == {"start": 3, "root": "from-the-tree"}
        # the configuration's options, then the contract's own block, win over what the tree implies
        spec = worker_spec(contract, ConfirmSettings(options={"root": "configured"}), linted=["a.py"])
        assert spec.options == {"start": 1, "root": "configured"}
        assert worker_spec(contract, ConfirmSettings()).options == {}  # nothing linted: nothing implied
        with Worker(worker_spec(contract, ConfirmSettings(), linted=["a.py", "b.py"])) as worker:
            probe = worker.request("probe", tool="bump", args={})
        assert [(op["before"], op["after"]) for op in probe["diff"]] == [(2, 3)]


def _adapter_methods(path: Path) -> dict[str, list[str]]:
    """The parameter names of the methods of the class `make_adapter` returns (read, not imported: an
    adapter imports its benchmark)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    make = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_adapter")
    assert isinstance(make.returns, ast.Name), f"{path}: make_adapter names the class it returns"
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == make.returns.id)
    return {f.name: [a.arg for a in f.args.args] for f in cls.body if isinstance(f, ast.FunctionDef)}


def test_every_host_adapter_has_the_methods_the_profile_api_declares() -> None:
    import inspect

    from toollint.dynamic.protocol import HOST_PATH

    from toollint.profiles.api import HostAdapter

    wanted = {name: list(inspect.signature(getattr(HostAdapter, name)).parameters)
              for name in ("hello", "build", "snapshot", "call", "reset")}
    adapters = [p.adapter_file for p in all_profiles() if p.adapter_file is not None]
    adapters += sorted(HOST_PATH.parent.glob("adapter_*.py"))
    assert len(adapters) >= 3
    for path in adapters:
        methods = _adapter_methods(path)
        assert {name: methods.get(name) for name in wanted} == wanted, path


def test_one_entry_point_reader_serves_the_registry_and_the_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint.analysis.families import plugin_family_patterns

    (tmp_path / "acme_bench.py").write_text(
        "from toollint.analysis.patterns import Patterns, ToolDecorator\n"
        "from toollint.profiles.api import Profile\n"
        "PROFILE = Profile('acme', import_markers=('acme',), "
        "patterns=Patterns(decorators=(ToolDecorator('act'),)))\n"
    )
    dist = tmp_path / "acme_bench-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-bench\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[toollint.profiles]\nacme = acme_bench:PROFILE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    profiles.reset_registry()
    try:
        assert get_profile("acme").import_markers == ("acme",)
        assert [p.family for p in plugin_family_patterns(set())] == ["acme"]
    finally:
        monkeypatch.undo()
        profiles.reset_registry()
    assert "acme" not in [p.name for p in all_profiles()]


def test_the_builtin_profiles_are_the_registry_data() -> None:
    from toollint.analysis.families import builtin_benchmarks
    from toollint.profiles.builtin import BENCHMARKS

    assert builtin_benchmarks() == BENCHMARKS  # the analysis reads the same data, by path
    assert [p.name for p in profiles.builtin_profiles()] == list(BENCHMARKS)
    folders = {d.name for d in Path(profiles.__file__).parent.iterdir() if (d / "__init__.py").is_file()}
    assert folders == set(BENCHMARKS)  # a profile folder is registered, and only a benchmark has one
