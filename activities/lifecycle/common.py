"""What every lifecycle activity shares: the adapters it runs on and how failures surface.

A failure the adapter calls non-retryable becomes a non-retryable ``ApplicationError`` whose
``type`` is the adapter's class name, so workflows branch on the type and never on text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.kubernetes.client import Kube
from activities.kubernetes.errors import KubernetesError
from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.nodeclass_store import NodeClassStore
from activities.kubernetes.object_cache import WatchedObjects
from activities.metrics import Counters
from models import contract
from scheduling.solving.kept import KeptCatalog

if TYPE_CHECKING:
    from activities.ec2.provider import EC2Provider

T = TypeVar("T")


@dataclass
class Deps:
    """The adapters one worker shares among its activity threads."""

    kube: Kube
    ec2: EC2Provider | None = None
    counters: Counters = field(default_factory=Counters)
    cluster: str = "joinery"
    # Where NodeClaim lifecycles run; "" means the queue of the activity that starts them.
    lifecycle_queue: str = ""
    # EC2NodeClasses as last read or watched (the worker's watcher feeds it); None: every
    # launch reads its NodeClass from the API server.
    nodeclass_store: NodeClassStore | None = None
    # Node names by providerID from the worker's Node watch; None (or not synced): a
    # registration check that was not told the Node's name lists the pool's Nodes.
    node_index: NodeIndex | None = None
    # Pods, Nodes and NodeClaims from the worker's watches, for the provisioning round's
    # reads; None (or a watch not synced): the round lists them.
    watched: WatchedObjects | None = None
    # What one provisioning round's solve keeps for the next (scheduling.solving.kept).
    kept_catalog: KeptCatalog = field(default_factory=KeptCatalog)

    def lifecycle_task_queue(self) -> str:
        """The queue to start a NodeClaim lifecycle on. The worker names it: the activities
        that start lifecycles run on the cluster workflows' own queue (``worker.app``)."""
        return self.lifecycle_queue or activity.info().task_queue

    def provider(self) -> EC2Provider:
        if self.ec2 is None:
            raise ApplicationError(
                "this worker has no EC2 provider configured",
                type=contract.ERR_NO_PROVIDER,
                non_retryable=True,
            )
        return self.ec2


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


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


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
