"""The ``joinery`` command: one sub-command per module, each registering its own arguments."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from worker.usage import UsageError, one_line

# Sub-command modules; each exposes ``register(subparsers)`` and sets ``func`` on its parser.
COMMAND_MODULES = (
    "worker.cli.plan_command",
    "worker.cli.catalog_command",
    "worker.cli.worker_command",
    "worker.cli.control_commands",
    "worker.cli.dev_command",
    "worker.cli.doctor_command",
    "worker.cli.explain_command",
    "worker.cli.convert_command",
)

# Which module registers each sub-command, so a run imports only the module it uses (the
# worker's Temporal and Kubernetes clients cost seconds to import; `joinery plan` needs none).
COMMANDS = {
    "plan": "worker.cli.plan_command",
    "catalog": "worker.cli.catalog_command",
    "worker": "worker.cli.worker_command",
    "pause": "worker.cli.control_commands",
    "resume": "worker.cli.control_commands",
    "disrupt": "worker.cli.control_commands",
    "status": "worker.cli.control_commands",
    "dev": "worker.cli.dev_command",
    "explain": "worker.cli.explain_command",
    "convert": "worker.cli.convert_command",
}


# The commands an operator runs against a live cluster: after `joinery dev` they work with no
# flags (sandbox/dev_env.py).
OPERATOR_COMMANDS = frozenset({"status", "explain", "pause", "resume", "disrupt"})


def _command_in(argv: Sequence[str]) -> str | None:
    """The sub-command named on the command line (the first word; the root takes no options)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
        if arg in ("-h", "--help"):
            return None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv`` naming a sub-command, only that sub-command's module is loaded
    (the full parser, for help and unknown commands, otherwise)."""
    parser = argparse.ArgumentParser(
        prog="joinery", description="Karpenter-compatible node autoscaling on Temporal."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    command = _command_in(argv) if argv is not None else None
    modules = (COMMANDS[command],) if command is not None else COMMAND_MODULES
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; given no ``argv`` (the console script), also end the process
    (``worker.cli.exiting``)."""
    if argv is not None:
        return _main(argv, own_process=False)
    from worker.cli.exiting import leave

    leave(_main(sys.argv[1:], own_process=True))


def _main(argv: Sequence[str], *, own_process: bool) -> int:
    if own_process and _command_in(argv) in OPERATOR_COMMANDS:
        # what `joinery dev` left for this terminal (sandbox/dev_env.py), below the
        # environment and the flags
        from sandbox import dev_env

        dev_env.export_defaults(os.environ)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.own_process = own_process
    try:
        code: int = args.func(args)
    except UsageError as exc:
        print(one_line(f"joinery {args.command}: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`joinery plan | head`): nothing left to say, and no traceback.
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
