"""A small bundled benchmark with one seeded defect per rule, and near misses around them.

`toollint demo` lints this package; see `airline_tools.py`.
"""
