"""How long `--confirm-all` takes over each benchmark profile's bundled contracts, and how many clause
rows it leaves UNTESTABLE (targets: under 60 s on 2 cores per profile, worker start-up paid once per
variant plus one fresh worker per variant for confirmation; under 10% UNTESTABLE).

    python bench/confirm.py [--profile NAME]... [--python NAME=PATH]... [--jobs N] [--repeat N]
                            [--sandbox-overhead]
    python bench/confirm.py --corpus bfcl --corpus taubench-retail ...

With --corpus, a code base of shared/corpus is set up by `toollint confirm init` alone (no profile,
nothing hand-written) and run with `check --confirm --confidence low`; each static finding's end
(confirmed / refuted / not tested, with its reason) is printed beside its judgement in
bench/recall_judgements.json, and the exit code is 1 if a finding judged false was confirmed.

Each profile runs in its benchmark's own interpreter: `--python NAME=PATH`, else the cached venv the
tests use for it (created on first use), else the profile is skipped with a line saying so. Prints,
per profile and per variant: tools, probes, clause rows by verdict, the untestable share (each
untestable row named with its reason), the violations found and the wall time; then one line per
profile side by side. With --sandbox-overhead, each profile's check is also run with predicates
evaluated in toollint's own process (no hard limits), alternating with sandboxed runs, and the line
says what the predicate sandbox (contracts/sandbox.py) costs: the wall-time ratio, the evaluations
and the round trips they took.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _corpora import INTERPRETERS, LINTED_TREES, Unavailable
from toollint.contracts import sandbox
from toollint.contracts.host.predicate import PredicateTypeError
from toollint.contracts.loader import load_contracts
from toollint.dynamic.confirm import ConfirmRun, run_confirm

from toollint.profiles import Profile, all_profiles, get_profile
from toollint.settings import Settings


@dataclass
class ProfileFigures:
    profile: str
    tools: int = 0
    probes: int = 0
    rows: int = 0
    untestable: int = 0
    violations: int = 0
    wall: float = 0.0
    skipped: str = ""


def _interpreters(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"bench/confirm.py: --python expects NAME=PATH, got {pair!r}")
        out[name] = path
    return out


def bench_profile(profile: Profile, python: str, jobs: int, repeat: int,
                  linted: list[str] | None = None) -> ProfileFigures:
    figures = ProfileFigures(profile.name)
    contracts, errors = load_contracts([profile.contracts_dir] if profile.contracts_dir else [])
    for e in errors:
        print(f"  contract error: {e}")
    settings = Settings(confirm={"jobs": jobs} if jobs else {}, benchmark=profile.name)
    times = []
    run = ConfirmRun()
    for _ in range(max(1, repeat)):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            run = run_confirm(
                contracts,
                settings,
                python=python,
                witness_dir=Path(tmp) / "w",
                profile=profile,
                linted=linted or (),
            )
            times.append(time.perf_counter() - start)
    wall = times[-1]
    print(
        f"  contracts: {len(contracts)} tools in "
        f"{len({r.hello.get('variant') for r in run.reports})} variants"
    )
    by_variant: dict[str, Counter[str]] = {}
    for r in run.reports:
        c = by_variant.setdefault(str(r.hello.get("variant")), Counter())
        c["tools"] += 1
        c["probes"] += len(r.runs)
        for row in r.clause_rows:
            c[row.verdict] += 1
    capabilities = {str(r.hello.get("variant")): r.hello.get("capabilities") or {} for r in run.reports}
    for variant, c in sorted(by_variant.items()):
        rows = c["CONFORMS"] + c["VIOLATES"] + c["UNTESTABLE"] + c["FLAKY"]
        timings = capabilities.get(variant, {}).get("timings_ms") or {}
        reset = (f"  reset {capabilities[variant].get('reset')} ("
                 + ", ".join(f"{k.removesuffix('_ms')} {v:.1f} ms" for k, v in sorted(timings.items())) + ")"
                 if timings else "")
        print(f"  {variant:22s} tools {c['tools']:3d}  probes {c['probes']:4d}  rows {rows:4d}  "
              f"conforms {c['CONFORMS']:4d}  violates {c['VIOLATES']:3d}  untestable {c['UNTESTABLE']:3d}  "
              f"flaky {c['FLAKY']:2d}{reset}")
    counts = run.counts()
    rows = sum(counts.values())
    share = counts["UNTESTABLE"] / rows if rows else 0.0
    print(f"  wall time: {wall:.1f} s (target < 60 s)" + (f"; best of {len(times)}: {min(times):.1f} s"
                                                           if len(times) > 1 else ""))
    probing = sum(r.elapsed_s for r in run.reports)
    print(f"  worker start-ups: {len(run.startup_s)} taking {sum(run.startup_s):.1f} s in all "
          f"(max {max(run.startup_s, default=0):.1f} s; variants run side by side)")
    print(f"  probes: {run.probes} ({run.probes / wall:.1f} probes/s over the wall time; "
          f"{run.probes / probing if probing else 0:.0f} probes/s in warm workers, {probing:.1f} s)")
    print(f"  clause rows: {rows}  CONFORMS {counts['CONFORMS']}  VIOLATES {counts['VIOLATES']}  "
          f"UNTESTABLE {counts['UNTESTABLE']}  FLAKY {counts['FLAKY']}")
    print(f"  UNTESTABLE share: {share:.1%} (target < 10%)")
    for r in run.reports:
        for row in r.clause_rows:
            if row.verdict == "UNTESTABLE":
                print(f"    untestable: {r.tool} {row.clause_id} ({row.reason})")
    print(f"  violations ({len(run.findings)}):")
    for f in run.findings:
        print(f"    {f.code} {f.tool} {f.properties['clause']}")
    figures.tools, figures.probes, figures.rows = len(run.reports), run.probes, rows
    figures.untestable, figures.violations, figures.wall = counts["UNTESTABLE"], len(run.findings), wall
    return figures


class InProcess:
    """What the checker did before the sandbox: every predicate in toollint's own process."""

    requests = evaluations = started = 0

    def evaluate_many(self, predicates, pre, post, args, result):  # type: ignore[no-untyped-def]
        out = []
        for p in predicates:
            try:
                out.append(p.evaluate(pre, post, args, result))
            except PredicateTypeError as exc:
                out.append(exc)
        self.requests += 1
        self.evaluations += len(out)
        return out

    def close(self) -> None:
        pass


