"""OpenAI Agents SDK: `@function_tool` functions."""

from toollint.analysis.patterns import Patterns, ToolDecorator

PATTERNS = Patterns(family="openai_agents", decorators=(ToolDecorator("function_tool"),))
