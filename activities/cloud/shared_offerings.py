"""The insufficient-capacity record every worker replica shares: one ConfigMap in the cluster.

A pool the cloud refused is written there (key: the pool, value: when the entry expires, as Unix
seconds, because replicas share no monotonic clock), and every replica merges the record into
its own cache before it launches. So a replica never sends a launch to a pool another replica
has just found exhausted, and the record is visible to anyone who asks::

    kubectl -n joinery get configmap joinery-unavailable-offerings -o yaml

Writes are JSON merge patches of single keys (no read-modify-write, so replicas cannot
overwrite each other's entries); expired keys are removed by the next write.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from activities.cloud.errors import Pool

log = logging.getLogger(__name__)

CONFIGMAP = "joinery-unavailable-offerings"
DEFAULT_NAMESPACE = "joinery"
_SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
_ANY, _ANY_KEY = "*", "any"


def worker_namespace() -> str:
    """``JOINERY_NAMESPACE``, else the pod's own namespace, else ``joinery``."""
    if os.environ.get("JOINERY_NAMESPACE"):
        return os.environ["JOINERY_NAMESPACE"]
    try:
        return _SA_NAMESPACE.read_text().strip() or DEFAULT_NAMESPACE
    except OSError:
        return DEFAULT_NAMESPACE


def pool_key(pool: Pool) -> str:
    """A ConfigMap key (``[-._a-zA-Z0-9]+``): parts joined by ``_``, which none of them holds."""
    parts = (pool.capacity_type, pool.instance_type, pool.zone)
    return "_".join(_ANY_KEY if p == _ANY else p for p in parts)


def key_pool(key: str) -> Pool | None:
    parts = key.split("_")
    if len(parts) != 3:
        return None
    ct, it, zone = (_ANY if p == _ANY_KEY else p for p in parts)
    return Pool(ct, it, zone)


class ConfigMapRecord:
    """Publish and read refused pools in one ConfigMap (CoreV1Api of the worker's client)."""

    def __init__(
        self,
        core: Any,
        namespace: str | None = None,
        name: str = CONFIGMAP,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._core = core
        self.namespace = namespace or worker_namespace()
        self.name = name
        self._now = wall_clock

    def publish(self, pool: Pool, expires_at: float) -> None:
        """Add one entry and drop the expired ones (raises on API errors)."""
        data: dict[str, str | None] = {pool_key(pool): f"{expires_at:.3f}"}
        now = self._now()
        for key, pool_expiry in self._read_raw().items():
            if pool_expiry <= now:
                data.setdefault(key, None)  # null in a merge patch deletes the key
        body = {"data": data}
        try:
            self._core.patch_namespaced_config_map(self.name, self.namespace, body)
        except ApiException as exc:
            if exc.status != 404:
                raise
            created = {
                "metadata": {"name": self.name},
                "data": {k: v for k, v in data.items() if v},
            }
            try:
                self._core.create_namespaced_config_map(self.namespace, created)
            except ApiException as again:
                if again.status != 409:
                    raise
                self._core.patch_namespaced_config_map(self.name, self.namespace, body)

    def read(self) -> dict[Pool, float]:
        """Unexpired entries: pool → expiry (Unix seconds)."""
        now = self._now()
        out: dict[Pool, float] = {}
        for key, expiry in self._read_raw().items():
            pool = key_pool(key)
            if pool is not None and expiry > now:
                out[pool] = expiry
        return out

    def _read_raw(self) -> dict[str, float]:
        try:
            cm = self._core.read_namespaced_config_map(self.name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return {}
            raise
        out: dict[str, float] = {}
        for key, value in (cm.data or {}).items():
            try:
                out[key] = float(value)
            except (TypeError, ValueError):
                continue  # someone edited it by hand: ignore what is not ours
        return out
