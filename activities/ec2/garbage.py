"""The AWS side's periodic cleanup: launch templates no instance uses, profiles of gone classes.

Runs in every worker replica; each deletion is idempotent (a resource another replica deleted
first counts as done), so replicas need no coordination. A failed round is logged and tried
again next period: nothing here is urgent, and nothing running depends on it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from activities.ec2.provider import EC2Provider

log = logging.getLogger(__name__)
PERIOD_SECONDS = 300.0


def run(
    provider: EC2Provider,
    live_nodeclasses: Callable[[], list[str]],
    stop: threading.Event,
    period: float = PERIOD_SECONDS,
) -> None:
    """Collect every ``period`` seconds until ``stop`` is set."""
    while not stop.wait(period):
        try:
            deleted = provider.garbage_collect(live_nodeclasses())
        except Exception as exc:
            log.warning("AWS garbage collection failed, will retry: %s", exc)
            continue
        if any(deleted.values()):
            log.info("AWS garbage collection deleted %s", deleted)
