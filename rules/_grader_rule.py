"""What the grader rules TL402-TL405 share: their findings are the observations of the grader walk
(`toollint.analysis.grading`) that carry their code, reported where they are when that is this file."""

from __future__ import annotations

import os
from collections.abc import Iterator

from toollint.context import ModuleContext
from toollint.model import Finding


def observations(ctx: ModuleContext, code: str) -> Iterator[Finding]:
    graders = ctx.analysis.graders
    if not graders:
        return
    here = os.path.realpath(ctx.disk_path) if ctx.disk_path else ""
    seen: set[tuple[int, int]] = set()
    for grader in graders:
        for obs in grader.flow.observations:
            if obs.code != code:
                continue
            if obs.file and here and os.path.realpath(obs.file) != here:
                continue  # in a helper of another module: reported when that module is linted as a grader's
            key = (getattr(obs.node, "lineno", 0), getattr(obs.node, "col_offset", 0))
            if key in seen:
                continue
            seen.add(key)
            yield ctx.finding(code, obs.node, f"`{grader.name}`: {obs.message}", tool=grader.qualname,
                              grader=grader.qualname, detail=obs.detail)
