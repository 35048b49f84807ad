"""What the provider made for launches and nothing uses any more, deleted: on EC2, launch
templates no live instance was launched from and the instance profiles of EC2NodeClasses
that are gone or of roles they no longer name (the provider's ``garbage_collect`` decides,
with its own 5-minute grace for templates and profiles a launch may be about to use); on
Azure, NICs no VM holds (``activities.azure.vms``)."""

from __future__ import annotations

from datetime import datetime

from activities.deps import Deps
from activities.garbage.types import Collected, CollectInput
from activities.kubernetes import nodeclasses


def collect(deps: Deps, inp: CollectInput, now: datetime) -> Collected:
    del inp
    provider = deps.provider()
    items = nodeclasses.list_(deps.kube, provider.nodeclass_kind.resource)[0]
    live = [n["metadata"]["name"] for n in items]
    # each NodeClass's role: the profiles of roles it no longer names go once unused
    roles = {
        n["metadata"]["name"]: str((n.get("spec") or {}).get("role") or "")
        for n in items
        if (n.get("spec") or {}).get("role")
    }
    deleted = provider.garbage_collect(live, now=now, roles=roles)
    return Collected(removed=[name for names in deleted.values() for name in names])
