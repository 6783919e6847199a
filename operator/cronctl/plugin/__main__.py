"""``python -m cronctl.plugin``: the same as the ``kubectl-cronctl`` console script."""

import sys

from .cli import main

sys.exit(main())
