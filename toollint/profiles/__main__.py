"""`python -m toollint.profiles [PATH...] [--benchmark NAME]`: the registered benchmark profiles, and
which one a dynamic run over PATH would pick and why.

    $ python -m toollint.profiles .../agentdojo/default_suites/v1/tools
    agentdojo  AgentDojo task suites (banking, slack, travel, workspace)  (adapter, 69 contracts, parts: ...)
    tau2       tau2-bench domains (airline, retail, telecom, ...)  (adapter, N contracts, ...)
    picked: agentdojo (11 files import agentdojo or sit in its layout; tau2: 0)

Exit 0; 2 for an unknown `--benchmark` (one line, with a "did you mean").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from toollint.profiles import ProfileError, all_profiles, detection_scores, registry_problems, select_profile


def describe(profile_name: str) -> str:
    profile = next(p for p in all_profiles() if p.name == profile_name)
    contracts = len(list(profile.contracts_dir.rglob("*.yaml"))) if profile.contracts_dir and \
        profile.contracts_dir.is_dir() else 0
    adapter = "adapter" if profile.adapter_file is not None else "no adapter yet"
    parts = f", parts: {', '.join(sorted(profile.part_names()))}" if profile.part_names() else ""
    return f"{profile.name:10s} {profile.description}  ({adapter}, {contracts} contracts{parts})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toollint.profiles", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="the tree a run would lint")
    parser.add_argument("--benchmark", metavar="NAME", help="as `benchmark = NAME` in [tool.toollint]")
    args = parser.parse_args(argv)
    for profile in all_profiles():
        print(describe(profile.name))
    for problem in registry_problems():
        print(f"skipped: {problem}")
    if not args.paths and not args.benchmark:
        return 0
    try:
        picked = select_profile(args.benchmark, args.paths, where="--benchmark" if args.benchmark else "")
    except ProfileError as exc:
        print(f"python -m toollint.profiles: error: {exc}", file=sys.stderr)
        return 2
    if args.benchmark:
        print(f"picked: {args.benchmark} (named by --benchmark)")
        return 0
    scores = detection_scores(args.paths)
    if picked is None:
        print("picked: none (no file imports a profile's package or sits in its layout)")
        return 0
    others = "; ".join(f"{name}: {n}" for name, n in scores.items() if name != picked.name and n)
    print(
        f"picked: {picked.name} ({scores[picked.name]} files import "
        f"{' or '.join(picked.import_markers) or '-'} "
        f"or sit in its layout{'; ' + others if others else ''})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
