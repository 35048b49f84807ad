"""Where Joinery keeps files between runs on this machine.

``$XDG_CACHE_HOME/joinery``, or ``~/.cache/joinery`` without it: the worker's decoded catalog
files, the sandbox's built binaries (control plane, Temporal server), ``joinery dev``'s state
and the EC2 emulator's kept answers all live under it, so it is spelled once, here.

It sits in ``activities/``, the lowest floor allowed to touch the machine (``models/`` and
``scheduling/`` do no I/O), so that ``worker/`` and ``sandbox/`` both reach it downwards.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "joinery"
