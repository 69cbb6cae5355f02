"""What the grader rules TL402-TL407 share: their findings are the observations of the grader walk
(`toollint.analysis.grading`) that carry their code, reported where they are when that is this file,
else at the grader's call that leads there (linting the helper's own module finds no grader to ask),
with the helper's line as the related location."""

from __future__ import annotations

import os
from collections.abc import Iterator

from toollint.context import ModuleContext
from toollint.model import Finding, RelatedLocation


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
            node, related, where = obs.node, [], ""
            if obs.file and here and os.path.realpath(obs.file) != here:
                if obs.via is None:
                    continue
                line = int(getattr(obs.node, "lineno", 0))
                node, where = obs.via, f", at {os.path.basename(obs.file)}:{line}"
                related = [RelatedLocation(obs.file, line, int(getattr(obs.node, "col_offset", 0)) + 1,
                                           f"{code}: {obs.message}")]
            key = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            if key in seen:
                continue
            seen.add(key)
            yield ctx.finding(code, node, f"`{grader.name}`: {obs.message}{where}", tool=grader.qualname,
                              related=related, grader=grader.qualname, detail=obs.detail)
