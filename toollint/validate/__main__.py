"""`python -m toollint.validate`: the same as `toollint validate`."""

import sys

from toollint.validate import main

sys.exit(main())
