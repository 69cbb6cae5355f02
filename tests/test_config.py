"""[tool.toollint] discovery, validation and the mapping to Settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.cli import main
from toollint.config import ConfigError, find_config, resolve_settings


def write_pyproject(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pyproject.toml"
    path.write_text(body)
    return path


def test_found_by_walking_up_from_the_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = write_pyproject(tmp_path / "proj", '[tool.toollint]\nselect = ["TL104"]\n')
    write_pyproject(tmp_path / "proj" / "src", "[project]\nname = 'x'\n")  # no table: skipped
    target = tmp_path / "proj" / "src" / "pkg"
    target.mkdir(parents=True)
    assert find_config([target]) == config
    settings = resolve_settings([target])
    assert settings.select == ["TL104"]
    assert settings.project_root == config.parent and settings.config_file == config


def test_no_config_gives_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = resolve_settings([tmp_path])
    assert settings.select == ["TL1", "TL4", "TL9"] and settings.config_file is None


def test_every_key_maps_to_its_settings_field(tmp_path: Path) -> None:
    config = write_pyproject(
        tmp_path,
        """
[tool.toollint]
select = ["TL1"]
ignore = ["TL105"]
extend-select = ["TL900"]
exclude = ["vendored"]
extend-exclude = ["*_pb2.py"]
tool-decorators = ["my_tool"]
tools = ["bench.env:Env.act"]
contract-dirs = ["contracts"]

[tool.toollint.per-file-ignores]
"tests/*" = ["TL101", "log-only-argument"]

[tool.toollint.confirm]
adapter = "agentdojo"
deadline = 30

[tool.toollint.trace]
task-files = ["tasks.json"]
""",
    )
    s = resolve_settings(config_file=config)
    assert (s.select, s.ignore, s.extend_select) == (["TL1"], ["TL105"], ["TL900"])
    assert (s.exclude, s.extend_exclude) == (["vendored"], ["*_pb2.py"])
    assert (s.tool_decorators, s.tools) == (["my_tool"], ["bench.env:Env.act"])
    assert s.contract_dirs == [str(tmp_path / "contracts")]
    assert s.per_file_ignores == {"tests/*": ["TL101", "log-only-argument"]}
    assert (s.confirm.adapter, s.confirm.deadline) == ("agentdojo", 30.0) and s.trace.task_files == [
        "tasks.json"
    ]


def test_isolated_ignores_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_pyproject(tmp_path, '[tool.toollint]\nselect = ["TL104"]\n')
    monkeypatch.chdir(tmp_path)
    assert resolve_settings([tmp_path], isolated=True).select == ["TL1", "TL4", "TL9"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[tool.toollint]\nselct = ["TL1"]\n', "unknown key 'selct' in .* did you mean 'select'"),
        (
            '[tool.toollint]\nextend_select = ["TL1"]\nextend-select = ["TL4"]\n',
            "same key; keep 'extend-select'",
        ),
        ('[tool.toollint]\nselect = "TL1"\n', "'select' in .* must be a list of strings, not a string"),
        ("[tool.toollint]\nselect = [1]\n", "must be a list of strings, not a list holding an integer"),
        ('[tool.toollint]\nper-file-ignores = ["x"]\n', "'per-file-ignores' .* must be a table"),
        (
            '[tool.toollint.per-file-ignores]\n"t/*" = "TL1"\n',
            "'per-file-ignores.\"t/\\*\"' in .* must be a list of strings, not a string",
        ),
        ("[tool.toollint]\nconfirm = 3\n", "'confirm' .* must be a table, not an integer"),
        ('[tool.toollint]\nselect = ["TL777"]\n', "unknown rule selector 'TL777' in 'select'"),
        ("[tool.toollint\nselect = 1\n", "invalid TOML in"),
        ("[tool]\ntoollint = 3\n", "must be a table"),
    ],
)
def test_bad_config_is_one_clear_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: str,
    message: str,
) -> None:
    config = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError, match=message):
        resolve_settings(config_file=config)
    (tmp_path / "m.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "m.py"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("toollint: error: ") and "Traceback" not in err


def test_config_option_names_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('[tool.toollint]\nselect = ["TL105"]\n')
    assert resolve_settings(config_file=other).select == ["TL105"]
    assert main(["check", "--config", str(tmp_path / "missing.toml"), str(tmp_path)]) == 2
    assert "config file not found" in capsys.readouterr().err
    other.write_text("[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match=r"no \[tool.toollint\] table"):
        resolve_settings(config_file=other)


def test_config_and_isolated_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--config", "x.toml", "--isolated", "."]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_cli_selection_overrides_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint.cli import build_parser, check_options
    from toollint.config import SettingsResolver

    write_pyproject(tmp_path, '[tool.toollint]\nselect = ["TL104"]\nignore = ["TL901"]\n')
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["check", "--select", "TL101,TL102", "--ignore", "TL902", "."])
    options = check_options(args)
    s = SettingsResolver(override=options.overrides).for_run(options.paths)
    # ruff's layers: the command line's --select starts afresh, so the file's ignore no longer applies
    assert s.select == ["TL101", "TL102"] and s.ignore == ["TL902"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[tool.toollint.confirm]\npyhton = "/usr/bin/python3"\n',
            r"unknown key 'pyhton' in .*pyproject.toml \[tool.toollint.confirm\]; did you mean 'python'\?",
        ),
        ("[tool.toollint.confirm]\ndeadlin = 3\n", "did you mean 'deadline'"),
        (
            '[tool.toollint.confirm]\nsys-paths = ["."]\n',
            "did you mean 'sys-path'",
        ),  # kebab-case, as documented
        (
            '[tool.toollint.confirm]\ndeadline = "soon"\n',
            r"'deadline' in .* \[tool.toollint.confirm\] must be a number, not a string",
        ),
        ("[tool.toollint.confirm]\ndeadline = -1\n", r"'deadline' in .* must be greater than 0 \(got -1\)"),
        ("[tool.toollint.confirm]\njobs = 0\n", "'jobs' in .* must be greater than 0"),
        ("[tool.toollint.confirm]\njobs = 1.5\n", "'jobs' in .* must be an integer, not a number"),
        (
            '[tool.toollint.confirm]\nsys-path = "."\n',
            "'sys-path' in .* must be a list of strings, not a string",
        ),
        ('[tool.toollint.confirm]\nreset = "wipe"\n', "'reset' in .* must be one of 'rebuild', 'deepcopy'"),
        (
            "[tool.toollint.confirm]\noptions = 3\n",
            "'options' in .* must be a table of values, not an integer",
        ),
        (
            '[tool.toollint.trace]\ntask-file = ["t.json"]\n',
            r"unknown key 'task-file' in .* \[tool.toollint.trace\]; did you mean 'task-files'\?",
        ),
        (
            '[tool.toollint.trace]\nsuites = "banking"\n',
            r"'suites' in .* \[tool.toollint.trace\] must be a list",
        ),
        ("[tool.toollint.trace]\npackage = 3\n", "'package' in .* must be a string or a boolean"),
        (
            "[tool.toollint.trace.tasks]\nt1 = 3\n",
            "'tasks.\"t1\"' in .* must be a string or a list of strings",
        ),
        ("[tool.toollint]\nrespect-gitignore = 1\n", "'respect-gitignore' in .* must be a boolean"),
    ],
)
def test_every_table_is_typed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: str,
    message: str,
) -> None:
    config = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError, match=message):
        resolve_settings(config_file=config)
    (tmp_path / "m.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "m.py"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("toollint: error: ") and "internal error" not in err


def test_typed_tables_read_back(tmp_path: Path) -> None:
    config = write_pyproject(tmp_path, """
