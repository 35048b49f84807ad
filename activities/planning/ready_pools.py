"""NodePools whose EC2NodeClass is not Ready take no part in a round, as in Karpenter.

Karpenter's provisioner only uses NodePools that are Ready, and a NodePool is not Ready while
its NodeClass is not (no subnet, security group or AMI matched its selectors). Claims
planned on such a pool could not launch. When a round built one catalog for every pool,
a NodeClass that matched no subnet (every offering unavailable) could stand for the other
pools too and stop provisioning for the whole cluster; each pool now has its own catalog
(``plan.pool_catalogs``), and the one merged catalog the disruption round prices nodes
with (``plan.instance_types``) leaves such NodeClasses out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from activities.ec2.provider import EC2Provider
from activities.planning.cluster_state import ClusterState
from models import unimplemented
from models.ec2nodeclass import EC2NodeClass
from models.errors import field_error


def not_ready(ec2: EC2Provider, nodeclass: Mapping[str, Any]) -> str | None:
    """Why the EC2NodeClass is not Ready (its resolution's message, the field that is
    invalid, or the fields Joinery does not implement), or None when it is."""
    try:
        parsed = EC2NodeClass.model_validate(nodeclass)
    except ValidationError as exc:
        return field_error(exc)
    if refused := unimplemented.nodeclass_fields(nodeclass):
        return unimplemented.message(refused)
    return ec2.nodeclass_not_ready(parsed)


def leave_out_unready(ec2: EC2Provider, state: ClusterState) -> None:
    """Drop from ``state`` (its pools and their documents) each NodePool whose EC2NodeClass
    exists and is not Ready, naming it in ``state.skipped``. A pool whose NodeClass is not
    in the cluster is kept: its catalog is the provider's default, as before."""
    verdicts: dict[str, str | None] = {}
    dropped: set[str] = set()
    for pool in state.nodepools:
        ref = pool.spec.template.spec.node_class_ref.name
        if ref not in state.nodeclasses:
            continue
        if ref not in verdicts:
            verdicts[ref] = not_ready(ec2, state.nodeclasses[ref])
        why = verdicts[ref]
        if why is not None:
            dropped.add(pool.name)
            state.skipped.append(f"NodePool {pool.name}: EC2NodeClass {ref} is not ready: {why}")
    if not dropped:
        return
    state.nodepools = [p for p in state.nodepools if p.name not in dropped]
    labels = {f"NodePool {name}" for name in dropped}
    state.documents = [d for d in state.documents if d.where not in labels]
