"""`python -m toollint.validate`: the mutation arm and negative controls (see docs/validation.md)."""

import sys

from toollint.validate import main

sys.exit(main(prog="python -m toollint.validate"))
