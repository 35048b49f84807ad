"""Building the Kubernetes API client, from a kubeconfig file or from inside a pod.

The adapter uses the official client's synchronous API. Activities that call it are sync
activities run on the worker's thread pool, which is what the client is built for; one
``Kube`` (and its connection pool) is shared by all threads of a worker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata

from kubernetes import client, config
from urllib3.util.retry import Retry

# The Kubernetes client's default pool of 4 connections serialises a busy worker.
DEFAULT_POOL_SIZE = 32
# What the API server's audit log and metrics see as the caller; the client's own default
# ("OpenAPI-Generator/...") is every Python client's. Other programs of this repository
# (the sandbox's node simulator) pass their own.
USER_AGENT = "joinery"
THROTTLE_RETRIES = 5


@dataclass(frozen=True)
class Kube:
    """The typed API groups the adapter talks to, all over one ``ApiClient``."""

    api_client: client.ApiClient
    core: client.CoreV1Api = field(init=False)
    custom: client.CustomObjectsApi = field(init=False)
    policy: client.PolicyV1Api = field(init=False)
    storage: client.StorageV1Api = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "core", client.CoreV1Api(self.api_client))
        object.__setattr__(self, "custom", client.CustomObjectsApi(self.api_client))
        object.__setattr__(self, "policy", client.PolicyV1Api(self.api_client))
        object.__setattr__(self, "storage", client.StorageV1Api(self.api_client))

    def close(self) -> None:
        self.api_client.close()


class _RetryAfter(Retry):
    """Retries only a 429 that carries Retry-After: an eviction refused by a
    PodDisruptionBudget is a 429 without one, and is the drain's to retry, with backoff."""

    RETRY_AFTER_STATUS_CODES = frozenset({429})


def _version() -> str:
    try:
        return metadata.version("joinery")
    except metadata.PackageNotFoundError:
        return "dev"


def _configured(
    configuration: client.Configuration, pool_size: int, user_agent: str = USER_AGENT
) -> Kube:
    configuration.connection_pool_maxsize = pool_size
    # Fail fast and let the caller's retry policy decide (urllib3's default retries would hide
    # an unavailable API server behind long stalls), except for what client-go also retries
    # by itself: a 429 with Retry-After ("storage is (re)initializing", priority-and-fairness
    # rejections), which says the request was not processed and when to come back.
    configuration.retries = _RetryAfter(
        total=THROTTLE_RETRIES,
        connect=0,
        read=0,
        redirect=0,
        other=0,
        status=THROTTLE_RETRIES,
        allowed_methods=None,
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    api_client = client.ApiClient(configuration)
    api_client.user_agent = f"{user_agent}/{_version()}"
    return Kube(api_client)


def from_kubeconfig(
    path: str | os.PathLike[str],
    *,
    context: str | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
    user_agent: str = USER_AGENT,
) -> Kube:
    """A client for the cluster (and user) named by a kubeconfig file; ``user_agent`` names
    the program to the API server."""
    configuration = client.Configuration()
    config.load_kube_config(
        config_file=os.fspath(path), context=context, client_configuration=configuration
    )
    return _configured(configuration, pool_size, user_agent)


def in_cluster(*, pool_size: int = DEFAULT_POOL_SIZE) -> Kube:
    """A client using the pod's service-account token, as when Joinery runs in the cluster."""
    configuration = client.Configuration()
    config.load_incluster_config(client_configuration=configuration)
    return _configured(configuration, pool_size)


def connect(kubeconfig: str | os.PathLike[str] | None = None) -> Kube:
    """The kubeconfig given, else ``$KUBECONFIG``, else in-cluster, else ``~/.kube/config``."""
    if kubeconfig:
        return from_kubeconfig(kubeconfig)
    if os.environ.get("KUBECONFIG"):
        return from_kubeconfig(os.environ["KUBECONFIG"].split(os.pathsep)[0])
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster()
    return from_kubeconfig(os.path.expanduser("~/.kube/config"))
