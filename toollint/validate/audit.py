"""`toollint audit-graders TREE --python PY`: the grader audit (`toollint.validate.graders`) over a
whole benchmark, through its profile's validation driver.

    toollint audit-graders BENCHMARK_TREE --python PY [--variant V ...] [--task ID ...]
                           [--only null,ablation,mutation] [--output-format text|json|sarif]
                           [--output FILE] [--witness-dir DIR] [--report FILE.html]

Prints, per suite or domain, the tasks audited, vacuous graders (TL408), unchecked effects (TL409),
unchecked fields (TL410) and the time; then the findings, each at its grader's line with the task as
a related location, in the chosen format. Each finding's witness (`--witness-dir`, default
`.toollint/witnesses/grader-audit`) replays with `toollint replay WITNESS`. Exit 1 on findings, 0 on
none, 2 on bad input.

`run_audit` is the audit of one tree, for this command and for `toollint check --audit-graders`
(`toollint.pipeline.audit`), which hands it the run's other findings: a TL410 on an argument a TL103
or TL202 says the tool drops is joined to it (`Unnoticed`), and a TL103/TL202 whose argument the audit
saw dropped says so (`SeenDropped`), each built from both findings' typed data.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint import atomic
from toollint.model import Finding, RelatedLocation
from toollint.validate.graders import CODES, AuditFinding, VariantAudit, argument_of

if TYPE_CHECKING:
    from toollint.trace.report_html import GraderAudit

PROG = "toollint audit-graders"
KINDS = tuple(CODES)
DEFAULT_WITNESS_DIR = Path(".toollint") / "witnesses" / "grader-audit"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="run each task's graders on wrong runs (nothing done, "
                                "one gold effect dropped, one gold field changed): findings TL408-TL410")
    p.add_argument("tree", type=Path, help="the benchmark's tree (an installed package or a checkout)")
    p.add_argument("--python", required=True, metavar="PY", help="the benchmark venv's interpreter")
    p.add_argument("--benchmark", metavar="NAME", help="the benchmark profile (default: detected from TREE)")
    p.add_argument("--variant", action="append", default=[], metavar="V",
                   help="a suite or domain to audit (repeatable; default: every one the profile lists)")
    p.add_argument("--task", action="append", default=[], metavar="ID", help="audit only these tasks")
    p.add_argument("--only", default=",".join(KINDS), metavar="KINDS",
                   help="which wrong runs, comma-separated (default: null,ablation,mutation)")
    p.add_argument("--output-format", default="text", choices=("text", "json", "sarif"))
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the findings here, not stdout")
    p.add_argument("--witness-dir", type=Path, default=DEFAULT_WITNESS_DIR, metavar="DIR",
                   help=f"where witnesses go (default {DEFAULT_WITNESS_DIR})")
    p.add_argument("--report", type=Path, metavar="FILE", help="an HTML page of the audit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    try:
        return _run(args)
    except (ValueError, RuntimeError) as exc:  # bad input; an interpreter that cannot answer (GatewayError)
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    kinds = tuple(k.strip() for k in str(args.only).split(",") if k.strip())
    request = AuditRequest(Path(args.tree), str(args.python), args.benchmark, tuple(args.variant),
                           tuple(args.task), kinds, Path(args.witness_dir))
    say = None if args.quiet else (lambda line: print(f"{PROG}: {line}", file=sys.stderr, flush=True))
    run = run_audit(request, progress=say)
    print(summary_table(run.audits), file=sys.stderr if args.output_format != "text" and not args.output else
          sys.stdout)
    _write_findings(run.findings, args, run.tree)
    if args.report:
        from toollint.trace.report_html import grader_audit_page

        atomic.write_text(Path(args.report), grader_audit_page(run.section()))
    return 1 if run.findings else 0


@dataclass(frozen=True)
class AuditRequest:
    """What to audit: one benchmark tree, in its own interpreter."""

    tree: Path
    python: str
    benchmark: str | None = None  # the profile's name; None: detected from the tree
    variants: tuple[str, ...] = ()  # suites or domains; none: every one the driver lists
    tasks: tuple[str, ...] = ()  # none: every task
    kinds: tuple[str, ...] = KINDS
    witness_dir: Path = DEFAULT_WITNESS_DIR


@dataclass
class AuditRun:
    """One tree's audit: per suite or domain, and its findings as reporters take them (each with its
    witness, and, where the tool drops the field's argument too, the `Unnoticed` join)."""

    benchmark: str
    tree: Path
    audits: list[VariantAudit]
    findings: list[Finding]
    unnoticed: list[Unnoticed] = field(default_factory=list)
    seen_dropped: list[SeenDropped] = field(default_factory=list)

    def section(self) -> GraderAudit:
        from toollint.trace.report_html import GraderAudit, GraderAuditRow

        rows = tuple(GraderAuditRow(a.variant, a.tasks, a.audited, a.vacuous, a.unchecked_effects,
                                    a.unchecked_fields, a.seconds) for a in self.audits)
        seen = tuple(f"`{s.tool}` drops `{s.argument}` ({s.code} at {s.path}:{s.line}): {s.sentence()}"
                     for s in self.seen_dropped)
        return GraderAudit(self.benchmark, rows, tuple(self.findings), seen)


