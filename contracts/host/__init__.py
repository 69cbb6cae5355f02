"""The contract language's benchmark-side half: `predicate.py` compiles and evaluates clause
predicates in toollint's process and is also loaded by file path inside a benchmark's interpreter (a
profile's host helpers score watched calls with it), so it imports only the standard library
(`tests/test_architecture.py`)."""
