"""toollint: find where an AI-agent benchmark's tools do not do what they say."""

__version__ = "0.1.0"
