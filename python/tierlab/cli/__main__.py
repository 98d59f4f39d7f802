"""``python -m tierlab.cli``: the ``tierlab`` command."""

import sys

from tierlab.cli import main

# Guarded: a sweep's local-cluster workers start by importing the main
# module again (as ``__mp_main__``), and must not run the command twice.
if __name__ == "__main__":
    sys.exit(main())
