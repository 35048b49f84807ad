"""The oracle's modules import each other as ``tests.oracle.*`` (so ``python -m
tests.oracle.exactness`` runs from the repository root); make that work under pytest too."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
