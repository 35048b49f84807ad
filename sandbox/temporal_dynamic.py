"""The Temporal server settings Joinery asks of any server it runs on (docs/temporal.md).

Both sandbox servers apply them: ``temporal server start-dev`` as ``--dynamic-config-value``
and ``temporal-server`` in its dynamic-config file. Operators set the same keys in their own
server's dynamic config (the Helm chart's ``server.dynamicConfig``); Temporal Cloud needs none.

``system.enableActivityEagerExecution``: when a workflow task's completion schedules an
activity on the worker's own task queue and that worker has a free slot, the server hands
the activity task back in the completion's response instead of through the matching
service (no task-queue write, no poll). A NodeClaim's launch and drain are scheduled that
way. Measured with ``benchmarks/scale.py`` on the production server: persistence writes per
lifecycle 15 -> 12 and about a tenth less server CPU (docs/performance.md). Off by default
in ``temporal-server``; the SDK asks for it on every such activity unless told not to.
"""

from __future__ import annotations

from collections.abc import Mapping

SERVER_SETTINGS: Mapping[str, bool] = {
    "system.enableActivityEagerExecution": True,
}


def dev_server_args() -> list[str]:
    """``temporal server start-dev`` arguments for SERVER_SETTINGS."""
    args: list[str] = []
    for key, value in SERVER_SETTINGS.items():
        args += ["--dynamic-config-value", f"{key}={'true' if value else 'false'}"]
    return args


def dynamic_config_entries() -> dict[str, object]:
    """SERVER_SETTINGS as entries of a ``temporal-server`` dynamic-config file."""
    return {key: [{"value": value}] for key, value in SERVER_SETTINGS.items()}
