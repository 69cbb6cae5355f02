"""The one analysis of state paths that every rule, the contracts and the tracer share.

For each function it summarises: the canonical state paths it reads and writes
(`bank_account.scheduled_transactions[*].amount`), where each parameter flows (state write, call
argument, log call, returned message, condition), its return statements with the conditions they sit
under, and which tools write state (directly or through helpers resolved by name, up to three hops).

Paths are canonical: the state root is replaced by its name in the environment (`self.` is dropped,
an AgentDojo `Depends("bank_account")` parameter becomes `bank_account`), element selection becomes
`[*]`, and locals bound to state (`t = next(t for t in account.items if ...)`) are followed.
Built on `ast` for speed; see `toollint.discovery` for which functions are tools.
"""
