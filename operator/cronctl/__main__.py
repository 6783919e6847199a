"""``python -m cronctl``: the same as the ``cronctl`` command."""

import sys

from .cli import main

sys.exit(main())
