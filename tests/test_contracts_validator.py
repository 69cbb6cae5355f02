"""The loader and `toollint contracts check`: one seeded fixture per check, each named precisely."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from toollint.contracts.cli import main
from toollint.contracts.loader import (
    SCHEMA_FILE,
    ContractError,
    find_contract,
    load_contract,
    load_contracts,
)
from toollint.contracts.validator import ValidationOptions, validate

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS

FIXTURES = Path(__file__).parent / "fixtures" / "contracts"
GOOD = FIXTURES / "good" / "set_limit.yaml"
BAD = FIXTURES / "bad"

# file -> (code, line, words the message must contain)
EXPECTED = {
    "tl300_tab.yaml": ("TL300", 8, "tab character in indentation"),
    "tl300_duplicate_key.yaml": ("TL300", 9, "duplicate key 'predicate' (first defined at line 8)"),
    "tl300_bad_indent.yaml": ("TL300", 9, "bad indentation"),
    "tl301_unknown_key.yaml": ("TL301", 8, "unknown key 'predicat' in clauses > clause 'eff.limit_set'"),
    "tl301_wrong_type.yaml": (
        "TL301",
        9,
        ("expected integer, got string in clauses > clause 'eff.limit_set' > provenance > line"),
    ),
    "tl301_missing_key.yaml": ("TL301", 2, "missing required key 'benchmark'"),
    "tl302_dunder.yaml": ("TL302", 8, "attribute '__class__' is not allowed"),
    "tl302_free_name.yaml": ("TL302", 8, "free name 'limit'"),
    "tl303_duplicate_id.yaml": ("TL303", 10, "duplicate clause id 'eff.limit_set' (first at line 7)"),
    "tl303_unmarked_draft.yaml": ("TL303", 7, "has the _draft suffix but not 'draft: true'"),
    "tl304_quote_mismatch.yaml": (
        "TL304",
        9,
        "not found at ../src/bank.py:10 (line reads ''); it occurs at line 11",
    ),
    "tl305_return_is_log.yaml": ("TL305", 9, "is cited as a tool return but is a log line"),
    "tl306_comment_as_visible.yaml": (
        "TL306",
        9,
        ("is a comment line, so its tier is maintainer-comment, not agent-visible"),
    ),
    "tl307_template_missing.yaml": ("TL307", 9, "does not contain the quote 'Never confirm anything.'"),
    "tl308_unknown_path.yaml": ("TL308", 8, "state path 'account.limits' is not in the state schema"),
    "tl308_unknown_arg.yaml": ("TL308", 8, "'args.amount' is not a parameter of set_limit"),
    "tl309_missing_tool.yaml": ("TL309", 2, "'set_limits' is not defined in ../src/bank.py"),
}


def test_every_bad_fixture_has_an_expectation() -> None:
    assert sorted(p.name for p in BAD.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_seeded_problem_is_found_once_with_file_line_and_plain_message(name: str) -> None:
    code, line, words = EXPECTED[name]
    findings = validate([BAD / name])
    assert [(f.code, f.line) for f in findings] == [(code, line)], [f.message for f in findings]
    assert words in findings[0].message
    assert findings[0].path == str(BAD / name)


def test_the_good_fixture_is_clean_and_loads_with_positions() -> None:
    assert validate([GOOD]) == []
    contract = load_contract(GOOD)
    assert contract.tool_name == "set_limit"
    assert [c.id for c in contract.clauses_of("eff")] == [
        "eff.limit_set",
        "eff.limit_logged",
        "eff.limit_confirmed",
    ]
    assert [c.id for c in contract.clauses_of("eff", include_drafts=True)][1] == "eff.note_draft"
    assert list(contract.effective_args) == ["limit"] and contract.effective_args["limit"].falsy_legal is True
    assert contract.success is not None and contract.success.biconditional
    pre = contract.clause("pre.limit_nonnegative")
    assert pre is not None and pre.on_violation is not None and pre.on_violation.raises == "ValueError"
    assert pre.provenance.tier == "maintainer-comment" and not pre.provenance.headline
    eff = contract.clause("eff.limit_set")
    assert eff is not None and (eff.line, eff.predicate_line, eff.predicate_col) == (7, 8, 16)
    assert eff.predicate is not None and eff.predicate.paths == frozenset({"account.limit"})


def test_drafts_are_excluded_from_counts() -> None:
    contract = load_contract(GOOD)
    assert "eff.note_draft" in [c.id for c in contract.clauses]
    assert "eff.note_draft" not in [c.id for c in contract.counted_clauses]
    assert not contract.is_draft


def test_load_contract_raises_contract_error_not_a_traceback() -> None:
    with pytest.raises(ContractError) as info:
        load_contract(BAD / "tl301_unknown_key.yaml")
    assert info.value.code == "TL301" and info.value.line == 8
    assert str(info.value).startswith(f"{BAD / 'tl301_unknown_key.yaml'}:8:")


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "the file is empty"),
        ("- a\n- b\n", "expected object, got array at top level"),
        ("tool: &t x\nbenchmark: *t\n", "aliases (*name) are not supported"),
        ("tool: [unclosed\n", "expected ',' or ']'"),
        ("{1: 2}\n", "mapping key 1 is not a string"),
    ],
)
def test_other_broken_files_get_one_line_messages(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    contracts, errors = load_contracts([tmp_path])
    assert contracts == [] and len(errors) == 1
    assert words in errors[0].message and "\n" not in errors[0].message


def test_non_utf8_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_bytes(b"tool: \xff\n")
    _, errors = load_contracts([tmp_path, tmp_path / "nope"])
    assert sorted(e.message for e in errors) == ["file is not valid UTF-8 (invalid start byte)",
                                                 "no such file or directory"]


@pytest.mark.parametrize(
    "clause, words",
    [
        ("{id: eff.x, predicate: 'True', provenance: {tier: author-specified}}", "must say 'inferred: true'"),
        (
            "{id: eff.x, predicate: 'True', provenance: {tier: agent-visible, kind: docstring}}",
            "needs 'line', 'quote'",
        ),
        ("{id: eff.x, provenance: {tier: author-specified, inferred: true}}", "needs a 'predicate'"),
        (
            "{id: arg.x, provenance: {tier: author-specified, inferred: true}}",
            "must say whether falsy values",
        ),
        (
            (
                "{id: eff.x, predicate: 'True', falsy_legal: true, "
                "provenance: {tier: author-specified, inferred: true}}"
            ),
            "'falsy_legal' is only allowed on arg clauses",
        ),
        (
            (
                "{id: success, predicate: 'True', biconditional: true, "
                "provenance: {tier: author-specified, inferred: true}}"
            ),
            "gives no 'justification'",
        ),
        (
            "{id: Eff.X, predicate: 'True', provenance: {tier: author-specified, inferred: true}}",
            "is not well-formed",
        ),
        (
            (
                "{id: eff.x, predicate: 'True', "
                "provenance: {tier: agent-visible, kind: docstring, line: 1, quote: q, "
                "inferred: true}}"
            ),
            "cites a source yet says 'inferred: true'",
        ),
    ],
)
def test_clause_rules_beyond_the_schema(tmp_path: Path, clause: str, words: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(f"tool: m:f\nbenchmark: b\nsource: {{file: f.py}}\nclauses:\n  - {clause}\n")
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert words in info.value.message and info.value.line == 5


def test_published_schema_is_valid_and_agrees_with_the_loader() -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load(GOOD.read_text()), schema)
    for contract in sorted(AGENTDOJO_CONTRACTS.rglob("*.yaml")):  # readers/ too
        jsonschema.validate(yaml.safe_load(contract.read_text()), schema)
    for name in ("tl301_unknown_key.yaml", "tl301_wrong_type.yaml", "tl301_missing_key.yaml"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load((BAD / name).read_text()), schema)


def test_pinned_commit_citations_are_read_with_git_show(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tool.py").write_text('def f(x: int) -> None:\n    """Store x."""\n')

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args],
            check=True,
            capture_output=True,
            text=True,
            env={
                "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@t",
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t",
                "HOME": str(tmp_path),
            },
        ).stdout.strip()

    git("init", "-q")
    git("add", "tool.py")
    git("commit", "-q", "-m", "x")
    commit = git("rev-parse", "HEAD")
    (repo / "tool.py").write_text('def f(x: int) -> None:\n    """Changed since."""\n')
    contract = tmp_path / "f.yaml"
    clause = (
        "{id: eff.x, predicate: 'True', "
        "provenance: {tier: agent-visible, kind: docstring, line: 2, quote: Store x.}}"
    )
    contract.write_text(
        f"tool: tool:f\nbenchmark: b\nsource: {{file: tool.py, commit: {commit}, repo: repo}}\n"
        f"clauses:\n  - {clause}\n"
    )
    assert validate([contract]) == []
    contract.write_text(contract.read_text().replace(commit, "deadbeef"))
    [finding] = validate([contract])
    assert finding.code == "TL309" and "not found in commit deadbeef (git show, in repo)" in finding.message


def test_find_contract_by_reference_or_name() -> None:
    found = find_contract("set_limit", [FIXTURES / "good"])
    assert found is not None and found.tool == "bank:set_limit"
    assert find_contract("bank:set_limit", [FIXTURES / "good"]) == found
    assert find_contract("nope", [FIXTURES / "good"]) is None


# --- the CLI ---------------------------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_exit_codes_and_text_output() -> None:
    assert run_cli("check", str(GOOD))[0] == 0
    code, out, _ = run_cli("check", str(BAD / "tl304_quote_mismatch.yaml"))
    assert code == 1
    assert out.splitlines()[0].startswith(
        f"{BAD / 'tl304_quote_mismatch.yaml'}:9:1: TL304 [provenance-quote-mismatch]"
    )
    code, _, err = run_cli("check", "--output-format", "xml")
    assert code == 2 and "invalid choice: 'xml'" in err and "Traceback" not in err
    code, _, err = run_cli("check", "--package-dir", "agentdojo")
    assert code == 2 and "expects NAME=DIR" in err
    code, _, err = run_cli("check", "--agentdojo-src", "/nonexistent")
    assert code == 2 and "is not a directory" in err
    code, _, err = run_cli("frobnicate")
    assert code == 2 and "invalid choice" in err


def test_cli_json_and_sarif_locate_the_yaml_line() -> None:
    code, out, _ = run_cli("check", "--output-format", "json", str(BAD / "tl305_return_is_log.yaml"))
    assert code == 1
    [item] = json.loads(out)
    assert (
        item["code"] == "TL305" and item["location"]["row"] == 9 if "location" in item else item["line"] == 9
    )
    code, out, _ = run_cli("check", "--output-format", "sarif", str(BAD))
    sarif = json.loads(out)
    results = sarif["runs"][0]["results"]
    assert code == 1 and len(results) == len(EXPECTED)
    first = next(r for r in results if r["ruleId"] == "TL309")
    region = first["locations"][0]["physicalLocation"]["region"]
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "tl309_missing_tool.yaml"
    )
    assert region["startLine"] == 2


def test_cli_draft_errors_are_one_line(tmp_path: Path) -> None:
    code, _, err = run_cli("draft", "no_colon_here")
    assert code == 2 and err.count("\n") == 1 and "must look like package.module:function" in err
    code, _, err = run_cli("draft", "pkg.mod:f", "--src", str(tmp_path))
    assert code == 2 and "module 'pkg.mod' not found" in err
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("def f(:\n")
    code, _, err = run_cli("draft", "pkg.mod:f", "--src", str(tmp_path))
    assert code == 2 and "does not parse" in err
    (tmp_path / "pkg" / "mod.py").write_text("def g(): pass\n")
    code, _, err = run_cli("draft", "pkg.mod:f", "--src", str(tmp_path))
    assert code == 2 and "'f' is not defined" in err
    code, _, err = run_cli("draft", "pkg.mod:g", "--src", str(tmp_path), "-o", str(tmp_path / "pkg"))
    assert code == 2 and err.count("\n") == 1 and "cannot write" in err and "a directory" in err
    code, _, err = run_cli(
        "draft", "pkg.mod:g", "--src", str(tmp_path), "-o", str(tmp_path / "new" / "x.yaml")
    )
    assert code == 0 and (tmp_path / "new" / "x.yaml").is_file()  # a missing folder is made, as for -o


def test_draft_of_a_small_tool_validates_and_reads_the_docstring(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "tools.py").write_text(
        "def refuel(line_id: str, gb: float, force: bool = False) -> str:\n"
        '    """Add data to a line.\n'
        "\n"
        "    Checks:\n"
        "        - Line status must be Active\n"
        "\n"
        "    Args:\n"
        "        line_id (str): The line.\n"
        "        gb (float): Gigabytes to add.\n"
        "\n"
        "    Raises:\n"
        "        ValueError: If the line is not found.\n"
        '    """\n'
        '    return f"Added {gb} GB"\n'
    )
    out = tmp_path / "refuel.yaml"
    code, _, _ = run_cli("draft", "pkg.tools:refuel", "--src", str(tmp_path), "-o", str(out))
    assert code == 0
    contract = load_contract(out)
    ids = [c.id for c in contract.clauses]
    assert ids == ["eff.add_data_line_draft", "pre.line_status_must_active_draft", "pre.line_not_found_draft",
                   "arg.line_id_draft", "arg.gb_draft", "arg.force_draft", "success_draft"]
    assert all(c.draft for c in contract.clauses) and contract.counted_clauses == []
    falsy = {c.arg: c.falsy_legal for c in contract.clauses_of("arg", include_drafts=True)}
    assert falsy == {"line_id": False, "gb": True, "force": True}
    raised = contract.clause("pre.line_not_found_draft")
    assert (
        raised is not None and raised.on_violation is not None and raised.on_violation.raises == "ValueError"
    )
    assert validate([out], options=ValidationOptions(package_dirs={"pkg": pkg})) == []


