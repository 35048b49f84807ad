"""Carry out a capacity reservation's end on the claims in it (``scheduling.disruption.
reservation_ends`` decides): claims of an expiring capacity block deleted, claims of an ended
on-demand reservation relabelled on-demand, with their Nodes. Part of the garbage
collector's pass, which has listed the claims already; one DescribeCapacityReservations per
reservation in use, none when no claim is reserved."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from activities.cloud.provider import CloudProvider
from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from scheduling.disruption.reservation_ends import (
    ReservationEnds,
    on_demand_labels,
    reservation_ends,
    reserved_ids,
)

log = logging.getLogger(__name__)


def apply(kube: Kube, cloud: CloudProvider, claims: Sequence[Mapping[str, Any]]) -> ReservationEnds:
    ids = reserved_ids(claims)
    if not ids:
        return ReservationEnds()
    states = cloud.reservation_states(sorted(ids))
    decided = reservation_ends(claims, states)
    by_name = {str(c["metadata"]["name"]): c for c in claims}
    for name in decided.drain:
        log.info("NodeClaim %s: its capacity block is expiring: deleting it", name)
        with contextlib.suppress(NotFound):
            nodeclaims.delete(kube, name, uid=by_name[name]["metadata"].get("uid"))
    for name in decided.on_demand:
        log.info("NodeClaim %s: its capacity reservation ended: now on-demand", name)
        with contextlib.suppress(NotFound):
            nodeclaims.patch_metadata(kube, name, labels=on_demand_labels())
        node = str((by_name[name].get("status") or {}).get("nodeName") or "")
        if node:
            with contextlib.suppress(NotFound):
                nodes.patch_metadata(kube, node, labels=on_demand_labels())
    return decided
