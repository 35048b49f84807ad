"""The ``joinery`` command: one sub-command per module, each registering its own arguments."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Sub-command modules; each exposes ``register(subparsers)`` and sets ``func`` on its parser.
COMMAND_MODULES = (
    "worker.plan_command",
    "worker.catalog_command",
    "worker.worker_command",
    "worker.control_commands",
    "worker.dev_command",
    "worker.doctor_command",
)


class UsageError(Exception):
    """Bad input: printed as one line on stderr, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="joinery", description="Karpenter-compatible node autoscaling on Temporal."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except UsageError as exc:
        print(f"joinery {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
