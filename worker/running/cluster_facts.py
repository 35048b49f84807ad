"""The cluster facts node user data needs, read from the API server instead of EKS.

With Karpenter's ``EKS_CONTROL_PLANE=false`` the worker never calls EKS DescribeCluster (a
self-managed control plane has no EKS cluster to describe): the Kubernetes version comes from
the API server's ``/version``, the endpoint and CA bundle from the kubeconfig the worker
connects with, unless settings give them.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from pathlib import Path

from kubernetes import client

from activities.kubernetes.client import Kube
from worker.running.settings import Settings


def api_server_version(kube: Kube) -> str:
    """``major.minor`` of the API server (``1.31``; a provider's ``31+`` minor loses its +)."""
    info = client.VersionApi(kube.api_client).get_code()
    minor = re.sub(r"\D.*$", "", str(info.minor))
    return f"{info.major}.{minor}"


def ca_bundle(configuration: client.Configuration) -> str:
    """The kubeconfig's CA as EKS gives it (base64 of the PEM), or "" when it has none."""
    path = configuration.ssl_ca_cert
    if not path:
        return ""
    return base64.b64encode(Path(path).read_bytes()).decode()


def from_api_server(settings: Settings, kube: Kube) -> Settings:
    """``settings`` with the facts it does not give filled from the API server."""
    configuration = kube.api_client.configuration
    return dataclasses.replace(
        settings,
        cluster_endpoint=settings.cluster_endpoint or configuration.host,
        cluster_ca_bundle=settings.cluster_ca_bundle or ca_bundle(configuration),
        kubernetes_version=settings.kubernetes_version or api_server_version(kube),
    )
