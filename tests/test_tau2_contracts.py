"""The bundled tau2-bench contracts: one for every state-mutating tool of airline, retail and telecom
(agent and user side), each clause citing its surface, and `toollint contracts check` clean against
the pinned tree (issue 11, item 2)."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
from toollint.contracts.cli import main as contracts_main
from toollint.contracts.loader import load_contracts
from toollint.contracts.model import Contract
from toollint.contracts.validator import SourceFile

CONTRACTS = Path(__file__).resolve().parents[1] / "toollint" / "profiles" / "tau2" / "contracts"
DOMAINS = ("airline", "retail", "telecom")
TOOLKIT_FILES = {"tools.py": "agent", "user_tools.py": "user"}


def library() -> list[Contract]:
    contracts, errors = load_contracts([CONTRACTS])
    assert errors == []
    return contracts


def writers(root: Path) -> set[tuple[str, str, str]]:
    """(domain, toolkit, tool) for every `@is_tool(ToolType.WRITE)` method, read by AST."""
    found = set()
    for domain in DOMAINS:
        for file, toolkit in TOOLKIT_FILES.items():
            path = root / "src" / "tau2" / "domains" / domain / file
            if not path.is_file():
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call)
                    and ast.unparse(d.func) == "is_tool"
                    and d.args
                    and ast.unparse(d.args[0]) == "ToolType.WRITE"
                    for d in node.decorator_list
                ):
                    found.add((domain, toolkit, node.name))
    return found


def test_every_writer_of_the_three_domains_has_a_contract(tau2_checkout: Path) -> None:
    expected = writers(tau2_checkout)
    assert len(expected) == 34  # 6 airline, 7 retail, 6 telecom agent, 15 telecom user
    got = {(c.adapter["domain"], c.adapter["toolkit"], c.tool_name) for c in library()}
    assert got == expected


def test_contracts_name_their_domain_toolkit_and_source_consistently() -> None:
    for c in library():
        file = Path(c.source.file)
        assert c.benchmark == "tau2" and c.source.package == "tau2"
        assert c.adapter["domain"] == file.parent.name == c.path.parent.name, c.path
        assert c.adapter["toolkit"] == TOOLKIT_FILES[file.name], c.path
        assert c.module == f"tau2.domains.{c.adapter['domain']}.{file.stem}"


def test_contracts_check_is_clean_against_the_pinned_tree(tau2_checkout: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = contracts_main(
        ["check", str(CONTRACTS), "--package-dir", f"tau2={tau2_checkout / 'src' / 'tau2'}"],
        stdout=out,
        stderr=err,
    )
    assert (code, out.getvalue().strip(), err.getvalue()) == (0, "All contracts passed.", "")


def test_policy_citations_are_at_their_lines(tau2_checkout: Path) -> None:
    """A policy (prompt template) citation passes TL307 with the quote anywhere in the file; these also
    point at the line the quote starts on."""
    package = tau2_checkout / "src" / "tau2"
    cited = [(c, clause) for c in library() for clause in c.clauses if clause.provenance.kind == "template"]
    assert len(cited) >= 10
    for c, clause in cited:
        prov = clause.provenance
        assert prov.file is not None and prov.file.startswith("../../data/tau2/domains/"), (c.path, clause.id)
        text = (package / prov.file).resolve().read_text()
        assert SourceFile(prov.file, text).quote_at(prov.line or 0, prov.quote or ""), (c.path, clause.id)


def test_every_clause_cites_a_surface_and_tiers_are_honest() -> None:
    tiers: dict[str, int] = {}
    for c in library():
        for clause in c.counted_clauses:
            prov = clause.provenance
            tiers[prov.tier] = tiers.get(prov.tier, 0) + 1
            if prov.tier == "author-specified":
                assert prov.inferred and prov.note, (c.path, clause.id)
            else:
                assert prov.quote and prov.line and prov.kind, (c.path, clause.id)
    # Most clauses are agent-visible; the only maintainer-comment one is the seat release.
    assert tiers["agent-visible"] > 3 * tiers["author-specified"]
    seats = [
        (c.tool_name, cl.id)
        for c in library()
        for cl in c.clauses
        if cl.provenance.tier == "maintainer-comment"
    ]
    assert seats == [("cancel_reservation", "eff.seats_released")]


@pytest.mark.parametrize("tool, clauses", [
    # "Checks: Line status must be Active, Customer owns the line." is two preconditions.
    ("refuel_data", {"pre.line_active", "pre.customer_owns_line"}),
    ("cancel_reservation", {"eff.seats_released", "eff.reservation_cancelled", "eff.payments_refunded"}),
])
def test_the_published_defects_have_their_clauses(tool: str, clauses: set[str]) -> None:
    contract = next(c for c in library() if c.tool_name == tool)
    assert clauses <= {cl.id for cl in contract.counted_clauses}


def test_the_adapter_block_example_in_the_docs_is_the_bundled_contract() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "contracts.md").read_text()
    block = next(
        b.split("```", 1)[0] for b in doc.split("```yaml\n")[1:] if "TelecomUserTools.make_payment" in b
    )
    bundled = (CONTRACTS / "telecom" / "make_payment.yaml").read_text().splitlines()
    assert all(line in bundled for line in block.strip().splitlines())


SCHEMAS = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("tau2_adapter", sys.argv[2])
adapter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adapter)
out = {}
for domain, toolkit in json.loads(sys.argv[1]):
    env = importlib.import_module(f"tau2.domains.{domain}.environment").get_environment()
    kit = env.tools if toolkit == "agent" else env.user_tools
    out[f"{domain}/{toolkit}"] = adapter.state_schema(adapter._state_types(env))
print(json.dumps(out))
"""


