"""The subnet and security groups of a claim's instance, written on claims that lack them.

Drift compares them with the EC2NodeClass (``SubnetDrift``, ``SecurityGroupDrift``). A claim
records them when it launches (``activities.lifecycle.launch``); one launched by Karpenter,
or by a Joinery release from before that, has neither, and would never get those verdicts.
Karpenter reads them from EC2 at each check; Joinery writes them once, from the
DescribeInstances answer the garbage collector's pass over claims and owned instances has
already read (``activities.garbage.claims_without_instance``), so an adopted fleet is
checked like a launched one after one pass, at one write per claim and no call to EC2 more.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from activities.cloud.instances import Instance
from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from models import labels as L


def missing(claim: Mapping[str, Any], instance: Instance) -> dict[str, str | None]:
    """The placement annotations ``claim`` lacks that ``instance`` can give (none for a
    claim that has them: what its launch recorded stands)."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    have = L.placement_annotations(instance.subnet_id, instance.security_group_ids)
    return {k: v for k, v in have.items() if k not in annotations}


def backfill(
    kube: Kube,
    claims: Iterable[Mapping[str, Any]],
    instances: Mapping[str, Instance],
    instance_id: Callable[[str], str],
) -> list[str]:
    """Write the missing placement annotations of each claim whose instance is among
    ``instances`` (by id, read from the claim's providerID by ``instance_id``: the
    provider's); the names written. A claim being deleted is left alone."""
    written: list[str] = []
    for claim in claims:
        meta = claim.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        provider_id = str((claim.get("status") or {}).get("providerID") or "")
        instance = instances.get(instance_id(provider_id)) if provider_id else None
        if instance is None:
            continue
        wanted = missing(claim, instance)
        if not wanted:
            continue
        with contextlib.suppress(NotFound):  # deleted since the list: nothing to record
            nodeclaims.patch_metadata(kube, str(meta["name"]), annotations=wanted)
            written.append(str(meta["name"]))
    return written
