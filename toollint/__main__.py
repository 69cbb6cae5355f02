"""`python -m toollint` is the `toollint` command."""

import gc
import sys

gc.set_threshold(100_000, 50, 100)  # toollint.cli.RUN_GC_THRESHOLDS, before the imports it is for

from toollint.cli import main  # after the thresholds

sys.exit(main())
