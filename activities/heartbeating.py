"""Long blocking calls inside an activity, with the activity heartbeating meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def heartbeating(work: Callable[[], T], beat: Callable[..., None], every: float = 5.0) -> T:
    """Run ``work`` on a helper thread while this (the activity's) thread heartbeats.

    For calls that block longer than a heartbeat timeout in one piece (loading the EC2
    catalog, CreateFleet): the short timeout is what lets Temporal notice a killed worker
    within seconds and retry elsewhere, instead of after the whole start-to-close timeout.
    """
    done = threading.Event()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="activity-work", daemon=True).start()
    while not done.wait(every):
        beat()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
