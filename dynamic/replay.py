"""`toollint replay WITNESS`: re-run a recorded violation in fresh workers and say whether it still holds.

Exit codes: 1 the violation reproduced, 0 the clause now conforms (fixed), 2 the replay could not be
faithful (unreadable or malformed witness, missing contract, clause or tool, different benchmark
version or pristine state, an interpreter or adapter the project does not configure), 3 the fresh
runs disagree (flaky), with the paths that differed.

A witness is data from disk, so it is checked against `witness.schema.json` before anything runs,
and the host it names (interpreter, adapter, adapter options) must be the one the project's
configuration gives for the witness's contract: a witness naming another interpreter or adapter
file would otherwise run arbitrary code. `--python` and `--root` (the user's own choices) replace the
recorded interpreter and checkout; `--trust-witness` runs the recorded host as it is. A witness this
user's toollint wrote into the project's `.toollint/witnesses` (its host sealed with a key kept outside
every project, `dynamic/witness.py`) runs its recorded host with no flags, as `check --confirm`
prints it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from toollint.contracts import sandbox as predicate_sandbox
from toollint.contracts.loader import ContractError, bundled_library_dirs, load_contract, schema_errors
from toollint.contracts.model import Contract
from toollint.dynamic.checker import ClauseResult, ProbeRun, Scorer, run_probe, tool_tags
from toollint.dynamic.confirm import DEFAULT_WITNESS_DIR, derived_dir, run_profile, worker_spec
from toollint.dynamic.probes import Probe
from toollint.dynamic.protocol import DEFAULT_DEADLINE, Worker, WorkerError, WorkerSpec
from toollint.dynamic.witness import WITNESS_VERSION, call_text, sealed_here, witness_digest

from toollint.errors import ConfigError
from toollint.regular import UnreadableInput, read_regular
from toollint.settings import Settings

STILL_VIOLATES, FIXED, NOT_FAITHFUL, FLAKY_EXIT = 1, 0, 2, 3
WITNESS_SCHEMA = Path(__file__).with_name("witness.schema.json")
MAX_WITNESS_BYTES = 256 << 20  # a witness is a few KB; anything this large is not one


@dataclass
class ReplayOutcome:
    code: int
    sentence: str
    details: list[str] = field(default_factory=list)


def _probe_of(data: dict[str, Any]) -> Probe:
    return Probe(
        str(data.get("kind") or "happy"),
        dict(data.get("args") or {}),
        tool=str(data.get("tool") or ""),
        clause=data.get("target_clause"),
        varied=data.get("varied"),
        harvested_from=dict(data.get("harvested_from") or {}),
        before=list(data.get("before") or []),
        after=list(data.get("after") or []),
        past_guard=[str(c) for c in data.get("past_guard") or []],
    )


def _summary(status: Any, diff: list[dict[str, Any]]) -> str:
    paths = ", ".join(op["path"] for op in diff[:3]) + (", ..." if len(diff) > 3 else "")
    return f"status {status}, {len(diff)} change(s)" + (f" [{paths}]" if paths else "")


@lru_cache(maxsize=1)
def witness_schema() -> dict[str, Any]:
    return json.loads(WITNESS_SCHEMA.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def witness_problem(data: Any) -> str | None:
    """Why `data` is not a witness replay can run (the first schema error), or None."""
    schema = witness_schema()
    errors = list(schema_errors(data, schema, path="witness"))
    if not errors and isinstance(data, dict) and isinstance(data.get("partner"), dict):
        errors = list(
            schema_errors(
                data["partner"], schema["$defs"]["run"], path="witness", trail=["partner"], root=schema
            )
        )
    if errors:
        return errors[0].message
    assert isinstance(data, dict)
    history, positions = data.get("history"), data.get("history_positions")
    if history and not positions:
        return "a history without history_positions"
    if positions and any(
        i >= len(history or [data["probe"], *([data["partner"]] if data.get("partner") else [])])
        for i in positions
    ):
        return "history_positions outside the history"
    return None


def read_witness_json(path: Path) -> tuple[Any, str | None]:
    """The JSON at `path`, read as every witness is (a regular file, capped), or the NOT REPLAYED
    sentence saying why it cannot be read."""
    try:
        text = read_regular(path, MAX_WITNESS_BYTES).decode("utf-8")
        data = json.loads(text)
    except FileNotFoundError:
        return None, f"NOT REPLAYED: no witness file {path}"
    except UnreadableInput as exc:  # a device, a FIFO, a directory, or far too large
        return None, f"NOT REPLAYED: {exc}; a witness is a JSON file written by `toollint check --confirm`"
    except OSError as exc:
        return None, f"NOT REPLAYED: cannot read {path}: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        return (
            None,
            f"NOT REPLAYED: {path} is not a toollint witness (not UTF-8: {exc.reason} at byte {exc.start})",
        )
    except RecursionError:
        return None, f"NOT REPLAYED: {path} is not a toollint witness (JSON nested too deeply)"
    except ValueError as exc:
        return None, f"NOT REPLAYED: {path} is not a toollint witness (not JSON: {exc})"
    return data, None


def read_witness(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The witness at `path`, or the NOT REPLAYED sentence saying why it cannot be one."""
    data, why = read_witness_json(path)
    if why is not None:
        return None, why
    version = data.get("witness_version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > WITNESS_VERSION:
        return None, (f"NOT REPLAYED: {path} is a version {version} witness; this toollint reads version "
                      f"{WITNESS_VERSION} (upgrade toollint)")
    problem = witness_problem(data)
    if problem is not None:
        return None, f"NOT REPLAYED: {path} is not a valid toollint witness: {problem}"
    assert isinstance(data, dict)
    digest = data.get("digest")
    if not isinstance(digest, str):
        return None, (f"NOT REPLAYED: {path} carries no digest of its recorded call (written by an older "
                      "toollint, or edited): re-run `toollint check --confirm` for a fresh witness")
    if digest != witness_digest(data):
        return None, (f"NOT REPLAYED: {path} was edited after toollint wrote it (its recorded call or result "
                      "no longer matches its digest): re-run `toollint check --confirm` for a fresh witness")
    return data, None


def _same_path(a: str, b: str) -> bool:
    """The same file named two ways (relative and absolute). Symlinks are not followed: two venvs
    share the base interpreter a `bin/python` links to, and are still two interpreters."""
    return a == b or os.path.abspath(a) == os.path.abspath(b)


def untrusted(recorded: WorkerSpec, configured: WorkerSpec) -> str | None:
    """How the host a witness names differs from the one the project configures, or None."""
    if not _same_path(recorded.python, configured.python):
        return f"interpreter {recorded.python}, the project's is {configured.python}"
    if not _same_path(recorded.adapter, configured.adapter):
        return f"adapter {recorded.adapter!r}, the project's is {configured.adapter!r}"
    if recorded.options != configured.options:
        keys = sorted(k for k in {*recorded.options, *configured.options}
                      if recorded.options.get(k) != configured.options.get(k))
        return (f"adapter options that differ from the project's in {', '.join(keys)} "
                f"({', '.join(f'{k}={recorded.options.get(k)!r}' for k in keys[:3])})")
    return None


def configured_contract(contract: Contract, settings: Settings) -> bool:
    """Whether `contract` is one the project uses: under toollint's bundled contracts, the configured
    contract-dirs, or the derived contracts `--confirm` wrote beside its witnesses."""
    roots = [
        *bundled_library_dirs(),
        *map(Path, settings.contract_dirs),
        *map(Path, settings.confirm.contract_dirs),
        derived_dir(settings),
    ]
    where = contract.path.resolve()
    for root in roots:
        base = root if root.is_absolute() or settings.project_root is None else settings.project_root / root
        base = base.resolve()
        if where == base or base in where.parents:
            return True
    return False


def clause_exists(contract: Contract, clause_id: str, implicit: bool) -> bool:
    """Whether the contract still has the witness's clause (implicit rows are checked when scored)."""
    return implicit or any(c.id == clause_id for c in contract.counted_clauses)


def own_witness(path: Path, data: dict[str, Any], settings: Settings | None) -> bool:
    """A witness this user's toollint wrote, as it wrote it (`sealed_here`: its host and call carry the
    seal of a key outside every project), lying in the project's own witness folder: its host is the
    one `check --confirm` ran here, so replay runs it with no flags."""
    root = (settings.project_root if settings is not None else None) or Path.cwd()
    folder = (root / DEFAULT_WITNESS_DIR).resolve()
    return folder in path.resolve().parents and sealed_here(data)


def host_gone(spec: WorkerSpec, clause_id: str) -> str | None:
    """The NOT REPLAYED sentence when the host the witness ran on is no longer there: its interpreter,
    or the checkout it ran on (a `root` adapter option), with the flag that fixes it."""
    if not (os.path.isfile(spec.python) and os.access(spec.python, os.X_OK)):
        return (f"NOT REPLAYED {clause_id}: the interpreter the witness ran with, {spec.python}, is not "
                "there any more; pass --python PATH (the benchmark's interpreter)")
    root = spec.options.get("root")
    if isinstance(root, str) and not os.path.isdir(root):
        return (f"NOT REPLAYED {clause_id}: the checkout the witness ran on, {root}, is not there any more "
                "(moved?); pass --root DIR (where the checkout is now)")
    return None


def replay(path: Path | str, *, repeat: int = 2, python: str | None = None,
           deadline: float = DEFAULT_DEADLINE, settings: Settings | None = None,
           trust_witness: bool = False, offer: Path | None = None, root: str | None = None) -> ReplayOutcome:
    """Replay one witness. `settings`: the project's configuration the witness's host is checked
    against (default: none, so only toollint's interpreter and the adapter blocks of bundled
    contracts are trusted); `trust_witness` skips that check, and so does a witness of the project's
    own (`own_witness`). `offer`: a configuration file the refusal suggests (`--config`), one found
    beside the witness but not chosen by the user. `python` and `root` (the checkout, for a witness
    whose checkout moved) are the user's choices and replace the recorded ones."""
    path = Path(path)
    data, why = read_witness(path)
    if data is None:
        return ReplayOutcome(NOT_FAITHFUL, str(why))
    clause_data, worker_data, probe_data = data["clause"], data["worker"], data["probe"]
    code, clause_id = data["code"], clause_data["id"]
    try:
        contract = load_contract(clause_data["contract"])
    except (ContractError, OSError) as exc:
        return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED: the witness's contract cannot be loaded: {exc}")
    if not clause_exists(contract, clause_id, bool(clause_data.get("implicit"))):
        return ReplayOutcome(
            NOT_FAITHFUL,
            f"NOT REPLAYED {clause_id}: the contract {clause_data['contract']} no "
            f"longer has clause {clause_id!r}",
        )
    spec = WorkerSpec.from_json(worker_data)
    if python:
        spec.python = python
    if root and "root" in spec.options:
        spec.options["root"] = str(Path(root).resolve())
    if trust_witness or own_witness(path, data, settings):
        gone = host_gone(spec, clause_id)
        if gone is not None:
            return ReplayOutcome(NOT_FAITHFUL, gone)
    else:
        project = settings or Settings()
        # As check --confirm builds it, less what the linted files would add (replay has none).
        try:
            profile = run_profile(project)
        except ConfigError as exc:
            return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {exc}")
        # A contract's adapter block names code (an adapter file, a factory): it counts only for a
        # contract the project uses, never for one a witness merely points at.
        own = configured_contract(contract, project)
        basis = contract if own else dataclasses.replace(contract, adapter={})
        linted = (root,) if root else ()  # the checkout the user names implies its adapter options
        configured = worker_spec(basis, project.confirm, python, project.project_root, profile, linted)
        differs = untrusted(spec, configured)
        if differs is not None:
            block_matters = not own and untrusted(spec, worker_spec(contract, project.confirm, python,
                                                                    project.project_root, profile,
                                                                    linted)) is None
            why = (
                ""
                if not block_matters
                else (
                    f" (the adapter block of {contract.path} is not used: "
                    "the contract is not among the project's "
                    "contract-dirs or toollint's bundled contracts)"
                )
            )
            return ReplayOutcome(
                NOT_FAITHFUL,
                f"NOT REPLAYED {clause_id}: the witness names {differs}{why}; "
                "replay runs only the host the project's configuration gives (pass --python"
                f"{' ' + spec.python if differs.startswith('interpreter') else ''}"
                f"{', --config ' + str(offer) if offer else ''}, or --trust-witness to run the "
                "witness's own)",
            )
    originals = [_probe_of(probe_data)] + ([_probe_of(data["partner"])] if data.get("partner") else [])
    # An order-dependent witness is its whole call sequence; the witnesses sit at `history_positions`.
    sequence = [_probe_of(h) for h in data.get("history") or []] or originals
    positions = (
        list(data.get("history_positions") or []) if data.get("history") else list(range(len(originals)))
    )
    tool = str(data.get("tool") or originals[0].tool)
    call = call_text(tool, originals[0].args) + (f" after {len(sequence) - 1} earlier call(s)"
                                                  if data.get("history") else "")
    recorded = _summary(probe_data.get("result", {}).get("status"), probe_data.get("diff") or [])
    predicate_sandbox.new_run()
    outcomes: list[bool] = []
    diffs: list[list[dict[str, Any]]] = []
    details = [f"recorded: {recorded}"]
    for attempt in range(max(1, repeat)):
        worker = Worker(spec, deadline=deadline)
        try:
            hello = worker.start()
            mismatch = _mismatch(data.get("benchmark") or {}, hello)
            if mismatch:
                return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {mismatch}", details)
            pristine = worker.request("pristine")
            if data.get("pristine_state_hash") and pristine["state_hash"] != data["pristine_state_hash"]:
                return ReplayOutcome(
                    NOT_FAITHFUL,
                    f"NOT REPLAYED {clause_id}: the pristine state differs from the "
                    "recorded one (the benchmark's data changed)",
                    details,
                )
            meta = next((t for t in hello.get("tools", []) if t["name"] == tool), None)
            if meta is None:
                return ReplayOutcome(
                    NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: tool {tool!r} is gone", details
                )
            tags = tool_tags(contract, {"volatile": list(hello.get("volatile_paths") or []),
                                        "derived": list(hello.get("derived_paths") or [])})
            ran: list[ProbeRun] = [
                run_probe(worker, p, pristine["state"], pristine["state_hash"], tags, deadline)
                for p in sequence
            ]
            runs = [ran[i] for i in positions]
        except WorkerError as exc:
            return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {exc}", details)
        finally:
            worker.close()
        failed = next((r for r in ran if r.error is not None), None)
        if failed is not None:
            return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {failed.error}", details)
        row = ClauseResult(clause_id, str(clause_data.get("id", "")).split(".", 1)[0], "VIOLATES", code=code,
                           history=ran if data.get("history") else [])
        scorer = Scorer(contract, meta)
        if scorer.rescore(row, runs) is None:  # an implicit row the contract no longer implies
            return ReplayOutcome(
                NOT_FAITHFUL,
                f"NOT REPLAYED {clause_id}: the contract {clause_data['contract']} "
                f"no longer implies {clause_id!r}",
                details,
            )
        outcomes.append(scorer.reproduces(row, runs))
        diffs.append(runs[0].changes)
        details.append(f"run {attempt + 1}: {_summary(runs[0].status, runs[0].changes)} -> "
                       f"{'violates' if outcomes[-1] else 'conforms'}")
    if all(outcomes):
        return ReplayOutcome(STILL_VIOLATES, f"STILL VIOLATES {clause_id} ({code}): {call} reproduced in "
                             f"{len(outcomes)} of {len(outcomes)} fresh runs", details)
    if not any(outcomes):
        return ReplayOutcome(
            FIXED, f"FIXED {clause_id} ({code}): {call} now conforms in {len(outcomes)} fresh runs", details
        )
    keyed = [{json.dumps(op, sort_keys=True, default=str) for op in d} for d in diffs]
    differing = sorted({json.loads(x)["path"] for s in keyed for x in s if not all(x in t for t in keyed)})
    return ReplayOutcome(FLAKY_EXIT, f"FLAKY {clause_id} ({code}): {call} reproduced in {sum(outcomes)} of "
                         f"{len(outcomes)} fresh runs" + (f"; differing paths: {', '.join(differing[:5])}"
                                                          if differing else ""), details)


def _mismatch(recorded: dict[str, Any], hello: dict[str, Any]) -> str | None:
    for key, now_key, what in (("adapter", "adapter", "adapter"), ("variant", "variant", "benchmark variant"),
                               ("version", "benchmark_version", "benchmark version")):
        if recorded.get(key) and hello.get(now_key) != recorded.get(key):
            return f"{what} is {hello.get(now_key)!r}, the witness was recorded on {recorded.get(key)!r}"
    return None
