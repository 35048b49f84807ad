"""``python -m worker.cli``: the ``joinery`` command."""

import sys

from worker.cli.command import main

sys.exit(main())
