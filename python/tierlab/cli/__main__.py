"""``python -m tierlab.cli``: the ``tierlab`` command."""

import sys

from tierlab.cli import main

sys.exit(main())
