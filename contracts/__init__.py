"""Executable tool contracts: one YAML file per tool, with clauses machine-checked against the tool's
declared surface (docs/contracts.md).

- `toollint.contracts.model`: `Contract`, `Clause`, `Provenance`, `OnViolation`, `Source`
- `toollint.contracts.host.predicate`: `compile_predicate`, `Predicate`, `ForbiddenPredicate`,
  `PredicateTypeError`
- `toollint.contracts.loader`: `load_contract`, `load_contracts`, `find_contract`, `bundled_library_dirs`,
  `ContractError`; the published JSON Schema is `contract.schema.json` beside it
- `toollint.contracts.validator`: `validate` (the TL3xx checks)
- `toollint.contracts.draft`: `draft_contract`
- `toollint.contracts.cli`: `toollint contracts check|list|draft`
"""
