"""How an activity's body runs: adapter failures typed for the workflow, long calls heartbeated.

A failure the adapter calls non-retryable becomes a non-retryable ``ApplicationError`` whose
``type`` is the adapter's class name, so workflows branch on the type and never on text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from temporalio.exceptions import ApplicationError

from activities.kubernetes.errors import KubernetesError

T = TypeVar("T")


@contextmanager
def typed_failures() -> Iterator[None]:
    """Turn adapter errors into ApplicationErrors that keep their class and retryability."""
    try:
        yield
    except ApplicationError:
        raise
    except KubernetesError as exc:
        raise ApplicationError(
            str(exc), type=type(exc).__name__, non_retryable=not exc.retryable
        ) from exc
    except Exception as exc:
        retryable = getattr(exc, "retryable", None)
        if retryable is None:
            raise
        raise ApplicationError(
            str(exc), type=type(exc).__name__, non_retryable=not retryable
        ) from exc


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
