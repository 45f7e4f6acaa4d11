"""``python -m edgereports.cli``: the ``edgereports`` command."""

import sys

from .main import main

sys.exit(main())
