"""Output formats. `text` (concise, full, statistics) and `json_` live here; `sarif` is separate.

Reporters take findings that are already filtered: suppressed ones are dropped by the caller.
"""
