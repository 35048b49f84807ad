"""The ``joinery`` command (``worker.cli.command``) and one module per sub-command.

``main`` is the console script's entry point (``joinery = "worker.cli:main"``).
"""

from worker.cli.command import main

__all__ = ["main"]
