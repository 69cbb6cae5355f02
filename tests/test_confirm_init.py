"""`toollint confirm init PATH` (issue 23, item 4): a benchmark with no profile, set up from what
discovery finds, confirmed with nothing hand-written; run as docs/confirm.md shows.

- tests/fixtures/starter_shop: tau-bench's form (`Tool` classes with a static `invoke(data, ...)`,
  a `load_data()` beside them, a lock in the state that has no JSON form);
- the shared corpus, when present: BFCL's API classes (built with no arguments, `_load_scenario`) and
  tau-bench with its profile switched off (its host needs the cached venv with litellm).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from toollint.contracts.model import Contract, Source
from toollint.dynamic.confirm import worker_spec
from toollint.dynamic.derived import derive_tools
from toollint.dynamic.protocol import Worker

from toollint.cli import main
from toollint.config import load_settings
from toollint.engine import lint_source
from toollint.profiles import select_profile
from toollint.settings import Settings

HERE = Path(__file__).parent
SHOP = HERE / "fixtures" / "starter_shop"
CORPUS = HERE.parents[1] / "shared" / "corpus"
BFCL = CORPUS / "bfcl" / "berkeley-function-call-leaderboard" / "bfcl_eval/eval_checker/multi_turn_eval" \
    / "func_source_code"
TAUBENCH = CORPUS / "tau-bench"
TAUBENCH_VENV = Path.home() / ".cache" / "toollint-tests" / "venv-corpus-taubench" / "bin" / "python"
JUDGEMENTS = json.loads((HERE.parent / "bench" / "recall_judgements.json").read_text())


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "bench"
    shutil.copytree(SHOP, project)
    monkeypatch.chdir(project)
    return project


def test_the_starter_confirms_tool_classes_with_nothing_hand_written(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["confirm", "init", "shop", "-o", "toollint.toml"]) == 0
    err = capsys.readouterr().err
    assert "3 tool(s) of 3 class(es); wrote toollint.toml: run `toollint check --confirm --config " \
        "toollint.toml shop`" in err
    text = (shop / "toollint.toml").read_text()
    assert 'benchmark = "none"' in text and 'factory = "shop.data:load_data"' in text
    assert '"shop.tools.cancel_order:CancelOrder"' in text and 'sys-path = ["."]' in text
    code = main(["check", "--confirm", "--confidence", "low", "--config", "toollint.toml", "--output-format",
                 "json", "shop"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    findings = json.loads(out)
    reason = next(f for f in findings if f["code"] == "TL103")
    assert reason["properties"]["verdict"] == "VIOLATES"
    confirmed = next(f for f in findings if f["code"] == "TL202")
    # on the benchmark's own tool file, by the name the agent calls it
    assert confirmed["filename"] == "shop/tools/cancel_order.py" and confirmed["tool"] == "cancel_order"
    # a commented-out guard in a tool class: watched inside `invoke`, called as `return_order`
    guard = next(f for f in findings if f["code"] == "TL102")
    assert guard["properties"]["verdict"] == "VIOLATES"
    unenforced = next(f for f in findings if f["code"] == "TL201")
    assert unenforced["filename"] == "shop/tools/return_order.py" and unenforced["tool"] == "return_order"
    # the lock has no JSON form: left out of the snapshots, the run goes on and says so
    assert "confirm: state at /lock has no JSON form (lock): left out of every snapshot" in err


def test_a_dry_run_prints_and_nothing_is_overwritten(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["confirm", "init", "shop"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Written by `toollint confirm init`") and "nothing written" in err
    assert not (shop / "pyproject.toml").exists()
    (shop / "pyproject.toml").write_text('[project]\nname = "shop"\n')
    assert main(["confirm", "init", "shop", "--write"]) == 0
    written = (shop / "pyproject.toml").read_text()
    assert written.startswith('[project]\nname = "shop"\n') and "[tool.toollint.confirm]" in written
    capsys.readouterr()
    assert main(["confirm", "init", "shop", "--write"]) == 2  # a table there already: left alone
    assert "already has [tool.toollint.confirm]; not changed" in capsys.readouterr().err
    assert (shop / "pyproject.toml").read_text() == written
    (shop / "mine.toml").write_text("# mine\n")
    assert main(["confirm", "init", "shop", "-o", "mine.toml"]) == 2
    assert "mine.toml exists; not overwritten" in capsys.readouterr().err
    assert (shop / "mine.toml").read_text() == "# mine\n"
    assert main(["confirm", "init", "no/such/dir"]) == 2
    assert "no/such/dir: no such file or directory" in capsys.readouterr().err


def test_benchmark_none_switches_every_profile_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # a tool module where a profile would claim it (tau2's package layout)
    module = tmp_path / "tau2" / "domains" / "toy" / "tools.py"
    module.parent.mkdir(parents=True)
    for d in (tmp_path / "tau2", tmp_path / "tau2" / "domains", module.parent):
        (d / "__init__.py").write_text("")
    module.write_text("def tool(fn):\n    return fn\n\nclass ToyTools:\n    def __init__(self):\n"
                      "        self.db = {}\n\n    @tool\n"
                      "    def set_note(self, key: str, note: str = 'x') -> str:\n"
                      "        if note:\n            self.db[key] = note\n        return 'done'\n")
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nbenchmark = "none"\n'
                                             'tool-decorators = ["tool"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["check", "tau2"]) in (0, 1)
    assert "unknown benchmark" not in capsys.readouterr().err
    assert select_profile("none", [str(module)]) is None
    findings = lint_source(module.read_text(), str(module), Settings(confidence="low")).reported
    assert findings
    with_profile = derive_tools(findings)
    without = derive_tools(findings, profiles=False)
    assert with_profile[0].adapter.get("name") == "tau2"  # what `benchmark = "none"` turns off
    assert "name" not in without[0].adapter and without[0].benchmark != "tau2"


@pytest.mark.skipif(not BFCL.is_dir(), reason="no shared corpus BFCL at ../shared/corpus/bfcl")
def test_bfcl_through_the_starter_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "toollint.toml"
    assert main(["confirm", "init", str(BFCL), "-o", str(config)]) == 0
    text = config.read_text()
    assert 'load = "_load_scenario"' in text and "bfcl_eval.eval_checker.multi_turn_eval" in text
    capsys.readouterr()
    main(["check", "--confirm", "--confidence", "low", "--config", str(config), "--output-format", "json",
          "--witness-dir", str(tmp_path / "w"), str(BFCL)])
    out, err = capsys.readouterr()
    ends = {}
    for f in json.loads(out):
        if f["code"].startswith("TL1"):
            rel = Path(f["filename"]).resolve().relative_to((CORPUS / "bfcl").resolve()).as_posix()
            subject = f["properties"].get("param") or f["properties"].get("field") or ""
            key = f"corpus-bfcl:{rel}:{f['tool']}:{f['code']}:{subject}"
            ends[key] = (JUDGEMENTS.get(key, {}).get("verdict"), f["properties"].get("verdict"),
                         f["properties"].get("verdict_reason"))
    assert ends and not [k for k, (judged, verdict, _) in ends.items()
                         if judged == "false" and verdict == "VIOLATES"]
    assert sum(1 for judged, verdict, _ in ends.values() if judged == "true" and verdict == "VIOLATES") >= 6
    login = next(v for k, v in ends.items() if "ticket_login:TL104" in k)
    assert login == ("false", "UNTESTABLE", "legality_unknown")
    # a class whose module needs what this interpreter lacks is left out, said, and the others run
    assert "web_search:WebSearchAPI left out: ModuleNotFoundError" in err


@pytest.mark.skipif(not TAUBENCH.is_dir(), reason="no shared corpus tau-bench at ../shared/corpus/tau-bench")
@pytest.mark.skipif(not TAUBENCH_VENV.exists(),
                    reason="no venv-corpus-taubench (bench/confirm.py --corpus taubench-retail makes it)")
def test_taubench_with_its_profile_off_is_hosted_from_the_starter(tmp_path: Path) -> None:
    config = tmp_path / "toollint.toml"
    retail = TAUBENCH / "tau_bench" / "envs" / "retail"
    assert main(["confirm", "init", str(retail), "-o", str(config), "--python", str(TAUBENCH_VENV)]) == 0
    settings = load_settings(config)
    assert settings.benchmark == "none" and settings.confirm.factory == "tau_bench.envs.retail.data:load_data"
    spec = worker_spec(Contract("x:y", "", Source(""), (), config), settings.confirm, None,
                       settings.project_root)
    with Worker(spec) as worker:
        hello = worker.start()
        tools = {t["name"]: t for t in hello["tools"]}
        assert len(tools) == 16 and hello["notes"] == []
        cancel = tools["cancel_pending_order"]  # the name its get_info() gives the agent
        assert Path(cancel["file"]) == retail / "tools" / "cancel_pending_order.py"
        # the schema its get_info() gives the agent: the values the tool accepts (an enum of reasons)
        schema = cancel["parameters"]
        assert schema["properties"]["reason"]["enum"] == ["no longer needed", "ordered by mistake"]
        assert sorted(worker.request("pristine")["state"]) == ["orders", "products", "users"]
        refused = worker.request("probe", tool="cancel_pending_order",
                                 args={"order_id": "#W0000000", "reason": "no longer needed"})
        assert refused["result"]["value"] == "Error: order not found" and refused["diff"] == []
    assert sys.executable  # toollint's own interpreter never imported tau_bench
    assert "tau_bench" not in sys.modules


@pytest.mark.skipif(not TAUBENCH.is_dir(), reason="no shared corpus tau-bench at ../shared/corpus/tau-bench")
def test_each_domain_gets_its_own_data_loader(capsys: pytest.CaptureFixture[str]) -> None:
    """tau-bench's root holds two domains: the tool classes of one, with that domain's `load_data`; the
    other is named as found, with its own loader, never given the first one's state."""
    assert main(["confirm", "init", str(TAUBENCH)]) == 0
    out = capsys.readouterr().out
    assert 'factory = "tau_bench.envs.retail.data:load_data"' in out
    assert "tau_bench.envs.airline.tools" not in out.split("# also found")[0]
    assert "state from tau_bench.envs.airline.data:load_data" in out


def test_api_classes_with_a_scenario_loader_need_no_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """BFCL's form, on a fixture (the corpus test above runs when the corpus is there)."""
    project = tmp_path / "api"
    shutil.copytree(HERE / "fixtures" / "starter_api", project)
    monkeypatch.chdir(project)
    assert main(["confirm", "init", ".", "-o", "toollint.toml"]) == 0
    text = (project / "toollint.toml").read_text()
    assert 'classes = ["ticket_api:TicketAPI"]' in text and 'load = "_load_scenario"' in text
    assert "factory" not in text
    capsys.readouterr()
    main(["check", "--confirm", "--config", "toollint.toml", "--output-format", "json", "ticket_api.py"])
    findings = json.loads(capsys.readouterr().out)
    assert [f["properties"]["verdict"] for f in findings if f["code"] == "TL103"] == ["VIOLATES"]
    assert any(f["code"] == "TL202" and f["filename"] == "ticket_api.py" for f in findings)
