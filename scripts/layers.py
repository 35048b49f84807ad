"""Check that imports between Joinery's top-level packages point down only.

The floors, top to bottom (a package may import itself and any package below it):

    worker      the running worker, the ``joinery`` CLI and its input helpers
    sandbox     the local dev stack (``joinery dev``, the tests' clusters and EC2 emulator)
    workflows   durable Temporal workflows
    activities  the I/O: Kubernetes, EC2, the activities' shared toolkit
    scheduling  the pure solver and disruption engine
    models      the API objects and the contract

Inside ``worker/`` the same holds one level down: ``cli`` (the commands) may import
``running`` (the running worker) and ``plan_inputs`` (what ``joinery plan`` reads), which
import neither ``cli`` nor each other; all three may import ``worker.usage``.

``sandbox/`` sits between ``worker/`` and ``workflows/``: ``joinery dev`` (worker) starts it,
and it registers the workflows' search attributes and talks to Kubernetes and EC2 through
``activities/``. It starts the worker only as a separate process (``python -c``), which is
not an import. Since every allowed import points strictly down, no cycle between the packages
can form; any upward import is reported.

Every ``import`` and ``from ... import`` counts, wherever it stands (inside a function or an
``if TYPE_CHECKING:`` block too): a lazy import is still a dependency. Run from anywhere:

    python scripts/layers.py            # the repository this script is in
    python scripts/layers.py --root DIR # another tree with the same packages

It also keeps the cloud seam (issue 31): boto3, botocore and ``activities.ec2`` are imported
only by the EC2 provider (``activities/ec2/``) and the short list of AWS-only modules in
``EC2_ONLY`` below; everything else, ``benchmarks/`` and ``scripts/`` included, reaches a cloud
through ``activities/cloud/``.

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
# Floors inside a package, bottom first; the sub-packages of one floor may not import each
# other. A module of the package not named here (e.g. its __init__) is on no floor.
INNER: dict[str, tuple[tuple[str, ...], ...]] = {
    "worker": (("usage",), ("running", "plan_inputs"), ("cli",)),
}


# The cloud seam: what only the EC2 provider and the modules in EC2_ONLY may import.
EC2_MODULES = ("boto3", "botocore", "activities.ec2")
# Modules (and packages) allowed to import EC2_MODULES, each for a reason.
EC2_ONLY = (
    "activities.ec2",  # the EC2 provider itself
    "activities.cloud.registry",  # builds the provider ``--provider aws`` names
    "sandbox.ec2",  # the EC2 emulation (moto and its gaps)
    "sandbox.dev",  # ``joinery dev``'s emulated AWS account
    "sandbox.scenarios.common",  # scenario checks read the emulated account's instances
    "sandbox.scenarios.ec2_view",  # the scenarios' view of the emulated AWS account
    "sandbox.scenarios.efa",  # checks the EC2 launch templates EFA claims launched from
    "worker.cli.catalog_command",  # ``joinery catalog``: EC2's catalog and prices
    "worker.cli.doctor_command",  # ``joinery doctor``: AWS permissions and resources
    "worker.cli.explain_command",  # ``joinery explain``'s live EC2 catalog
    "benchmarks.catalog",  # the EC2 catalog's own benchmark
    "benchmarks.karpenter_kwok.instance_types",  # Karpenter's kwok types from EC2's catalog
)
# Trees the seam check reads besides the floors.
SEAM_EXTRA = ("benchmarks", "scripts")


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


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
            source = node.module or ""
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            if "." in source:
                yield node.lineno, source
            else:  # ``from worker import cli``: the names are the modules imported
                for alias in node.names:
                    yield node.lineno, f"{source}.{alias.name}"


def _inner_offence(top: str, module: str, target: str) -> str | None:
    """Why an import inside ``top`` breaks its inner floors (None when it does not)."""
    floors = INNER.get(top)
    here, there = module.split("."), target.split(".")
    if floors is None or len(here) < 2 or len(there) < 2 or here[1] == there[1]:
        return None
    rank = {name: i for i, names in enumerate(floors) for name in names}
    if here[1] not in rank or there[1] not in rank:
        return None
    if rank[there[1]] > rank[here[1]]:
        return f"{top}.{there[1]} is above {top}.{here[1]}"
    if rank[there[1]] == rank[here[1]]:
        return f"{top}.{there[1]} and {top}.{here[1]} are side by side"
    return None


def offences(root: Path) -> list[str]:
    """One line per import that points up a floor (or across one), in file order."""
    found: list[str] = []
    for top in FLOORS:
        for path in sorted((root / top).rglob("*.py")):
            module = _module_name(root, path)
            where = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, target in _imported(tree, module, path.name == "__init__.py"):
                head = target.split(".")[0]
                if head in RANK and RANK[head] > RANK[top]:
                    found.append(
                        f"{where}:{line}: {top} imports {target} "
                        f"({head} is above {top}: {' -> '.join(reversed(FLOORS))})"
                    )
                elif head == top and (why := _inner_offence(top, module, target)):
                    found.append(f"{where}:{line}: {module} imports {target} ({why})")
    return found


def seam_offences(root: Path) -> list[str]:
    """One line per import of boto3, botocore or the EC2 provider outside ``EC2_ONLY``."""
    found: list[str] = []
    for top in (*FLOORS, *SEAM_EXTRA):
        for path in sorted((root / top).rglob("*.py")):
            module = _module_name(root, path)
            if _within(module, EC2_ONLY):
                continue
            where = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, target in _imported(tree, module, path.name == "__init__.py"):
                if _within(target, EC2_MODULES):
                    found.append(
                        f"{where}:{line}: {module} imports {target} (EC2 is reached through "
                        "activities/cloud/; only activities/ec2/ and EC2_ONLY may import it)"
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
    lines = offences(args.root) + seam_offences(args.root)
    for line in lines:
        print(line)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
