"""Command-line entry points of the dynamic checker.

- `toollint replay WITNESS` (`replay_main`): exit 1 still violates, 0 fixed, 2 could not replay
  faithfully, 3 flaky; one compact sentence on stdout, the old-versus-new comparison with `-v`. A
  grader audit's witness (its own kind) is re-graded by `toollint.validate.audit.replay_main`.
- `toollint check --confirm` (`check_step`, a `toollint.pipeline` step registered in toollint/cli.py,
  its options declared in toollint/pipeline/options.py): verdicts attached to the static findings'
  properties (each reporter shows them; messages and fingerprints stay as they were), TL2xx findings
  added, witnesses written.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint.errors import UsageError

if TYPE_CHECKING:
    from toollint.engine import RunResult
    from toollint.pipeline import StepContext


def _positive_seconds(text: str) -> float:
    """argparse type for --deadline: a deadline of 0 or -1 would time every request out at once."""
    from toollint.dynamic.protocol import check_seconds  # only `replay` has this option

    try:
        return check_seconds(float(text), "--deadline")
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}") from None


def _grader_witness(path: str) -> dict[str, Any] | None:
    """The witness when it is a grader audit's (its own kind: a wrong run and its gold run to re-grade)."""
    from toollint.dynamic.replay import read_witness_json

    from toollint.validate.graders import WITNESS_KIND

    data, why = read_witness_json(Path(path))  # capped, regular files only: a FIFO never blocks here
    # an unreadable file: the contract-witness path says what is wrong with it
    return data if why is None and isinstance(data, dict) and data.get("kind") == WITNESS_KIND else None


def replay_main(argv: Sequence[str] | None = None) -> int:
    from toollint.dynamic.protocol import DEFAULT_DEADLINE
    from toollint.dynamic.replay import NOT_FAITHFUL, replay  # not needed by a plain `check`

    from toollint.config import ConfigError, resolve_settings

    parser = argparse.ArgumentParser(prog="toollint replay", description="re-run a recorded witness in fresh "
                                     "workers: exit 1 still violates, 0 fixed, 2 not replayable, 3 flaky")
    parser.add_argument("witness", help="a witness JSON file written by `toollint check --confirm` "
                        "or `toollint audit-graders`")
    parser.add_argument(
        "--repeat", type=int, default=2, metavar="N", help="fresh runs to compare (default 2)"
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the benchmark's interpreter (default: the recorded one, "
        "when the project's configuration gives the same)",
    )
    parser.add_argument("--deadline", type=_positive_seconds, default=DEFAULT_DEADLINE, metavar="S",
                        help="per-request timeout in seconds")
    parser.add_argument("--config", metavar="FILE", help="the project's pyproject.toml (default: the working "
                        "directory's; one beside the witness is used only when named here)")
    parser.add_argument(
        "--trust-witness",
        action="store_true",
        help="run the interpreter, adapter and adapter "
        "options the witness names even when the project's configuration gives others",
    )
    parser.add_argument("--root", metavar="DIR", help="the benchmark checkout to replay on, for a witness "
                        "whose checkout moved (replaces the recorded one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the recorded and re-run outcomes")
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else NOT_FAITHFUL
    if (grader := _grader_witness(args.witness)) is not None:  # `toollint audit-graders` wrote it
        from toollint.validate.audit import replay_main as replay_grader

        return replay_grader(grader, args.python, args.root)
    try:
        # The user's project: --config, else the working directory's. A configuration found beside
        # the witness came with it (a downloaded folder may ship one naming a factory to import), so
        # it is only offered in the refusal, never used unasked.
        settings = resolve_settings(["."], config_file=args.config)
    except ConfigError as exc:
        print(f"NOT REPLAYED: {exc}")
        return NOT_FAITHFUL
    try:
        beside = None if args.config else resolve_settings([args.witness]).config_file
    except ConfigError:  # not the user's configuration: its problems are not theirs either
        beside = None
    offer = beside if beside is not None and beside != settings.config_file else None
    try:
        outcome = replay(args.witness, repeat=args.repeat, python=args.python, deadline=args.deadline,
                         settings=settings, trust_witness=args.trust_witness, offer=offer, root=args.root)
    except KeyboardInterrupt:  # the worker was closed on the way out; no traceback, no verdict
        print("NOT REPLAYED: interrupted")
        return NOT_FAITHFUL
    print(outcome.sentence)
    if args.verbose:
        for line in outcome.details:
            print(f"  {line}")
    return outcome.code


def _check_python(ctx: StepContext) -> str | None:
    """The benchmark's interpreter (`--python`, else `python` in [tool.toollint.confirm]); one that
    does not exist is a usage error (exit 2), not a run of UNTESTABLE tools."""
    python = ctx.options.confirm.python
    where = "--python"
    if python is None and ctx.settings.confirm.python is not None:
        python = ctx.settings.confirm.python
        where = f"'python' in {ctx.settings.config_file or 'the configuration'} [tool.toollint.confirm]"
    import shutil  # only --confirm looks for an interpreter: shutil imports lzma and bz2

    if python is not None and shutil.which(python) is None:  # a path, or a name looked up on PATH
        problem = "not an executable file" if os.path.exists(python) else "no such file"
        raise UsageError(f"{where}: {python}: {problem} (the benchmark's interpreter, for --confirm)")
    return ctx.options.confirm.python


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """Attach verdicts to the static findings and add the TL2xx findings, grouped by file."""
    options, console = ctx.options.confirm, ctx.console
    if not options.requested:
        if not options.bundled:
            # Said, not silently ignored: a maintainer who typed it expected no bundled verdicts.
            console.warn("--no-bundled-contracts has no effect without --confirm or --confirm-all")
        return result
    from toollint.dynamic.checker import UNTESTABLE
    from toollint.dynamic.confirm import ConfirmInterrupted, confirm, summary_lines

    from toollint.pipeline import add_findings

    python = _check_python(ctx)
    static = result.reported
    if not options.confirm_all and not any(f.code.startswith("TL1") for f in static):
        # --confirm probes the tools the static rules flagged: a selection without TL1 picks none.
        console.warn(
            "--confirm: no static (TL1xx) finding selects a tool to probe; select TL1 or use --confirm-all"
        )
    progress = console.progress("confirm")
    progress.status("loading contracts and choosing the tools to probe")
    try:
        found, run = confirm(static, ctx.settings, confirm_all=options.confirm_all, python=python,
                             witness_dir=options.witness_dir, progress=progress,
                             linted=[r.path for r in result.files], bundled=options.bundled)
    except ConfirmInterrupted as exc:  # said, then the run ends as any interrupted one does
        progress.done()
        console.error(exc.summary())
        raise
    progress.done()
    for note in run.notes:
        console.note(note)
    if run.reports:
        for line in summary_lines(run):
            console.note(line)
        if all(r.verdict == UNTESTABLE for r in run.reports):
            n = len(run.reports)
            ctx.untested = (
                f"--confirm probed {n} tool{'s' if n != 1 else ''} and every one ended UNTESTABLE "
                "(the reasons are above); nothing was confirmed or refuted"
            )
    else:
        console.note(
            "confirm: no contract covers the tools checked (bundled library and contract-dirs) and no "
            "oracle could be derived from their findings; `toollint contracts draft TOOLREF` starts one"
        )
    add_findings(result, found)  # each shown as the static findings of the same file are
    return result
