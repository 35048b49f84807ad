"""The whole-process benchmarks time the command with its modules' bytecode written, as a
pip-installed user has it (benchmarks/bytecode.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from benchmarks.bytecode import PACKAGES, ROOT, compile_project


def test_every_project_module_gets_its_bytecode() -> None:
    assert compile_project()
    sources = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    assert len(sources) > 50
    missing = [s for s in sources if not Path(importlib.util.cache_from_source(str(s))).exists()]
    assert missing == []
