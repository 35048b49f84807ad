"""The node-class kinds, as data: where each lives in the API, how it parses, what of it
its nodes drift on, and the label domain its provider owns.

A provider names its kind (``CloudProvider.nodeclass_kind``); code that only reads node
classes (the watchers, the status reporter) takes what it needs from here, so none of it
knows EC2NodeClass from AKSNodeClass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from activities.azure import type_labels as azure_labels
from activities.kubernetes.nodeclasses import EC2NODECLASS_READINESS
from activities.kubernetes.resources import AKSNODECLASS, EC2NODECLASS, CustomResource
from models import aksnodeclass, aksnodeclass_hash, ec2nodeclass_hash
from models import labels as L
from models.aksnodeclass import AKSNodeClass
from models.ec2nodeclass import EC2NodeClass


def _no_stamp(nodeclass: Any) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class NodeClassKind:
    resource: CustomResource
    model: type[BaseModel]
    # Resolved status lists whose ids the class's nodes drift on (with the spec's generation).
    drift_status_lists: tuple[str, ...]
    # The label domain the provider owns (Karpenter's restricted domain for its labels).
    label_domain: str
    # The provider's well-known node labels (the instance-type labels its catalog offers).
    well_known_labels: frozenset[str]
    # The annotations a claim launched from the class records (its static hash), for drift.
    hash_annotations: Callable[[Any], dict[str, str]] = field(default=_no_stamp)
    # Resolved status values (not lists) its nodes drift on (the AKSNodeClass's version).
    drift_status_values: tuple[str, ...] = ()
    # The conditions its Ready needs all True.
    readiness: tuple[str, ...] = EC2NODECLASS_READINESS

    @property
    def kind(self) -> str:
        return self.resource.kind

    def parse(self, body: Mapping[str, Any]) -> Any:
        """The class as its model; raises pydantic's ValidationError naming the field."""
        return self.model.model_validate(body)

    def drift_facts(self, body: Mapping[str, Any]) -> str:
        """What of the class its nodes' drift depends on, as one comparable string: the
        spec's generation and the ids of what its selectors resolved to. Condition-only
        status writes leave it unchanged."""
        status = body.get("status") or {}
        ids = {
            key: [str(e.get("id")) for e in status.get(key) or [] if isinstance(e, dict)]
            for key in self.drift_status_lists
        }
        values = {key: status.get(key) for key in self.drift_status_values}
        generation = (body.get("metadata") or {}).get("generation")
        return f"{generation}|{ids}" + (f"|{values}" if values else "")


EC2_NODECLASS = NodeClassKind(
    resource=EC2NODECLASS,
    model=EC2NodeClass,
    drift_status_lists=("amis", "subnets", "securityGroups"),
    label_domain=L.AWS_LABEL_PREFIX.rstrip("/"),
    well_known_labels=L.AWS_LABELS,
    hash_annotations=ec2nodeclass_hash.hash_annotations,
)
AKS_NODECLASS = NodeClassKind(
    resource=AKSNODECLASS,
    model=AKSNodeClass,
    drift_status_lists=("images",),
    label_domain=azure_labels.GROUP,
    hash_annotations=aksnodeclass_hash.hash_annotations,
    drift_status_values=("kubernetesVersion",),
    readiness=aksnodeclass.READINESS,
    well_known_labels=frozenset(
        {
            azure_labels.SKU_NAME,
            azure_labels.SKU_FAMILY,
            azure_labels.SKU_SERIES,
            azure_labels.SKU_VERSION,
            azure_labels.SKU_CPU,
            azure_labels.SKU_MEMORY,
            azure_labels.SKU_GPU_NAME,
            azure_labels.SKU_GPU_MANUFACTURER,
            azure_labels.SKU_GPU_COUNT,
            azure_labels.SKU_NETWORKING_ACCELERATED,
            azure_labels.SKU_STORAGE_PREMIUM_CAPABLE,
            azure_labels.SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE,
            azure_labels.SKU_HYPERV_GENERATION,
        }
    ),
)
# The kind code without a provider reads (the watchers' tests, the default provider's).
DEFAULT = EC2_NODECLASS
