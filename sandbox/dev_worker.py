"""``joinery worker`` as the dev stack runs it: the same command, loopback-only endpoints.

In a pod the worker's ``/healthz``, ``/readyz`` and ``/metrics`` server listens on every
interface, as it must for probes. On a laptop or CI machine the sandbox keeps everything on
127.0.0.1, so this entry point binds that server to loopback and otherwise hands the
arguments to ``joinery worker`` unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from worker.health import HealthServer

LOOPBACK = "127.0.0.1"


class LoopbackHealthServer(HealthServer):
    def __init__(self, port: int, ready: Callable[[], bool], host: str = LOOPBACK) -> None:
        super().__init__(port, ready, host=LOOPBACK)


def main(argv: Sequence[str] | None = None) -> int:
    import worker.app
    from worker.cli import main as cli_main

    # worker.app looks HealthServer up when the worker starts; give it the loopback one.
    worker.app.HealthServer = LoopbackHealthServer  # type: ignore[misc]
    return cli_main(["worker", *(sys.argv[1:] if argv is None else argv)])


def command(*args: str) -> list[str]:
    """The argv that runs this entry point with the current interpreter."""
    return [
        sys.executable,
        "-c",
        "import sys; from sandbox.dev_worker import main; sys.exit(main())",
        *args,
    ]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
