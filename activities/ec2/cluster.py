"""Cluster discovery: what a node needs to join, read from EKS ``DescribeCluster``.

Karpenter reads the API endpoint and CA bundle at start (flags ``clusterEndpoint`` and
``clusterCABundle`` override them) and the service CIDR, IP family and Kubernetes version so
user data and AMI aliases match the cluster. Joinery does the same and re-reads them every few
minutes, so a control-plane upgrade moves ``al2023@latest`` to the new version's AMIs without a
restart. A failed refresh keeps the last good answer; only a worker that never learnt its
cluster fails its launches, with the EKS error as the message.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from activities.ec2.errors import aws_errors
from activities.ec2.settings import DEFAULT_KUBERNETES_VERSION, IPV6, ClusterInfo

log = logging.getLogger(__name__)


def from_describe_cluster(name: str, cluster: dict[str, Any]) -> ClusterInfo:
    """One DescribeCluster ``cluster`` object → ClusterInfo."""
    network = cluster.get("kubernetesNetworkConfig") or {}
    family = str(network.get("ipFamily") or "ipv4").lower()
    cidr = network.get("serviceIpv6Cidr") if family == IPV6 else network.get("serviceIpv4Cidr")
    return ClusterInfo(
        name=name,
        endpoint=str(cluster.get("endpoint") or "").rstrip("/"),
        certificate_authority=str((cluster.get("certificateAuthority") or {}).get("data") or ""),
        service_cidr=str(cidr or ClusterInfo(name).service_cidr),
        kubernetes_version=str(cluster.get("version") or DEFAULT_KUBERNETES_VERSION),
        ip_family=family,
    )


def with_overrides(
    discovered: ClusterInfo, static: ClusterInfo, defaults: ClusterInfo
) -> ClusterInfo:
    """Settings that differ from the defaults win over what EKS said (Karpenter's overrides)."""
    changes = {
        f: getattr(static, f)
        for f in ("endpoint", "certificate_authority", "service_cidr", "kubernetes_version")
        if getattr(static, f) != getattr(defaults, f)
    }
    return replace(discovered, **changes)


class ClusterSource:
    """The current ClusterInfo: static, or discovered through EKS and cached for ``ttl``."""

    def __init__(
        self,
        static: ClusterInfo,
        eks: Any | None = None,
        ttl_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._static = static
        self._eks = eks
        self._ttl = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._current: ClusterInfo | None = None if eks is not None else static
        self._fetched_at = -float("inf")

    @property
    def name(self) -> str:
        return self._static.name

    def current(self) -> ClusterInfo:
        """The cached answer, refreshed when older than the TTL.

        Raises the classified EKS error only when no answer was ever obtained.
        """
        if self._eks is None:
            return self._static
        with self._lock:
            fresh = self._clock() - self._fetched_at < self._ttl
            if self._current is not None and fresh:
                return self._current
            try:
                self._current = self._describe()
            except Exception as exc:
                if self._current is None:
                    raise
                log.warning("cluster refresh failed, keeping the last answer: %s", exc)
            self._fetched_at = self._clock()
            return self._current

    def refresh(self) -> ClusterInfo:
        with self._lock:
            self._fetched_at = -float("inf")
        return self.current()

    def _describe(self) -> ClusterInfo:
        assert self._eks is not None
        with aws_errors("DescribeCluster"):
            cluster = self._eks.describe_cluster(name=self._static.name)["cluster"]
        found = from_describe_cluster(self._static.name, cluster)
        return with_overrides(found, self._static, ClusterInfo(self._static.name))
