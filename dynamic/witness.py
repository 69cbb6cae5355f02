"""Witness files (one JSON per violation) and the one-sentence terminal line that names them.

A witness carries everything `toollint replay` needs to re-run the call in a fresh worker without a
seed or a version-bound blob: the worker spec (adapter, options, interpreter), the call (requested
and effective arguments), the clause with its provenance quote, the pre-state values the predicate
read ("bindings"), the result, and the keyed state diff.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint.contracts.bindings import bindings as trace_bindings

from toollint.atomic import write_text as atomic_write_text

if TYPE_CHECKING:
    from toollint.contracts.host.predicate import Predicate
    from toollint.dynamic.checker import ClauseResult, ProbeRun, ToolReport

WITNESS_VERSION = 1
MAX_BINDINGS = 8
# What the digest covers: the recorded call(s) and what they did. The host (`worker`) is checked
# against the project's configuration instead, and the contract may move, so neither is covered.
DIGESTED = ("code", "tool", "probe", "partner", "history", "history_positions", "pristine_state_hash")


def bindings(predicate: Predicate | None, run: ProbeRun) -> list[dict[str, Any]]:
    """The state values the predicate read on this run, under the keys it used (`contracts.bindings`):
    `pre.agent_db.lines{line_id=L1003}.status` was `'Suspended'`."""
    if predicate is None or run.pre is None:
        return []
    return trace_bindings(predicate, run.pre, run.post if run.post is not None else run.pre, run.args,
                          run.result.get("value"), limit=MAX_BINDINGS)


def call_text(tool: str, args: dict[str, Any], limit: int = 120) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items() if v is not None)
    if len(inner) > limit:
        inner = inner[: limit - 3] + "..."
    return f"{tool}({inner})"


def sentence(report: ToolReport, row: ClauseResult) -> str:
    """One compact line: verdict, clause, code, the call and what it did wrong."""
    from toollint.dynamic.checker import CLASS_NAMES

    run = row.run
    head = f"{row.verdict} {row.clause_id} ({row.code} {CLASS_NAMES.get(row.code or '', '')})"
    if run is None:
        return f"{head}: {row.detail}"
    call = call_text(report.tool, run.probe.args)  # what an agent would send, not every default
    n = len(run.changes)
    changed = f"changed {n} path{'s' if n != 1 else ''}" if n else "changed nothing"
    where = ""
    if row.clause is not None and row.clause.predicate is not None:
        b = bindings(row.clause.predicate, run)
        if b:
            where = " (where " + ", ".join(f"{x['expr']}={x['value']!r}" for x in b[:3]) + ")"
    error = run.result.get("error_type")
    if row.code == "TL201":
        what = f"succeeded although {row.clause_id} was false{where}; {changed}" if run.status == "ok" else \
            f"failed but {changed} although {row.clause_id} was false{where}"
        if run.status != "ok" and not run.changes:  # refused, with another error than the declared one
            declared = row.clause.on_violation.raises if row.clause and row.clause.on_violation else None
            what = f"raised {error}, not the declared {declared}, when {row.clause_id} was false{where}"
    elif row.code == "TL203" and run.status != "ok":
        what = (f"raised {error} ({str(run.result.get('error_message'))[:60]}) on a legal call, "
                f"so {row.clause_id} is false{where}; {changed}")
    elif run.probe.kind == "round_trip":
        what = _round_trip_text(report.tool, row, run)
        call = ""
    elif row.code == "TL202" and row.partner is not None:
        name = row.clause_id.split(".", 1)[1]
        what = f"left the same state as {name}={row.partner.args.get(name)!r}: the argument was ignored"
    elif row.code == "TL204":
        what = f"reported success while every effect clause failed; {changed}"
    elif row.code == "TL205" and row.history:
        what = (
            f"conforms alone but not after the {len(row.history) - 1} earlier call(s) in the same process: "
            f"state kept outside the environment survives reset"
        )
    elif row.code == "TL205":
        what = "left state behind: the environment after reset differs from the one before the call"
    elif row.code == "TL206" or row.kind == "frame":
        what = f"succeeded but {row.clause_id} is false; {changed}" + (
            f" ({run.changes[0]['path']})" if run.changes else "")
    else:
        what = f"reported success but {row.clause_id} is false{where}; {changed}"
    tail = f" -> toollint replay {display_path(row.witness)}" if row.witness else ""
    if row.verdict == "FLAKY":
        tail = f" [flaky: {row.detail.rsplit('; ', 1)[-1]}]" + tail
    return f"{head}: {call + ' ' if call else ''}{what}{tail}"


def _round_trip_text(tool: str, row: ClauseResult, run: ProbeRun) -> str:
    """`book_reservation(...) then cancel_reservation(...) left ... where it was not before`: the
    sequence, and the first path the clause reads that did not come back."""
    calls = [*run.probe.before, {"tool": tool, "args": run.probe.args}, *run.probe.after]
    seq = " then ".join(call_text(str(c.get("tool")), dict(c.get("args") or {}), limit=80) for c in calls)
    reads = [
        p for p in (row.clause.predicate.paths if row.clause is not None and row.clause.predicate else ())
    ]
    from toollint.dynamic.host.jsondiff import canonical_covers, most_specific

    fields = most_specific(reads)
    left = [op for op in run.changes if any(canonical_covers(p, op["path"]) for p in fields)]
    if not left:
        return f"{seq} left {row.clause_id} false"
    op = left[0]
    more = f" (and {len(left) - 1} more path(s))" if len(left) > 1 else ""
    if op.get("op") == "remove":
        what = f"{op['path']} gone (it was {_short(op.get('before'))})"
    elif op.get("op") == "add":
        what = f"{op['path']} added ({_short(op.get('after'))})"
    else:
        what = f"{op['path']} at {_short(op.get('after'))}, not back to {_short(op.get('before'))}"
    return f"{seq} left {what}{more}: {row.clause_id} is false"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def display_path(path: Path) -> str:
    """Relative to the working directory when under it, as paths in findings are."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _run_json(run: ProbeRun) -> dict[str, Any]:
    return {
        "kind": run.probe.kind,
        "tool": run.probe.tool,
        "args": run.probe.args,
        "effective_args": run.args,
        "varied": run.probe.varied,
        "target_clause": run.probe.clause,
        "harvested_from": run.probe.harvested_from,
        **(
            {"before": run.probe.before, "after": run.probe.after}
            if run.probe.before or run.probe.after
            else {}
        ),
        **({"past_guard": run.probe.past_guard} if run.probe.past_guard else {}),
        "result": {
            k: run.result.get(k)
            for k in ("status", "value", "agent_view", "error_type", "error_message")
            if k in run.result
        },
        "pre_state_hash": run.pre_hash,
        "post_state_hash": run.post_hash,
        "reset_state_hash": run.reset_hash,
        "diff": list(run.diff),
    }


