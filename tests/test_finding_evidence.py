"""TL1 findings hand `--confirm`, the derived oracles, `--fix` and `contracts draft` their facts
typed (`Finding.evidence`): the parameter, the state path, the guard as an AST; never as text in
`properties` to be parsed again. The evidence crosses `--jobs` worker processes with its finding."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

from toollint.engine import lint_paths, lint_source
from toollint.model import Finding
from toollint.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "rules"


def _findings(name: str, code: str) -> list[Finding]:
    path = FIXTURES / name
    found = lint_source(path.read_text(encoding="utf-8"), str(path), Settings(select=[code])).findings
    assert found, f"{name} has no {code} finding"
    return found


def test_tl102_carries_the_guard_and_when_it_refuses() -> None:
    for f in _findings("tl102_commented_guard.py", "TL102"):
        assert f.evidence is not None and f.evidence.guard_statement is not None
        stmt = f.evidence.guard_statement
        assert ast.unparse(stmt) == f.properties["guard"]  # the text users see in JSON and SARIF
        if isinstance(stmt, ast.If):
            assert f.evidence.guard is stmt.test
        elif isinstance(stmt, ast.Assert):
            assert isinstance(f.evidence.guard, ast.UnaryOp) and f.evidence.guard.operand is stmt.test
        else:
            assert f.evidence.guard is None  # a bare raise refuses unconditionally


def test_tl103_and_tl104_carry_the_parameter_tl105_the_state_path() -> None:
    for name, code in (("tl103_log_only_argument.py", "TL103"), ("tl104_truthiness.py", "TL104")):
        for f in _findings(name, code):
            assert f.evidence is not None and f.evidence.parameter == f.properties["param"]
    for f in _findings("tl105_unpaired_verb_field.py", "TL105"):
        assert f.evidence is not None and f.evidence.state_path == f.properties["field"]


def test_the_evidence_pickles_and_crosses_worker_processes(tmp_path: Path) -> None:
    [first, *_] = _findings("tl102_commented_guard.py", "TL102")
    again = pickle.loads(pickle.dumps(first))
    assert _guard_dump(again) == _guard_dump(first) != ""
    source = (FIXTURES / "tl102_commented_guard.py").read_text(encoding="utf-8")
    for i in range(16):
        (tmp_path / f"m{i:02}.py").write_text(source, encoding="utf-8")
    settings = Settings(select=["TL102"])
    serial, parallel = lint_paths([tmp_path], settings, jobs=1), lint_paths([tmp_path], settings, jobs=2)
    assert parallel.findings and len(parallel.findings) == len(serial.findings)
    assert [_guard_dump(f) for f in parallel.findings] == [_guard_dump(f) for f in serial.findings]
    assert all(_guard_dump(f) for f in parallel.findings)


def _guard_dump(finding: Finding) -> str:
    stmt = finding.evidence.guard_statement if finding.evidence is not None else None
    return ast.dump(stmt) if stmt is not None else ""


def test_a_finding_linted_twice_equals_itself() -> None:
    # AST nodes compare by identity; the evidence leaves them out of ==, as the text is in properties.
    assert _findings("tl102_commented_guard.py", "TL102") == _findings("tl102_commented_guard.py", "TL102")
