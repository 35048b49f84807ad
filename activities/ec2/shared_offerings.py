"""The ConfigMap record replicas share refusals through, for every cloud:
``activities.cloud.shared_offerings`` (kept importable here for the EC2 modules)."""

from activities.cloud.shared_offerings import (
    CONFIGMAP,
    DEFAULT_NAMESPACE,
    ConfigMapRecord,
    key_pool,
    pool_key,
    worker_namespace,
)

__all__ = [
    "CONFIGMAP",
    "DEFAULT_NAMESPACE",
    "ConfigMapRecord",
    "key_pool",
    "pool_key",
    "worker_namespace",
]