def sandbox_overhead(
    profile: Profile, python: str, jobs: int, repeat: int, linted: list[str] | None = None
) -> None:
    """The same --confirm-all, sandboxed and in-process runs alternating, best of `repeat` each."""
    contracts, _ = load_contracts([profile.contracts_dir] if profile.contracts_dir else [])
    settings = Settings(confirm={"jobs": jobs} if jobs else {}, benchmark=profile.name)
    walls: dict[str, list[float]] = {"sandbox": [], "in-process": []}
    counts = (0, 0, 0)
    for _ in range(max(1, repeat)):
        for mode in ("sandbox", "in-process"):
            pool = sandbox.Sandbox() if mode == "sandbox" else InProcess()
            sandbox._DEFAULT[:] = [pool]  # type: ignore[list-item]
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                run_confirm(contracts, settings, python=python, witness_dir=Path(tmp) / "w", profile=profile,
                            linted=linted or ())
                walls[mode].append(time.perf_counter() - start)
            if mode == "sandbox":
                counts = (pool.requests, pool.evaluations, pool.started)
            pool.close()
    sandbox._DEFAULT[:] = []
    best = {mode: min(w) for mode, w in walls.items()}
    requests, evaluations, started = counts
    print(f"  sandbox overhead (best of {max(1, repeat)}): wall {best['sandbox']:.1f} s sandboxed vs "
          f"{best['in-process']:.1f} s in-process = {best['sandbox'] / best['in-process']:.2f}x; "
          f"{evaluations} evaluations in {requests} round trips, {started} sandbox worker(s) started")


