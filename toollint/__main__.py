"""`python -m toollint` is the `toollint` command."""

import gc

gc.set_threshold(100_000, 50, 100)  # toollint.cli.RUN_GC_THRESHOLDS, before the imports it is for

from toollint.cli import run  # after the thresholds

run()
