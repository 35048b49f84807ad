"""Scripted end-to-end runs on the ``joinery dev`` stack: ``joinery dev --scenario NAME``.

Each scenario takes a running :class:`sandbox.dev.DevStack`, drives it as a cluster user
would, and returns a :class:`~sandbox.scenarios.common.Summary` whose JSON is the last line
``joinery dev`` prints. Add one by writing a module with ``run(sandbox, summary, timeout)``
and listing it in ``SCENARIOS``.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

from sandbox.dev import DevStack
from sandbox.scenarios.common import Sandbox, ScenarioFailed, Summary

SCENARIOS: dict[str, str] = {
    "smoke": "sandbox.scenarios.smoke",
    "burst": "sandbox.scenarios.burst",
    "interruption": "sandbox.scenarios.interruption",
    "consolidation": "sandbox.scenarios.consolidation",
    "drift": "sandbox.scenarios.drift",
    "scale": "sandbox.scenarios.scale",
    "migration": "sandbox.scenarios.migration",
    "efa": "sandbox.scenarios.efa",
    "reserved": "sandbox.scenarios.reserved",
}


def names() -> list[str]:
    return sorted(SCENARIOS)


def run(
    name: str, stack: DevStack, *, log: Callable[[str], None], timeout: float = 240.0
) -> Summary:
    """Run one scenario to the end; failures are recorded in the summary, never raised."""
    module = importlib.import_module(SCENARIOS[name])
    summary = Summary(scenario=name)
    sandbox = Sandbox(stack, log)
    began = time.monotonic()
    try:
        module.run(sandbox, summary, timeout)
    except ScenarioFailed as exc:
        summary.failures.append(str(exc))
    except Exception as exc:  # report, do not crash: the summary line must still print
        summary.failures.append(
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        )
    finally:
        # Whatever happened, nothing may keep running (or costing) after the scenario.
        remaining = max(30.0, timeout - (time.monotonic() - began))
        if summary.fleetKept:
            # every node still runs its pod, so none would empty: counted, not waited for
            summary.instancesLeftRunning = len(sandbox.live_instances())
        else:
            try:
                if sandbox.live_instances() or sandbox.nodeclaims():
                    sandbox.remove_empty_nodes(timeout=min(remaining, 90.0))
            except Exception as exc:
                summary.failures.append(f"cleanup: {exc}")
            summary.instancesLeftRunning = sandbox.wait_instances_terminated(timeout=30.0)
            for what, count in sandbox.wait_leftovers_gone(timeout=30.0).items():
                summary.extra[f"{what.replace(' ', '_')}_left"] = count
                if count:
                    summary.failures.append(f"{count} {what} left behind")
        sandbox.close()
    if summary.instancesLeftRunning and not summary.fleetKept:
        summary.failures.append(f"{summary.instancesLeftRunning} instance(s) left running")
    summary.ok = not summary.failures
    return summary
