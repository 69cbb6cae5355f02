"""One module's analysis: its tools, their summaries, and the facts every front end reports.

`analyze_module` is what `ModuleContext.analysis` computes once per file and every rule reads. A
tool too complex to analyse (an expression nested deeper than the summariser follows) is left out of
`summaries` and listed in `too_complex`; the engine reports it as TL905 instead of a crash.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from toollint.analysis.discovery import Rejection, ToolInfo, discover, module_state_names
from toollint.analysis.effects import declaration, deferred_action, mode_prompts
from toollint.analysis.families import all_patterns
from toollint.analysis.paths import writer_reason
from toollint.analysis.resolver import ModuleSource
from toollint.analysis.summary import FunctionIndex, FunctionSummary, TooComplex, summarize
from toollint.facts import ToolFact  # plain data the engine pickles and caches without this package
from toollint.settings import Settings

if TYPE_CHECKING:
    from toollint.analysis.graders import GraderFact, GraderInfo


@dataclass
class ModuleAnalysis:
    tools: list[ToolInfo]
    summaries: dict[str, FunctionSummary]  # by tool qualname
    tree: ast.Module
    module: ModuleSource | None = None
    accessors: frozenset[str] = frozenset()
    rejected: list[Rejection] = field(default_factory=list)
    too_complex: list[tuple[ToolInfo, str]] = field(default_factory=list)
    settings: Settings | None = None
    module_name: str = ""
    source: str | None = None  # the module's text, for the cheap text tests discovery makes first
    _index: FunctionIndex | None = None
    _graders: tuple[list[GraderInfo], list[tuple[GraderInfo, str]]] | None = None
    _told: dict[str, tuple[list[str], tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    @property
    def index(self) -> FunctionIndex:
        """The module's function index (built on first use: a module without tools never needs it)."""
        if self._index is None:
            self._index = FunctionIndex(self.tree, self.module, self.accessors)
            self._index.module_state = {name: name for name in module_state_names(self.tree.body)}
        return self._index

    @property
    def graders(self) -> list[GraderInfo]:
        """The module's graders with their flows (computed on first use: only the TL4 rules ask)."""
        return self._grader_analysis()[0]

    @property
    def complex_graders(self) -> list[tuple[GraderInfo, str]]:
        return self._grader_analysis()[1]

    def _grader_analysis(self) -> tuple[list[GraderInfo], list[tuple[GraderInfo, str]]]:
        if self._graders is None:
            # imported here: a run whose rules never ask for graders never imports it
            from toollint.analysis.graders import discover_graders, evaluate_graders

            found = discover_graders(self.tree, self.settings, self.module_name, self.source)
            # the function index is built only for a module that has a grader
            self._graders = evaluate_graders(found, self.index) if found else ([], [])
        return self._graders

    def grader_facts(self) -> list[GraderFact] | None:
        """Each grader as a run reports it; None when no rule asked for the graders."""
        if self._graders is None:
            return None
        from toollint.analysis.graders import grader_fact

        return [grader_fact(g) for g in self.graders]

    def summary(self, tool: ToolInfo) -> FunctionSummary:
        return self.summaries[tool.qualname]

    def declaration(self, tool: ToolInfo) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
        """What the model is told the tool is (its class's `name`/`description`, or its own name and doc),
        its class's docstring, and the prompts its modes are declared by."""
        cls = self.index.classes.get(tool.class_name) if tool.class_name else None
        if cls is None:
            return declaration(tool.node, None), (), ()
        # the class's alone: read once for all its tools (a toolkit of fifty methods was read fifty times)
        told = self._told.get(cls.name)
        if told is None:
            path = self.module.path if self.module is not None else ""
            told = self._told[cls.name] = (declaration(tool.node, cls), (ast.get_docstring(cls) or "",),
                                           mode_prompts(cls, path))
        return list(told[0]), told[1], told[2]

    def facts(self) -> list[ToolFact]:
        out = []
        for tool in self.tools:
            summary = self.summaries.get(tool.qualname)
            # the declaration is read only for a tool the state analysis sees write nothing
            told = self.declaration(tool) if summary is not None and not summary.writes else ([], (), ())
            writes, why = writer_reason(tool, summary, *told)
            if not writes and tool.class_name and tool.qualname.endswith("]"):
                later = deferred_action(tool.node, tool.qualname, tool.class_name,
                                        self.index.methods.get(tool.class_name, {}))
                writes, why = (True, f"writes outside the state it sees: {later.describe()}") if later else (
                    writes, why)
            out.append(ToolFact(tool.qualname, tool.node.lineno, tool.profile, writes, why, tool.found_by))
        for tool, reason in self.too_complex:
            out.append(
                ToolFact(
                    tool.qualname,
                    tool.node.lineno,
                    tool.profile,
                    False,
                    f"not analysed: {reason}",
                    tool.found_by,
                )
            )
        return sorted(out, key=lambda f: f.line)


def analyze_module(tree: ast.Module, settings: Settings | None = None, module_name: str = "",
                   path: str = "", source: str | None = None) -> ModuleAnalysis:
    """Discover the tools of a module and summarise each. `path` (the file on disk) lets helpers and
    base classes imported from other modules of the linted tree be followed."""
    settings = settings or Settings()
    module = ModuleSource(path, module_name, tree) if path else None
    accessors = all_patterns().state_accessors | frozenset(settings.state_roots)
    found = discover(tree, settings, module_name, module, source)
    analysis = ModuleAnalysis([], {}, tree, module, accessors, found.rejected, settings=settings,
                              module_name=module_name, source=source)
    for tool in found.tools:
        try:
            analysis.summaries[tool.qualname] = summarize(tool.node, tool.roots, analysis.index,
                                                          cls=tool.class_name, types=tool.types)
        except (TooComplex, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, TooComplex) else "nested too deeply for the analysis"
            analysis.too_complex.append((tool, reason))
            continue
        analysis.tools.append(tool)
    return analysis
