"""``topology.k8s.aws/zone-id`` and ``karpenter.k8s.aws/instance-tenancy`` as instance-type
requirements, as Karpenter's AWS provider states them: a pod or a NodePool may require a
zone id (planned, and launched into that zone) or the shared tenancy; a pod requiring
dedicated tenancy (which Joinery cannot launch) finds no type.

The zone ids are checked against EC2's own DescribeAvailabilityZones, not the catalog.
"""

from __future__ import annotations

from typing import Any

import pytest

from activities.ec2.launch_types import LaunchRequest
from models.catalog import dump_catalog
from tests.support.manifests import nodepool, pod, req
from tests.support.plans import claim_of, plan, requirement, unschedulable

ZONE_ID = "topology.k8s.aws/zone-id"
TENANCY = "karpenter.k8s.aws/instance-tenancy"


def _zone_ids(env: Any) -> dict[str, str]:
    zones = env.clients.ec2.describe_availability_zones()["AvailabilityZones"]
    return {z["ZoneName"]: z["ZoneId"] for z in zones}


def test_each_type_states_its_zones_ids_and_the_shared_tenancy(
    env: Any, make_nodeclass: Any
) -> None:
    ids = _zone_ids(env)
    types = env.provider.instance_types(make_nodeclass.build())
    assert types
    for it in types:
        zone_ids = it.requirements.get(ZONE_ID)
        assert zone_ids is not None and zone_ids.operator == "In", it.name
        assert set(zone_ids.values) == {ids[o.zone] for o in it.offerings}, it.name
        tenancy = it.requirements.get(TENANCY)
        assert tenancy is not None and set(tenancy.values) == {"default"}


def _launch_claim(env: Any, nc: Any, claim: dict[str, Any], name: str) -> Any:
    launch = LaunchRequest(
        nodeclaim_name=name,
        nodeclaim_uid=f"uid-{name}",
        nodepool_name="default",
        nodeclass_name=nc.name,
        requirements=claim["requirements"],
        resources={"cpu": "1"},
    )
    return env.provider.launch(launch, nc)


@pytest.mark.parametrize("where", ["pod", "pool"])
def test_a_zone_id_required_is_planned_and_launched_in_its_zone(
    env: Any, make_nodeclass: Any, where: str
) -> None:
    ids = _zone_ids(env)
    nc = make_nodeclass.build()
    doc = dump_catalog(env.provider.instance_types(nc))
    zone = sorted(env.seeded.network.subnets)[-1]  # not the first: no launch lands there by chance
    wanted = ids[zone]
    if where == "pod":
        docs = [nodepool(), pod("p", node_selector={ZONE_ID: wanted})]
    else:
        docs = [nodepool(requirements=[req(ZONE_ID, "In", wanted)]), pod("p")]
    out = plan(docs, doc)
    claim = claim_of(out, "default/p")
    assert requirement(claim, ZONE_ID) == {"key": ZONE_ID, "operator": "In", "values": [wanted]}
    result = _launch_claim(env, nc, claim, f"claim-{where}")
    assert result.zone == zone
    assert result.labels[ZONE_ID] == wanted


def test_tenancy_default_is_planned_and_dedicated_finds_no_type(
    env: Any, make_nodeclass: Any
) -> None:
    doc = dump_catalog(env.provider.instance_types(make_nodeclass.build()))
    docs = [
        nodepool(),
        pod("shared", node_selector={TENANCY: "default"}),
        pod("dedicated", node_selector={TENANCY: "dedicated"}),
    ]
    out = plan(docs, doc)
    assert unschedulable(out) == ["default/dedicated"]
    assert requirement(claim_of(out, "default/shared"), TENANCY) is not None
