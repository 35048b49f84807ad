"""One way for tests to replay recorded workflow histories.

Replay tests judge determinism only. The SDK's deadlock detector (a workflow task must
yield within 2 s) is a timing check, and on a loaded CI machine a replay can miss it for
reasons that are not the workflow's: a garbage collection that closes a connection pool
runs its finalizers on the workflow thread. So the replayer runs in debug mode, which turns
that detector off and leaves every non-determinism check in place.
"""

from __future__ import annotations

from temporalio.worker import Replayer


def replayer(*workflows: type) -> Replayer:
    """A replayer for ``workflows`` that fails on non-determinism, never on a slow task."""
    return Replayer(workflows=list(workflows), debug_mode=True)
