"""MedAgentBench (verified on stanfordmlgroup/MedAgentBench at 99260117, with the fork-side
`refsol.py`): an AgentBench task whose agent talks to a FHIR server through `GET`/`POST` text
requests. Static only: discovery patterns (`patterns.py`); there is no host adapter (the benchmark
needs a live FHIR server) and no bundled contracts."""

from __future__ import annotations

from toollint.profiles.api import Profile

PROFILE = Profile(
    name="medagentbench",
    description="MedAgentBench (FHIR task loop, reference-solution graders)",
    path_markers=("*/tasks/medagentbench/*",),
)
