"""Bad input on the command line: one line on stderr and exit code 2, never a traceback.

Raised by the CLI commands and by what they call (the ``joinery plan`` input readers, the
Temporal connection settings), and turned into that line by ``worker.cli.command.main``.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input: printed as one line on stderr, exit code 2."""


# Every character str.splitlines() breaks on, written as an escape so a message stays one line
# whatever the input's names and values contain.
_LINE_BREAKS = {c: repr(chr(c))[1:-1] for c in (10, 11, 12, 13, 28, 29, 30, 133, 0x2028, 0x2029)}


def one_line(text: str) -> str:
    """``text`` with its line breaks escaped (messages quote user input)."""
    return text.translate(_LINE_BREAKS)
