"""Command-line entry points of the dynamic checker.

- `toollint replay WITNESS` (`replay_main`): exit 1 still violates, 0 fixed, 2 could not replay
  faithfully, 3 flaky; one compact sentence on stdout, the old-versus-new comparison with `-v`.
- `toollint check --confirm` (`add_arguments` + `check_step`, registered in toollint/cli.py):
  verdicts attached to the static findings, TL2xx findings added, witnesses written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from toollint.dynamic.protocol import DEFAULT_DEADLINE, check_seconds

if TYPE_CHECKING:
    from toollint.engine import RunResult
    from toollint.settings import Settings


def _positive_seconds(text: str) -> float:
    """argparse type for --deadline: a deadline of 0 or -1 would time every request out at once."""
    try:
        return check_seconds(float(text), "--deadline")
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}") from None


def replay_main(argv: Sequence[str] | None = None) -> int:
    from toollint.dynamic.replay import NOT_FAITHFUL, replay  # not needed by a plain `check`

    from toollint.config import ConfigError, resolve_settings

    parser = argparse.ArgumentParser(prog="toollint replay", description="re-run a recorded witness in fresh "
                                     "workers: exit 1 still violates, 0 fixed, 2 not replayable, 3 flaky")
    parser.add_argument("witness", help="a witness JSON file written by `toollint check --confirm`")
    parser.add_argument("--repeat", type=int, default=2, metavar="N", help="fresh runs to compare (default 2)")
    parser.add_argument("--python", metavar="PATH", help="the benchmark's interpreter (default: the recorded one, "
                        "when the project's configuration gives the same)")
    parser.add_argument("--deadline", type=_positive_seconds, default=DEFAULT_DEADLINE, metavar="S",
                        help="per-request timeout in seconds")
    parser.add_argument("--config", metavar="FILE", help="the project's pyproject.toml (default: found from the "
                        "witness's folder, then the working directory)")
    parser.add_argument("--trust-witness", action="store_true", help="run the interpreter, adapter and adapter "
                        "options the witness names even when the project's configuration gives others")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the recorded and re-run outcomes")
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else NOT_FAITHFUL
    try:
        settings = resolve_settings([args.witness], config_file=args.config)
    except ConfigError as exc:
        print(f"NOT REPLAYED: {exc}")
        return NOT_FAITHFUL
    outcome = replay(args.witness, repeat=args.repeat, python=args.python, deadline=args.deadline,
                     settings=settings, trust_witness=args.trust_witness)
    print(outcome.sentence)
    if args.verbose:
        for line in outcome.details:
            print(f"  {line}")
    return outcome.code


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("dynamic confirmation")
    group.add_argument("--confirm", action="store_true",
                       help="probe flagged tools that have a contract and attach verdicts (needs the benchmark)")
    group.add_argument("--confirm-all", action="store_true", help="probe every contracted tool, flagged or not")
    group.add_argument("--python", metavar="PATH", help="the benchmark's interpreter for --confirm")
    group.add_argument("--witness-dir", metavar="DIR", help="where witnesses go (default .toollint/witnesses)")


class _Progress:
    """A one-line progress bar on a TTY; silent otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.count = 0

    def __call__(self, tool: str) -> None:
        self.count += 1
        self.stream.write(f"\r\033[Kconfirm [{self.count}] {tool}")
        self.stream.flush()

    def done(self) -> None:
        if self.count:
            self.stream.write("\r\033[K")


def check_step(args: argparse.Namespace, settings: Settings, result: RunResult) -> RunResult:
    """Attach verdicts to the static findings and add the TL2xx findings, grouped by file."""
    if not (getattr(args, "confirm", False) or getattr(args, "confirm_all", False)):
        return result
    from toollint.dynamic.confirm import confirm, summary_lines
    from toollint.dynamic.witness import display_path

    from toollint.engine import FileResult

    quiet = bool(getattr(args, "quiet", False))
    confirm_all = bool(getattr(args, "confirm_all", False))
    progress = _Progress(sys.stderr) if sys.stderr.isatty() and not quiet else None
    static = result.reported
    if not confirm_all and not any(f.code.startswith("TL1") for f in static) and not quiet:
        # --confirm probes the tools the static rules flagged: a selection without TL1 picks none.
        sys.stderr.write("toollint: warning: --confirm: no static (TL1xx) finding selects a tool to probe; "
                         "select TL1 or use --confirm-all\n")
    found, run = confirm(static, settings, confirm_all=confirm_all, python=getattr(args, "python", None),
                         witness_dir=Path(args.witness_dir) if getattr(args, "witness_dir", None) else None,
                         progress=progress, linted=[r.path for r in result.files])
    if progress is not None:
        progress.done()
    if not quiet and run.reports:
        sys.stderr.writelines(line + "\n" for line in summary_lines(run))
    elif not quiet:
        sys.stderr.write("confirm: no contract covers the tools checked (bundled library and contract-dirs); "
                         "`toollint contracts draft TOOLREF` starts one\n")
    for f in static:
        verdict = f.properties.get("verdict")
        if verdict:
            witness = f.properties.get("witness")
            extra = display_path(Path(witness)) if witness else f.properties.get("verdict_detail")
            f.message += f" [{verdict}{': ' + str(extra) if extra else ''}]"
    by_path = {r.path: r for r in result.files}
    resolved = {str(Path(r.path).resolve()): r for r in result.files}
    for f in found:
        target = by_path.get(f.path) or resolved.get(str(Path(f.path).resolve()))
        if target is not None:
            f.path = target.path  # shown as the static findings of the same file are
        else:
            target = by_path[f.path] = FileResult(f.path)
            result.files.append(target)
        target.findings.append(f)
    return result
