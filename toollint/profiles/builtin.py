"""The built-in benchmark profiles, as data: one folder each (`toollint/profiles/<name>/`, whose
`__init__.py` defines `PROFILE` and whose optional `patterns.py` defines `PATTERNS`), in registry
order (ties in detection go to the earlier one). Adding a benchmark is its folder plus its name here.

Pure data, no imports: the analysis reads it by path (`toollint.analysis.families`) without running the
profile registry, the registry (`toollint.profiles`) by import.
"""

BENCHMARKS: tuple[str, ...] = ("agentdojo", "tau2", "medagentbench", "toolsandbox", "taubench")