# --- the corpus through the starter configuration alone (issue 23) -----------------------------------

# Code bases of shared/corpus no profile's help hosts: (folder, the tools' path in it, its venv: name
# and requirements, or None for toollint's own interpreter). tau-bench imports litellm at import time.
STARTER_CORPORA: dict[str, tuple[str, str, tuple[str, tuple[str, ...]] | None]] = {
    "taubench-retail": ("tau-bench", "tau_bench/envs/retail", ("venv-corpus-taubench", ("litellm==1.82.6",
                                                                                      "pydantic==2.14.4"))),
    "taubench-airline": ("tau-bench", "tau_bench/envs/airline", ("venv-corpus-taubench", ("litellm==1.82.6",
                                                                                        "pydantic==2.14.4"))),
    "bfcl": ("bfcl", ("berkeley-function-call-leaderboard/bfcl_eval/eval_checker/multi_turn_eval/"
                      "func_source_code"), None),
}


def starter_corpus(name: str, work: Path, judgements: dict[str, dict[str, str]]) -> Counter[str]:
    """`toollint confirm init PATH -o FILE`, then `toollint check --confirm --config FILE PATH`, as a user
    types them, nothing else written; every static finding's end beside its judgement. Returns the
    count of (judgement, end) pairs."""
    import contextlib
    import io
    import json

    from _corpora import ensure_venv
    from recall import CodeBase, detail_of, finding_key, shared_dir

    from toollint.cli import main as toollint

    folder, rel, venv = STARTER_CORPORA[name]
    root = shared_dir("corpus") / folder
    path = root / rel
    if not path.is_dir():
        print(f"  skipped: no {path}")
        return Counter()
    config = work / f"{name}.toml"
    init = ["confirm", "init", str(path), "-o", str(config)]
    if venv is not None:
        init += ["--python", str(ensure_venv(venv[0], list(venv[1])))]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = toollint(init)
    print(f"  $ toollint {' '.join(init)}\n    {err.getvalue().strip()}")
    if code != 0:
        return Counter()
    out = io.StringIO()
    err = io.StringIO()
    start = time.perf_counter()
    argv = ["check", "--confirm", "--confidence", "low", "--config", str(config), "--output-format", "json",
            "--witness-dir", str(work / name / "witnesses"), str(path)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        toollint(argv)
    wall = time.perf_counter() - start
    print(f"  $ toollint {' '.join(argv)}  ({wall:.1f} s)")
    for line in err.getvalue().splitlines():
        print(f"    {line}")
    base = CodeBase(f"corpus-{folder} @pinned", root, (root,))
    tally: Counter[str] = Counter()
    for f in json.loads(out.getvalue() or "[]"):
        if not f["code"].startswith("TL1"):
            continue
        props = f["properties"]
        key = finding_key(base, f["filename"], f.get("tool"), f["code"], detail_of(props))
        judged = judgements.get(key, {}).get("verdict", "unjudged")
        verdict = props.get("verdict", "not run")
        end = {"VIOLATES": "confirmed", "CONFORMS": "refuted"}.get(verdict, "not tested")
        why = "" if end != "not tested" else f": {verdict} {props.get('verdict_detail') or ''}"[:150]
        tally[f"{judged}/{end}"] += 1
        print(f"    {judged:>9}  {end}{why}  {key}")
    bad = tally["false/confirmed"]
    print(f"  ends: {dict(sorted(tally.items()))}; judged false and confirmed: {bad}")
    if not tally:  # nothing to confirm: show the starter's host is up, with what it serves
        from toollint.contracts.model import Contract, Source
        from toollint.dynamic.confirm import worker_spec
        from toollint.dynamic.protocol import Worker, WorkerError

        from toollint.config import load_settings

        settings = load_settings(config)
        spec = worker_spec(Contract("x:y", "", Source(""), (), config), settings.confirm, None,
                           settings.project_root)
        try:
            with Worker(spec) as worker:
                hello = worker.start()
                state = worker.request("pristine")["state"]
            files = {Path(str(t.get("file"))).parent.as_posix() for t in hello["tools"]}
            roots = sorted(state) if isinstance(state, dict) else "?"
            print(f"  no static finding to confirm; the starter's host serves {len(hello['tools'])} tools "
                  f"(from {', '.join(sorted(files))}), state {roots}, notes {hello.get('notes') or []}")
        except WorkerError as exc:
            print(f"  no static finding to confirm; the starter's host did not start: {exc}")
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", action="append", default=[], metavar="NAME",
                        help="a profile to run (repeatable; default: every profile with bundled contracts)")
    parser.add_argument("--python", action="append", default=[], metavar="NAME=PATH",
                        help="the interpreter of a profile's benchmark venv")
    parser.add_argument("--jobs", type=int, default=0, help="variants checked side by side (0: one per CPU)")
    parser.add_argument("--repeat", type=int, default=1, help="runs to time (the best is reported too)")
    parser.add_argument(
        "--sandbox-overhead",
        action="store_true",
        help="also time each profile with predicates evaluated in-process, and print the ratio",
    )
    parser.add_argument("--corpus", action="append", default=[], choices=sorted(STARTER_CORPORA),
                        help="a shared/corpus code base through `confirm init` and --confirm alone")
    args = parser.parse_args()
    if args.corpus:
        import json

        judgements = json.loads((Path(__file__).with_name("recall_judgements.json")).read_text())
        total: Counter[str] = Counter()
        with tempfile.TemporaryDirectory() as tmp:
            for name in args.corpus:
                print(f"=== {name}: starter configuration, no profile ===")
                total += starter_corpus(name, Path(tmp), judgements)
        print(f"\nall: {dict(sorted(total.items()))}; judged false and confirmed: {total['false/confirmed']}")
        return 1 if total["false/confirmed"] else 0
    given = _interpreters(args.python)
    profiles = [get_profile(n) for n in args.profile] or [
        p for p in all_profiles() if p.contracts_dir is not None and p.contracts_dir.is_dir()]
    results = []
    for profile in profiles:
        print(f"=== {profile.name} ===")
        python = given.get(profile.name)
        reason = f"no interpreter (pass --python {profile.name}=PATH)"
        linted: list[str] = []
        try:
            # the cached interpreter the profile's tests use, and what its run lints (bench/_corpora.py)
            if python is None and profile.name in INTERPRETERS:
                python = str(INTERPRETERS[profile.name]())
            linted = LINTED_TREES[profile.name]() if profile.name in LINTED_TREES else []
        except Unavailable as exc:  # e.g. no tau2-bench checkout, or no Python 3.12 for it
            python, reason = None, str(exc)
        if python is None:
            print(f"  skipped: {reason}")
            results.append(ProfileFigures(profile.name, skipped=reason))
            continue
        results.append(bench_profile(profile, python, args.jobs, args.repeat, linted))
        if args.sandbox_overhead:
            sandbox_overhead(profile, python, args.jobs, args.repeat, linted)
    print("\nprofile      tools  probes  clause rows  untestable  violations  wall s")
    for r in results:
        if r.skipped:
            print(f"{r.profile:12s} skipped: {r.skipped}")
            continue
        share = f"{r.untestable / r.rows:.1%}" if r.rows else "-"
        print(f"{r.profile:12s} {r.tools:5d}  {r.probes:6d}  {r.rows:11d}  {r.untestable:4d} {share:>6s}  "
              f"{r.violations:10d}  {r.wall:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