[tool.toollint.confirm]
adapter = "toolkit"
factory = "bank:make_bank"
sys-path = ["."]
deadline = 3
options = { lazy = true }

[tool.toollint.trace]
package = true
suites = ["banking"]
tasks = { t1 = "graders.py:grade", t2 = ["a.py:f", "b.py:g"] }
state-params = { db = "" }
""")
    s = resolve_settings(config_file=config)
    assert s.confirm.adapter_options() == {"factory": "bank:make_bank", "sys_path": ["."]}
    assert (s.confirm.deadline, s.confirm.options, s.confirm.python) == (3.0, {"lazy": True}, None)
    assert isinstance(s.confirm.deadline, float)
    assert (s.trace.package, s.trace.suites, s.trace.state_params) == (True, ["banking"], {"db": ""})
    assert s.trace.tasks == {"t1": "graders.py:grade", "t2": ["a.py:f", "b.py:g"]}


def test_programs_may_give_tables_as_dicts_and_get_the_same_checks() -> None:
    from toollint.settings import ConfirmSettings, Settings

    assert Settings(confirm={"adapter": "toolkit"}).confirm == ConfirmSettings(adapter="toolkit")
    with pytest.raises(ConfigError, match="unknown key 'timeout' in Settings"):
        Settings(confirm={"timeout": 3})


def test_each_file_gets_the_configuration_above_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint.config import SettingsResolver

    monkeypatch.chdir(tmp_path)
    top = write_pyproject(tmp_path, '[tool.toollint]\nselect = ["TL1"]\n')
    inner = write_pyproject(tmp_path / "sub", '[tool.toollint]\nselect = ["TL104"]\n')
    (tmp_path / "sub" / "deeper").mkdir()
    resolver = SettingsResolver()
    assert resolver.for_path(tmp_path / "x.py").config_file == top
    assert resolver.for_path(tmp_path / "sub" / "deeper" / "y.py").config_file == inner
    assert resolver.for_path(tmp_path / "sub" / "deeper" / "y.py") is resolver.for_path(
        tmp_path / "sub" / "z.py"
    )
    # The run's own settings (project root, confirm, trace) come from the targets' common directory.
    assert resolver.for_run([tmp_path / "sub", tmp_path / "x.py"]).config_file == top
    assert resolver.for_run([tmp_path / "x.py", tmp_path / "sub"]).config_file == top
    assert resolver.for_run([tmp_path / "sub" / "deeper"]).config_file == inner
    fixed = SettingsResolver(config_file=top)
    assert fixed.for_path(tmp_path / "sub" / "z.py").config_file == top  # --config: one for everything


def test_each_configuration_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import toollint.config as config_module
    from toollint.config import SettingsResolver

    write_pyproject(tmp_path, '[tool.toollint]\nselect = ["TL1"]\n')
    reads: list[Path] = []
    real = config_module.load_table
    monkeypatch.setattr(config_module, "load_table", lambda path: reads.append(path) or real(path))
    resolver = SettingsResolver()
    for i in range(50):
        resolver.for_path(tmp_path / f"d{i % 5}" / "f.py")
    assert len(reads) == 1