def test_cli_list_counts_clauses_and_excludes_drafts() -> None:
    code, out, _ = run_cli("list", "--output-format", "json", str(GOOD))
    assert code == 0
    [row] = json.loads(out)["contracts"]
    assert row["tool"] == "bank:set_limit"
    assert row["clauses"] == {"pre": 1, "eff": 3, "frame": 1, "arg": 1, "inv": 1, "success": 1}
    assert (row["drafts"], row["counted"], row["agent_visible"]) == (1, 8, 5)
    code, out, _ = run_cli("list", str(BAD))
    assert code == 1 and "not loadable" in out.splitlines()[-1]


def test_toollint_contracts_is_delegated_here(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toollint.cli import main as toollint_main

    assert toollint_main(["contracts", "check", str(GOOD)]) == 0
    assert toollint_main(["contracts", "check", str(BAD / "tl309_missing_tool.yaml")]) == 1
    assert "TL309" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text("[tool.toollint]\nselect = 3\n")
    assert toollint_main(["contracts", "check", "--config", str(tmp_path / "pyproject.toml"), str(GOOD)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_configured_contract_dirs_are_checked_when_no_dir_is_given(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.toollint]\ncontract-dirs = ["{BAD / "tl309_missing_tool.yaml"}"]\n'
    )
    code, out, _ = run_cli("check", "--config", str(tmp_path / "pyproject.toml"))
    assert code == 1 and "TL309" in out


def test_draft_success_skips_error_messages(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "web.py").write_text(
        "def get(url: str) -> str:\n"
        '    """Fetch a page."""\n'
        "    if not url:\n"
        '        return "404 Not Found"\n'
        '    return "Fetched the page"\n'
    )
    out = tmp_path / "get.yaml"
    assert run_cli("draft", "pkg.web:get", "--src", str(tmp_path), "-o", str(out))[0] == 0
    success = load_contract(out).clause("success_draft")
    assert success is not None and success.provenance.line == 5 and success.provenance.kind == "return"


def test_a_benchmark_not_installed_here_is_a_warning_not_a_finding(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "tool: no_such_benchmark_pkg.tools:f\nbenchmark: b\n"
        "source: {package: no_such_benchmark_pkg, file: tools.py}\nclauses:\n"
        "  - {id: eff.x, predicate: 'True', "
        "provenance: {tier: agent-visible, kind: docstring, line: 2, quote: q}}\n"
    )
    warnings: list[str] = []
    assert validate([contract], warn=warnings.append) == []
    assert warnings == [
        (
            "package 'no_such_benchmark_pkg' is not installed here, so the cited sources of 1 contract "
            "were not checked (pass --python PY, --package-dir no_such_benchmark_pkg=DIR)"
        )
    ]
    code, out, err = run_cli("check", str(contract))
    assert code == 0 and "could run" in out and "warning: package 'no_such_benchmark_pkg'" in err
    # Once the package is located, a missing file is a finding.
    (tmp_path / "pkgdir").mkdir()
    code, out, _ = run_cli(
        "check", "--package-dir", f"no_such_benchmark_pkg={tmp_path / 'pkgdir'}", str(contract)
    )
    assert code == 1 and "TL309" in out and "source file 'tools.py' not found in package" in out
