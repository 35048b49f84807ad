"""Leaving the process once a command is done, without the Temporal SDK's exit crash.

The SDK's Rust core keeps threads that outlive the client; an interpreter finalizing around
them can abort with ``Fatal Python error: PyGILState_Release`` (exit 134) after the command
already succeeded (temporalio/sdk-python#300): a Ctrl-C'd worker, or a ``joinery status``,
then looks as if it crashed. So once the answer is out, the exit handlers run (log and trace
flushes), the streams are flushed, and the process ends without the interpreter's teardown.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """Exit with ``code``; skips the interpreter's teardown only when the SDK is loaded."""
    if "temporalio" not in sys.modules:
        sys.exit(code)
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing left to say
            stream.flush()
    os._exit(code)
