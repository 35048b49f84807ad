"""Compiling the project's modules to bytecode before a whole-process benchmark times them.

``pip install joinery`` writes every module's bytecode at install time; the editable install
of a checkout (``make install``) leaves it to the first import, which writes nothing when
PYTHONDONTWRITEBYTECODE is set (as in CI and agents' shells). Each ``joinery plan`` there then
compiled ~50 of our modules from source before doing any work: ~0.08 s of a 2-3 s command
that no installed user pays. Benchmarks that time the command call ``compile_project()``
first, so they time what an installed user runs. Stale bytecode is never used: Python checks
each source file's modification time and size before loading its bytecode.
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("models", "scheduling", "activities", "workflows", "worker", "sandbox")


def compile_project() -> bool:
    """Write the bytecode of every module in the project's packages; True when all compiled."""
    return all(compileall.compile_dir(ROOT / p, quiet=2) for p in PACKAGES if (ROOT / p).is_dir())