def run_audit(request: AuditRequest, static: Sequence[Finding] = (),
              progress: Callable[[str], None] | None = None) -> AuditRun:
    """Audit a tree (`toollint audit-graders`, `toollint check --audit-graders`). `static`: the same
    run's other findings; a TL410 on an argument that a TL103 or TL202 among them says the tool drops
    is joined to it (`Unnoticed`), and a TL103/TL202 whose argument the audit saw dropped (a changed
    value left the final state as the gold run's) says so (`SeenDropped`). Bad input is a ValueError,
    an interpreter that cannot answer a RuntimeError, each one line."""
    from toollint.profiles import ProfileError, select_profile
    from toollint.validate.drivers import driver_for

    kinds = list(request.kinds)
    if not kinds or any(k not in KINDS for k in kinds):
        raise ValueError(f"--only {','.join(kinds)!r}: give some of {', '.join(KINDS)}")
    tree = request.tree
    if not tree.is_dir():
        raise ValueError(f"{tree}: not a directory")
    if not Path(request.python).is_file():
        raise ValueError(f"--python {request.python}: no such interpreter")
    try:
        profile = select_profile(request.benchmark, [tree], where="--benchmark")
    except ProfileError as exc:
        raise ValueError(str(exc)) from None
    if profile is None:
        raise ValueError(f"{tree}: no benchmark profile recognises this tree; name one with --benchmark")
    driver = driver_for(profile.name)
    problem = driver.check_package(tree)
    if problem:
        raise ValueError(problem)
    driver = driver.for_package(tree)
    listed = getattr(driver, "audit_variants", None)
    known: list[str] = listed() if listed is not None else []
    variants = [_variant(v, known) for v in request.variants] or known
    if not variants:
        raise ValueError(f"{profile.name}'s driver lists no suites or domains; name them with --variant")
    audits = [_audit_one(driver, request, v, kinds, progress) for v in variants]
    found = [(a, f) for a in audits for f in a.findings]
    findings = [_finding(f, tree) for _, f in found]
    witnesses = _write_witnesses(audits, profile.name, request.python, tree, request.witness_dir)
    for f in findings:
        f.properties["witness"] = witnesses.get(id_of(f), "")
    unnoticed = []
    for (_, audited), finding in zip(found, findings, strict=True):
        join = unnoticed_join(audited, static, tree)
        if join is not None:
            unnoticed.append(join)
            attach(join, finding)
    seen = []
    for a in audits:
        for tool, path in a.dropped_calls:
            dropping = _dropping(tool, argument_of(path), static, tree)
            if dropping is not None:
                saw = SeenDropped(a.variant, tool, argument_of(path), path, dropping.code, dropping.path,
                                  dropping.line)
                seen.append(saw)
                dropping.properties["unnoticed"] = {**asdict(saw), "sentence": saw.sentence()}
    return AuditRun(profile.name, tree, audits, findings, unnoticed, seen)


def _variant(given: str, known: list[str]) -> str:
    """A suite named bare (`banking`) is the listed variant it ends (`v1.2.2/banking`), when one is."""
    ends = [k for k in known if k.rpartition("/")[2] == given]
    return ends[0] if given not in known and len(ends) == 1 else given


def _audit_one(driver: Any, request: AuditRequest, variant: str, kinds: list[str],
               progress: Callable[[str], None] | None) -> VariantAudit:
    from toollint.validate.graders import audit_variant, warm_grader

    def writers() -> frozenset[str]:
        return writer_tools(request.tree)

    with warm_grader(driver, request.python, variant) as grade:
        return audit_variant(driver, request.python, variant, grade, writers=writers,
                             tasks=list(request.tasks), kinds=kinds, progress=progress)