def witness_json(report: ToolReport, row: ClauseResult) -> dict[str, Any]:
    from toollint.dynamic.checker import CLASS_NAMES

    assert row.run is not None and report.spec is not None
    clause = row.clause
    contract = report.contract
    prov = clause.provenance if clause is not None else None
    hello = report.hello
    data: dict[str, Any] = {
        "witness_version": WITNESS_VERSION,
        "verdict": row.verdict,
        "code": row.code,
        "defect_class": CLASS_NAMES.get(row.code or "", ""),
        "tool": report.tool,
        "clause": {
            "id": row.clause_id,
            "implicit": row.implicit,
            "contract": str(contract.path) if contract else None,
            "contract_tool": contract.tool if contract else None,
            "predicate": clause.predicate_source if clause else None,
            "provenance": None
            if prov is None
            else {
                "tier": prov.tier,
                "kind": prov.kind,
                "file": prov.file or (contract.source.file if contract else None),
                "line": prov.line,
                "quote": prov.quote,
                "note": prov.note,
                **({"finding": prov.finding, "about": prov.about} if prov.derived else {}),
            },
        },
        "benchmark": {
            "adapter": hello.get("adapter"),
            "variant": hello.get("variant"),
            "version": hello.get("benchmark_version"),
            "python": hello.get("python"),
        },
        "worker": report.spec.to_json(),
        "determinism": {
            "seed": hello.get("seed"),
            "shims": hello.get("shims"),
            "volatile_paths": hello.get("volatile_paths"),
            "derived_paths": hello.get("derived_paths"),
        },
        "pristine_state_hash": row.run.pristine_hash,
        "probe": _run_json(row.run),
        "partner": _run_json(row.partner) if row.partner is not None else None,
        "evaluation": {
            "detail": row.detail,
            "bindings": bindings(clause.predicate if clause is not None else None, row.run),
            "failing_probes": row.failing,
            "scored_probes": row.scored,
        },
        "confirmed": row.rerun,
    }
    if row.history:
        # Order-dependent: replay runs these calls in one worker, in order; the witnesses are among them.
        data["history"] = [_run_json(r) for r in row.history]
        data["history_positions"] = [i for i, r in enumerate(row.history)
                                     if r is row.run or r is row.partner]
    return data


