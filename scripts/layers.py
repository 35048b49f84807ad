"""Check that imports between Joinery's top-level packages point down only.

The floors, top to bottom (a package may import itself and any package below it):

    worker      the running worker, the ``joinery`` CLI and its input helpers
    sandbox     the local dev stack (``joinery dev``, the tests' clusters and EC2 emulator)
    workflows   durable Temporal workflows
    activities  the I/O: Kubernetes, EC2, the activities' shared toolkit
    scheduling  the pure solver and disruption engine
    models      the API objects and the contract

``sandbox/`` sits between ``worker/`` and ``workflows/``: ``joinery dev`` (worker) starts it,
and it registers the workflows' search attributes and talks to Kubernetes and EC2 through
``activities/``. It starts the worker only as a separate process (``python -c``), which is
not an import. Since every allowed import points strictly down, no cycle between the packages
can form; any upward import is reported.

Every ``import`` and ``from ... import`` counts, wherever it stands (inside a function or an
``if TYPE_CHECKING:`` block too): a lazy import is still a dependency. Run from anywhere:

    python scripts/layers.py            # the repository this script is in
    python scripts/layers.py --root DIR # another tree with the same packages

Exit 0 and no output when clean; exit 1 and one line per offending import otherwise.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

# Bottom first: a package may import those at its own index or lower.
FLOORS = ("models", "scheduling", "activities", "workflows", "sandbox", "worker")
RANK = {name: i for i, name in enumerate(FLOORS)}


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the module, relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                yield node.lineno, node.module or ""
                continue
            base = package.split(".")
            if node.level > 1:
                base = base[: len(base) - (node.level - 1)]
            yield node.lineno, ".".join([*base, *([node.module] if node.module else [])])


def offences(root: Path) -> list[str]:
    """One line per import that points up a floor, in file order."""
    found: list[str] = []
    for top in FLOORS:
        for path in sorted((root / top).rglob("*.py")):
            module = _module_name(root, path)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, target in _imported(tree, module, path.name == "__init__.py"):
                head = target.split(".")[0]
                if head in RANK and RANK[head] > RANK[top]:
                    where = path.relative_to(root).as_posix()
                    found.append(
                        f"{where}:{line}: {top} imports {target} "
                        f"({head} is above {top}: {' -> '.join(reversed(FLOORS))})"
                    )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the tree holding the packages (default: this repository)",
    )
    args = parser.parse_args(argv)
    lines = offences(args.root)
    for line in lines:
        print(line)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