def writer_tools(tree: Path) -> frozenset[str]:
    """The tools toollint's writer analysis says write state (for a driver that does not measure it)."""
    from toollint.engine import lint_paths
    from toollint.settings import Settings

    result = lint_paths([tree], Settings())
    return frozenset(t.qualname.rpartition(".")[2] for r in result.files for t in r.writers)


def id_of(f: Finding) -> str:
    p = f.properties
    return f"{p['variant']}|{p['task']}|{f.code}|{p.get('call_index')}|{p.get('field')}"


def _finding(f: AuditFinding, tree: Path) -> Finding:
    where = f.grader or f.source
    related = []
    if f.source is not None:
        related.append(RelatedLocation(f.source.file, f.source.line, 1, f"task {f.task} ({f.variant})"))
    path, line = (where.file, where.line) if where is not None else (str(tree), 1)
    props: dict[str, Any] = {"variant": f.variant, "task": f.task, "kind": f.kind, "call": f.call,
                             "call_index": f.index, "field": f.field,
                             "grader": f.grader.name if f.grader else ""}
    if f.kind == "mutation":
        props["argument"] = f.argument
    return Finding(f.code, f"{f.variant} task {f.task}: {f.message}", path, line, related=related,
                   properties=props, tool=f.call or None)


# TL103 (static: a parameter only logged or echoed, or only feeding a computation) and TL202 (dynamic:
# two calls differing only in the argument leave the same state) say a tool drops an argument.
DROPS_ARGUMENT = ("TL103", "TL202")


@dataclass(frozen=True)
class Unnoticed:
    """A TL410 (no grader checks a field of a gold call's argument) on the tool and argument that a
    TL103 or TL202 of the same run says the tool drops: the defect is one no score would show."""

    tool: str  # the gold call's tool
    argument: str
    field: str  # the mutated field (the argument itself, or a field of it)
    code: str  # of the finding that says the tool drops it: TL103 or TL202
    path: str  # where that finding is
    line: int

    def sentence(self) -> str:
        return (f"`{self.tool}` drops `{self.argument}` ({self.code} at {self.path}:{self.line}) and no "
                "grader would notice: the task passes with it changed")


def _dropped_argument(static: Finding) -> str | None:
    """The argument a TL103 or TL202 finding says its tool drops, from its typed evidence (TL103's
    parameter; TL202's `argument`, the ignored-argument clause's), else None."""
    if static.code == "TL103" and static.evidence is not None:
        return static.evidence.parameter
    if static.code == "TL202":
        argument = static.properties.get("argument")
        return argument if isinstance(argument, str) else None
    return None


@dataclass(frozen=True)
class SeenDropped:
    """An argument a TL103 or TL202 says the tool drops, which the audit saw dropped: a gold call with
    it changed left the final state as the gold run's (so the task passed): no grader could notice."""

    variant: str
    tool: str
    argument: str
    field: str
    code: str  # of the finding that says the tool drops it, which carries this
    path: str
    line: int

    def sentence(self) -> str:
        return (f"the grader audit saw it too ({self.variant}): a gold `{self.tool}` call with "
                f"`{self.field}` changed left the final state as the gold run's, and no grader would notice")


def _dropping(tool: str, argument: str, static: Sequence[Finding], tree: Path) -> Finding | None:
    """The first TL103/TL202 of the same tree that says `tool` drops `argument`."""
    root = tree.resolve()
    for s in static:
        if s.code not in DROPS_ARGUMENT or s.suppressed or not s.tool:
            continue
        if s.tool.rpartition(".")[2] != tool or _dropped_argument(s) != argument:
            continue
        if Path(s.path).resolve().is_relative_to(root):  # not another tree's tool of the same name
            return s
    return None


def unnoticed_join(audited: AuditFinding, static: Sequence[Finding], tree: Path) -> Unnoticed | None:
    """The join of a TL410 with the first TL103/TL202 of the same tree on its tool and argument."""
    if audited.kind != "mutation" or not audited.argument:
        return None
    s = _dropping(audited.call, audited.argument, static, tree)
    return None if s is None else Unnoticed(audited.call, audited.argument, audited.field, s.code, s.path,
                                            s.line)