OWN_FOLDER = ".toollint"  # what toollint writes on its own (witnesses by default), never the user's code


def ignore_own_folder(directory: Path) -> None:
    """A `.gitignore` of `*` in the `.toollint` folder `directory` is in (as ruff does in `.ruff_cache`),
    so witnesses never show as untracked in `git status`; a folder the user chose is left alone."""
    for folder in (directory, *directory.parents):
        if folder.name == OWN_FOLDER:
            marker = folder / ".gitignore"
            if not marker.exists():
                marker.write_text(
                    "# Written by toollint: what it keeps here stays out of git.\n*\n", encoding="utf-8"
                )
            return


def write_witness(report: ToolReport, row: ClauseResult, directory: Path, taken: set[Path]) -> Path:
    """`<tool>.<clause>.<probe-kind>.<n>.json`, never overwriting one written in this run."""
    assert row.run is not None
    directory.mkdir(parents=True, exist_ok=True)
    ignore_own_folder(directory)
    stem = f"{report.tool}.{row.clause_id}.{row.run.probe.kind}"
    n = 1
    while (directory / f"{stem}.{n}.json") in taken:
        n += 1
    path = directory / f"{stem}.{n}.json"
    taken.add(path)
    row.witness = path
    data = witness_json(report, row)
    data["replay"] = f"toollint replay {display_path(path)}"
    save_witness(path, data)
    return path


def save_witness(path: Path, data: dict[str, Any]) -> None:
    """Write `data` with its digest, atomically: a run killed mid-write leaves the previous witness
    or this one, never a torn or empty file."""
    data = json.loads(json.dumps(data, ensure_ascii=False, default=str))  # as replay will read it back
    data["digest"] = witness_digest(data)
    seal = host_seal(data)
    if seal is not None:
        data["host_seal"] = seal
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def witness_digest(data: dict[str, Any]) -> str:
    """`sha256:<hex>` of the recorded call and result (`DIGESTED`), in canonical JSON: replay refuses
    a witness whose call or result was edited after toollint wrote it (an integrity check, not a
    signature)."""
    covered = {key: data.get(key) for key in DIGESTED}
    covered["clause"] = {k: (data.get("clause") or {}).get(k) for k in ("id", "implicit")}
    canonical = json.dumps(covered, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


# --- the host seal: which witnesses this user's toollint wrote ------------------------------------------

SEAL_KEY_NAME = "witness-seal.key"


def seal_key_path() -> Path:
    """A key of this user's, outside every project (`$XDG_CACHE_HOME/toollint/`, else ~/.cache): a
    witness that came from elsewhere (a bug report, a checkout) cannot carry a seal made with it."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toollint" / SEAL_KEY_NAME


def _seal_key(create: bool) -> bytes | None:
    path = seal_key_path()
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    if not create:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        return path.read_bytes()
    except OSError:
        return None  # no writable cache: witnesses go unsealed, and replay asks for the flags


def host_seal(data: dict[str, Any], create: bool = True) -> str | None:
    """`hmac-sha256:<hex>` of the host a witness ran on (`worker`) and its digest, under this user's
    key: replay runs that host with no flags only when the seal is its own (`sealed_here`)."""
    key = _seal_key(create)
    if key is None:
        return None
    covered = json.dumps({"worker": data.get("worker"), "digest": data.get("digest")}, sort_keys=True,
                         ensure_ascii=False, separators=(",", ":"), default=str)
    mac = hmac.new(key, covered.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return "hmac-sha256:" + mac.hexdigest()


def sealed_here(data: dict[str, Any]) -> bool:
    """Whether this user's toollint wrote the witness's host and call as they are (never creates a key)."""
    seal, expected = data.get("host_seal"), host_seal(data, create=False)
    return isinstance(seal, str) and expected is not None and hmac.compare_digest(seal, expected)
