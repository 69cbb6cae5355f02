"""The one gateway to the benchmark's interpreter: the host's `locate` and `eval` operations, with
no adapter (a plain host) or beside one, and the rule that no other module starts that interpreter."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from toollint.dynamic.protocol import (
    GatewayError,
    Worker,
    WorkerError,
    WorkerSpec,
    evaluate,
    evaluate_in,
    locate_in,
    locate_package,
    plain_worker,
)

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
PY = sys.executable


def test_locate_finds_a_package_without_importing_it(tmp_path: Path) -> None:
    pkg = tmp_path / "sitepkgs" / "noisybench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise SystemExit('imported!')\n")
    assert locate_package(PY, "noisybench", env={"PYTHONPATH": str(pkg.parent)}) == pkg
    assert locate_package(PY, "json") == Path(ast.__file__).parent / "json"
    assert locate_package(PY, "no_such_package_anywhere") is None


def test_evaluate_answers_json(tmp_path: Path) -> None:
    helpers = tmp_path / "helpers.py"
    helpers.write_text(
        "import datetime\n\ndef tasks(n):\n    return [{'id': i, 'day': datetime.date(2024, 1, i + 1)}"
        " for i in range(n)]\n"
    )
    assert evaluate(PY, "sorted(names)", names={"names": ["b", "a"]}) == ["a", "b"]
    assert evaluate(PY, "tasks(n)", module=helpers, names={"n": 2}) == [
        {"id": 0, "day": "2024-01-01"}, {"id": 1, "day": "2024-01-02"}]


def test_one_warm_plain_worker_answers_many_questions(tmp_path: Path) -> None:
    with plain_worker(PY) as worker:
        assert worker.hello["adapter"] == "" and worker.hello["shims"] == []  # no shims without an adapter
        assert locate_in(worker, "json") is not None
        assert worker.request("locate", package="pytest")["version"] is None  # only when asked: it is slow
        assert worker.request("locate", package="pytest", version=True)["version"] == pytest.__version__
        assert evaluate_in(worker, "1 + 1") == 2
        assert evaluate_in(worker, "__import__('uuid').uuid4().version") == 4  # the real uuid4
        with pytest.raises(WorkerError, match="runs no adapter") as info:
            worker.request("build")
        assert info.value.kind == "adapter_unsupported"
        assert evaluate_in(worker, "2 * 3") == 6  # still serving
        assert worker.starts == 1


@pytest.mark.parametrize(("expr", "kw", "message"), [
    ("1 / 0", {"failure": "dividing"}, "dividing: ZeroDivisionError: division by zero"),
    ("object()", {}, "evaluating object(): the value at / is not JSON-serialisable (a object)"),
    ("1 +", {}, "evaluating 1 +: eval expression does not parse: "),
    ("x", {"module": "/nonexistent/helpers.py"}, "module file /nonexistent/helpers.py does not exist"),
])
def test_evaluate_failures_are_one_line(expr: str, kw: dict[str, str], message: str) -> None:
    with pytest.raises(GatewayError) as info:
        evaluate(PY, expr, **kw)  # type: ignore[arg-type]
    assert str(info.value).startswith(message) or message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_interpreter_is_one_clear_error() -> None:
    with pytest.raises(GatewayError, match=r"^could not run /nonexistent/python: No such file or directory$"):
        evaluate("/nonexistent/python", "1")
    with pytest.raises(GatewayError, match=r"^could not run /nonexistent/python: "):
        locate_package("/nonexistent/python", "json")


def test_an_adapter_host_answers_the_gateway_too() -> None:
    with Worker(WorkerSpec("toolkit", {"factory": "bank:make_bank", "sys_path": [str(BENCH)]})) as worker:
        assert evaluate_in(worker, "len(x)", names={"x": [1, 2]}) == 2
        assert locate_in(worker, "bank") == BENCH / "bank.py"  # a module: its file


# Modules that may start the benchmark's interpreter: the gateway itself.
GATEWAY = {ROOT / "dynamic" / "protocol.py"}


def _python_c_calls(path: Path) -> list[int]:
    """Lines where a list literal holds the string "-c": how `python -c SCRIPT` is spelt."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, (ast.List, ast.Tuple))
            and any(isinstance(e, ast.Constant) and e.value == "-c" for e in node.elts)]


def test_no_module_but_the_gateway_runs_python_dash_c() -> None:
    offenders = {}
    for package in ("toollint", "contracts", "dynamic", "rules"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path in GATEWAY or "examples" in path.parts:
                continue
            lines = _python_c_calls(path)
            if lines:
                offenders[str(path.relative_to(ROOT))] = lines
    assert offenders == {}
