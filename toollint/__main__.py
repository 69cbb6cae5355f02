"""`python -m toollint` is the `toollint` command."""

import sys

from toollint.cli import main

sys.exit(main())
