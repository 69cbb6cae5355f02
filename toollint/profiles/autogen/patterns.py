"""AutoGen: functions registered by `FunctionTool(fn, description=...)`."""

from toollint.analysis.patterns import Patterns, RegistrationCall

PATTERNS = Patterns(family="autogen", registrations=(RegistrationCall("FunctionTool"),))