def attach(join: Unnoticed, finding: Finding) -> None:
    """The join on the TL410 as every reporter shows it: its sentence (text, JSON and SARIF
    properties, the HTML report) and the dropping finding as a related location (SARIF, `full`)."""
    finding.related.append(RelatedLocation(join.path, join.line, 1, join.sentence()))
    finding.properties["unnoticed"] = {**asdict(join), "sentence": join.sentence()}


def _write_witnesses(audits: list[VariantAudit], profile: str, python: str, tree: Path,
                     directory: Path) -> dict[str, str]:
    from toollint.dynamic.witness import host_seal
    from toollint.validate.graders import witness_json

    out: dict[str, str] = {}
    for a in audits:
        for f in a.findings:
            data = witness_json(f, profile, python, tree.resolve())
            seal = host_seal(data)
            if seal is not None:
                data["host_seal"] = seal
            index = "" if f.index is None else str(f.index)
            name = "-".join(x for x in (f.code, f.variant, f.task, index, f.field) if x)
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
            path = directory / (safe[:150] + ".json")
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(path, json.dumps(data, indent=1, default=str) + "\n")
            finding = _finding(f, tree)
            out[id_of(finding)] = str(path)
    return out


def summary_table(audits: Sequence[VariantAudit]) -> str:
    head = ("variant", "tasks", "audited", "vacuous", "unchecked effects", "unchecked fields", "time")
    rows = [head] + [(a.variant, str(a.tasks), str(a.audited), str(a.vacuous), str(a.unchecked_effects),
                      str(a.unchecked_fields), f"{a.seconds:.1f}s") for a in audits]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    for a in audits:
        notes = [f"{a.ablations} ablation(s) and {a.mutations} mutation(s) graded"]
        if a.gold_fails:
            notes.append(f"{len(a.gold_fails)} task(s) whose gold run fails its own grader (not audited)")
        if a.no_state_change:
            notes.append(f"{a.no_state_change} whose gold run changes no state (no null-run verdict)")
        if a.unjudged:
            notes.append(f"{a.unjudged} graded without their LLM-judge part")
        if a.free_fields:
            notes.append(f"{a.free_fields} unchecked field(s) whose gold value the task does not state "
                         "(left to the agent: not reported)")
        if a.information_reads:
            notes.append(f"{a.information_reads} dropped or changed read(s) whose result a later gold call "
                         "carries (a replay cannot show their loss: not reported)")
        if a.dropped_fields:
            notes.append(f"{a.dropped_fields} replaced field(s) left the final state as the gold run's "
                         f"(the tool drops them, or a later call overwrites them: {', '.join(a.dropped)})")
        notes += a.skipped
        lines += [f"{a.variant}: {n}" for n in notes]
    return "\n".join(lines)


def _write_findings(findings: list[Finding], args: argparse.Namespace, tree: Path) -> None:
    from toollint.reporters import Report, writer

    fmt = {"text": "concise"}.get(args.output_format, args.output_format)
    report = Report(sorted(findings, key=Finding.sort_key), root=tree.resolve())
    if args.output:
        with atomic.atomic_text(Path(args.output)) as stream:
            writer(fmt)(report, stream)
    else:
        writer(fmt)(report, sys.stdout)


def replay_main(data: dict[str, Any], python: str | None, root: str | None) -> int:
    """`toollint replay` of a grader witness: re-grade its wrong run beside its gold run. Exit 1: the
    grader still passes the wrong run; 0: it no longer does; 2: not replayable. A witness this user's
    toollint did not write runs only the interpreter and tree named on the command line."""
    from toollint.dynamic.witness import sealed_here
    from toollint.validate.drivers import driver_for
    from toollint.validate.graders import replay_witness

    worker = data.get("worker") or {}
    if not sealed_here(data) and not (python and root):
        print("NOT REPLAYED: this grader witness was not written by your toollint; name the benchmark's "
              "interpreter and tree to run it with: --python PY --root TREE")
        return 2
    try:
        driver = driver_for(str(worker.get("profile"))).for_package(Path(root or str(worker.get("package"))))
        outcome = replay_witness(data, driver, python or str(worker.get("python")))
    except (ValueError, RuntimeError) as exc:
        print(f"NOT REPLAYED: {exc}")
        return 2
    print(outcome.sentence)
    return outcome.code
