"""``joinery dev``: the whole system on this machine, and scripted scenarios on top of it.

Starts Temporal (with UI), a real Kubernetes control plane with simulated nodes, the EC2
emulator and a worker (see ``sandbox/dev.py``), prints where everything is, and runs until
Ctrl-C. ``--scenario NAME`` runs a scenario once the stack is up; its last stdout line is a
one-line JSON summary, and with ``--exit`` the exit code says whether the scenario held.

Heavy imports happen inside ``run``: ``worker.cli`` imports this module for every command.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from pathlib import Path
from typing import Any

from worker.usage import UsageError

# The scenarios that have an Azure twin (the others drive EC2-only features).
AZURE_SCENARIOS = ("consolidation", "drift", "interruption", "smoke")
# sandbox.scenarios.SCENARIOS, import-free
SCENARIO_NAMES = (
    "burst",
    "consolidation",
    "drift",
    "efa",
    "interruption",
    "migration",
    "reserved",
    "scale",
    "smoke",
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "dev",
        help="run Temporal, a Kubernetes control plane, emulated EC2 and a worker locally",
        description="Run the whole Joinery stack on 127.0.0.1 until Ctrl-C.",
    )
    p.add_argument(
        "--provider",
        choices=("aws", "azure"),
        default="aws",
        help="the cloud to emulate: aws (EC2, default) or azure (VMs in a node resource group)",
    )
    p.add_argument(
        "--region",
        default=None,
        help="emulated region (default us-east-1 on aws, eastus on azure)",
    )
    p.add_argument(
        "--boot-delay",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="seconds from launch until a simulated node registers (default 3)",
    )
    p.add_argument("--no-worker", action="store_true", help="start everything but the worker")
    p.add_argument(
        "--scenario", choices=SCENARIO_NAMES, help="run a scripted scenario once the stack is up"
    )
    p.add_argument(
        "--exit",
        action="store_true",
        help="stop once the scenario finished (exit 0 only if it held); without a scenario, "
        "stop as soon as the stack is up",
    )
    p.add_argument(
        "--temporal-port",
        type=int,
        default=7233,
        help="Temporal frontend port (UI: this + 1000); 0 picks free ports (default 7233)",
    )
    p.add_argument(
        "--temporal",
        choices=("dev", "server"),
        default="dev",
        help="dev: the Temporal dev server with its UI (default); server: temporal-server on "
        "PostgreSQL, as in production (built once by `make temporal-bin`; history not kept)",
    )
    p.add_argument("--ui-port", type=int, help="Temporal UI port (default: frontend port + 1000)")
    p.add_argument(
        "--cluster-name",
        default="joinery-dev",
        help="cluster name (discovery tags, default joinery-dev)",
    )
    p.add_argument(
        "--state-dir",
        help="keep Temporal's history here across restarts (default ~/.cache/joinery/dev; "
        "scenarios with --exit use a fresh in-memory store unless this is given)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=240.0,
        metavar="SECONDS",
        help="how long a scenario may take (default 240)",
    )
    p.add_argument("--quiet-worker", action="store_true", help="do not copy worker logs to stderr")
    p.set_defaults(func=run)


def _validate(args: argparse.Namespace) -> None:
    if args.region is None:
        args.region = "eastus" if args.provider == "azure" else "us-east-1"
    if args.boot_delay < 0:
        raise UsageError(f"--boot-delay must be >= 0, got {args.boot_delay}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be > 0, got {args.timeout}")
    for flag, port in (("--temporal-port", args.temporal_port), ("--ui-port", args.ui_port)):
        if port is not None and not 0 <= port <= 65535:
            raise UsageError(f"{flag} must be a port number, got {port}")
    if args.ui_port is None and args.temporal_port > 64535:
        raise UsageError("--temporal-port above 64535 needs an explicit --ui-port")
    if args.provider == "azure" and args.scenario and args.scenario not in AZURE_SCENARIOS:
        raise UsageError(
            f"--scenario {args.scenario} runs on aws only; on azure: {', '.join(AZURE_SCENARIOS)}"
        )
    if args.scenario and args.no_worker:
        raise UsageError("--scenario needs the worker; drop --no-worker")
    if not args.region or not all(part.isalnum() for part in args.region.split("-")):
        raise UsageError(f"--region {args.region!r} is not a region name like us-east-1")


def _log(message: str) -> None:
    print(f"[dev] {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    _validate(args)
    from sandbox import dev_env, scenarios
    from sandbox.dev import DevOptions, DevStack, PortInUse, state_home

    if args.state_dir:
        state_dir: Path | None = Path(args.state_dir).expanduser()
    elif args.scenario and args.exit:
        state_dir = None  # a scripted run starts from nothing and leaves nothing behind
    else:
        state_dir = state_home()
    options = DevOptions(
        region=args.region,
        cluster_name=args.cluster_name,
        boot_delay=args.boot_delay,
        worker=not args.no_worker,
        temporal_port=args.temporal_port,
        ui_port=args.ui_port,
        state_dir=state_dir,
        follow_worker_log=not (args.quiet_worker or (args.scenario and args.exit)),
        temporal_kind=args.temporal,
        # an interactive stack tells the operator commands of other terminals where it is
        env_file=None if args.exit else dev_env.path(),
        provider=args.provider,
    )
    # Ctrl-C, SIGTERM (a test harness, systemd) and a closed terminal all unwind through the
    # finally below. SIGINT is set explicitly: a shell starting us in the background would
    # have left it ignored. A SIGHUP that nohup ignores stays ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.default_int_handler)
    began = time.monotonic()
    try:
        stack = DevStack.start(options, log=_log)
    except PortInUse as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        _log("interrupted during start-up; stopped what had started")
        return 130
    try:
        _log(
            "started in {:.1f}s ({})".format(
                time.monotonic() - began,
                ", ".join(f"{k} {v:.1f}s" for k, v in stack.timings.items()),
            )
        )
        print(stack.banner(), flush=True)
        if args.scenario:
            _log(f"running scenario {args.scenario}")
            summary = scenarios.run(args.scenario, stack, log=_log, timeout=args.timeout)
            for failure in summary.failures:
                _log(f"scenario {args.scenario}: {failure}")
            if summary.failures and stack.worker is not None:
                _log("last worker log lines:\n" + stack.worker.log_tail(40))
            print(summary.to_json(), flush=True)
            if args.exit:
                return 0 if summary.ok else 1
        elif args.exit:
            return 0
        _log("running; Ctrl-C to stop")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                if stack.worker is not None and not stack.worker.alive():
                    _log(
                        f"the worker exited ({stack.worker.popen.returncode}); last lines:\n"
                        + stack.worker.log_tail(30)
                    )
                    return 1
                time.sleep(1)
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        _log("stopping everything joinery dev started")
        stack.stop()
        _log("stopped")
