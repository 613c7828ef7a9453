"""``python -m vspec``: the ``vspec`` command."""

import sys

from vspec.cli import main

sys.exit(main())