def test_every_state_path_a_predicate_reads_is_in_the_state_schema(
    tau2_python: Path, tau2_checkout: Path
) -> None:
    """A path a probe never reaches (the airplane-mode branch of toggle_wifi) is checked here, against
    the JSON Schema of the snapshot the tau2 adapter takes (the domain's DB models), as its `hello`
    reports it."""
    import json
    import os
    import subprocess

    from toollint.contracts.validator import schema_has_path

    contracts = library()
    variants = sorted({(c.adapter["domain"], c.adapter["toolkit"]) for c in contracts})
    env = {
        **os.environ,
        "PYTHONPATH": str(tau2_checkout / "src"),
        "TAU2_DATA_DIR": str(tau2_checkout / "data"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    adapter = CONTRACTS.parent / "host" / "adapter.py"
    out = subprocess.run(
        [str(tau2_python), "-c", SCHEMAS, json.dumps(variants), str(adapter)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    schemas = json.loads(out.stdout.strip().splitlines()[-1])
    missing = [(c.tool_name, clause.id, path) for c in contracts for clause in c.counted_clauses
               if clause.predicate is not None for path in sorted(clause.predicate.paths)
               if not schema_has_path(schemas[f"{c.adapter['domain']}/{c.adapter['toolkit']}"], path)]
    assert missing == []
    # The check can fail: a misspelt field is caught.
    assert not schema_has_path(schemas["telecom/user"], "user_db.device.airplane_mod")


def test_a_snapshot_of_two_databases_goes_to_the_predicate_sandbox_once() -> None:
    """tau2's snapshot has two keys (agent_db, user_db) and megabytes under them: it must travel by
    token, once per sandbox worker, not inline with every batch of clauses (the precondition search
    evaluates tens of thousands of them; inline, each shipped the whole airline DB)."""
    from toollint.contracts import sandbox
    from toollint.contracts.host.predicate import compile_predicate

    state = {"agent_db": {"reservations": {f"R{i}": {"status": None} for i in range(1000)}}}
    pool = sandbox.Sandbox(workers=1)
    try:
        check = [compile_predicate("args.r in pre.agent_db.reservations")]
        assert pool.evaluate_many(check, state, state, {"r": "R1"}, None) == [True]
        assert pool.evaluate_many(check, state, state, {"r": "R-1"}, None) == [False]
        (worker,) = pool._idle
        assert [obj is state for _token, obj in worker.sent.values()] == [True]  # held by token
        small = {"a": 1}
        assert worker._ref(small, {}, []) == ["v", small]  # a few scalars still go inline
    finally:
        pool.close()
