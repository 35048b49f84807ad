"""The oracle shares no code with the product: no module here imports ``scheduling``,
``models``, ``activities``, ``workflows`` or ``worker``, except ``joinery_bridge`` (the one
module that runs Joinery for the property tests and hands the oracle its JSON output)."""

from __future__ import annotations

import ast
from pathlib import Path

PRODUCT = ("scheduling", "models", "activities", "workflows", "worker")
BRIDGE = "joinery_bridge.py"
# Modules that run Joinery through the bridge (and judge its answers with the oracle).
RUNNERS = ("exactness.py", "minimize.py")
HERE = Path(__file__).resolve().parent


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_oracle_imports_nothing_from_the_product() -> None:
    offenders = []
    checked = 0
    for path in sorted(HERE.rglob("*.py")):
        if path.name == BRIDGE:
            continue
        checked += 1
        for name in _imports(path):
            if name.split(".")[0] in PRODUCT:
                offenders.append(f"{path.relative_to(HERE)} imports {name}")
            bridged = name.startswith("tests.oracle.joinery_bridge")
            if bridged and not path.name.startswith("test_") and path.name not in RUNNERS:
                offenders.append(f"{path.relative_to(HERE)} imports the bridge")
    assert checked > 5
    assert offenders == []


def test_product_code_does_not_import_the_oracle() -> None:
    root = HERE.parent.parent
    offenders = []
    for pkg in PRODUCT:
        for path in sorted((root / pkg).rglob("*.py")):
            if any(n.startswith("tests") for n in _imports(path)):
                offenders.append(str(path.relative_to(root)))
    assert offenders == []
