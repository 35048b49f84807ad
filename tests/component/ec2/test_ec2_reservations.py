"""Capacity reservations: the emulated EC2 behaviour (moto has none), then the provider on it.

Resolution (``capacityReservationSelectorTerms`` → ``status.capacityReservations`` and
``CapacityReservationsReady``), reserved offerings (priced at on-demand / 10,000,000 and
available while the reservation has room), targeted launches (the template names the
reservation, capacity blocks their market type), and a full reservation falling back to
on-demand.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from activities.ec2.capacity_reservations import ACTIVE, EXPIRING
from activities.ec2.errors import InsufficientCapacity
from activities.ec2.reserved_offerings import RESERVED_PRICE_DIVISOR
from tests.support.ec2_launches import instances, lt_data

ZONE = "us-east-1a"
RESERVED = "reserved"
RESERVED_OR_ON_DEMAND = {
    "key": "karpenter.sh/capacity-type",
    "operator": "In",
    "values": ["reserved", "on-demand"],
}
M5_LARGE = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}


def _claim(make_request: Any, name: str, *capacity: str) -> Any:
    values = list(capacity) or ["reserved", "on-demand"]
    return make_request.build(
        name,
        requirements=[
            M5_LARGE,
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": values},
        ],
    )


def _odcr(env: Any, count: int = 2, **tags: str) -> str:
    answer = env.clients.ec2.create_capacity_reservation(
        InstanceType="m5.large",
        InstancePlatform="Linux/UNIX",
        AvailabilityZone=ZONE,
        InstanceCount=count,
        InstanceMatchCriteria="targeted",
        TagSpecifications=[
            {
                "ResourceType": "capacity-reservation",
                "Tags": [{"Key": k, "Value": v} for k, v in (tags or {"team": "ml"}).items()],
            }
        ],
    )
    return str(answer["CapacityReservation"]["CapacityReservationId"])


# -- the emulated gap --------------------------------------------------------------------------
def test_emulated_describe_selects_by_id_tags_and_criteria(env: Any) -> None:
    ml = _odcr(env, team="ml")
    _odcr(env, team="web")
    ec2 = env.clients.ec2
    by_id = ec2.describe_capacity_reservations(CapacityReservationIds=[ml])
    assert [r["CapacityReservationId"] for r in by_id["CapacityReservations"]] == [ml]
    tagged = ec2.describe_capacity_reservations(
        Filters=[{"Name": "tag:team", "Values": ["ml"]}, {"Name": "state", "Values": ["active"]}]
    )["CapacityReservations"]
    assert [r["CapacityReservationId"] for r in tagged] == [ml]
    assert tagged[0]["AvailableInstanceCount"] == 2
    open_ones = ec2.describe_capacity_reservations(
        Filters=[{"Name": "instance-match-criteria", "Values": ["open"]}]
    )["CapacityReservations"]
    assert open_ones == []
    with pytest.raises(ClientError, match=r"InvalidCapacityReservationId\.NotFound"):
        ec2.describe_capacity_reservations(CapacityReservationIds=["cr-0000000000000dead"])


def test_emulated_targeted_launches_count_against_the_reservation(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    rid = _odcr(env, count=1)
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    first = env.provider.launch(_claim(make_request, "r-1", RESERVED), nc)
    left = env.clients.ec2.describe_capacity_reservations(CapacityReservationIds=[rid])
    assert left["CapacityReservations"][0]["AvailableInstanceCount"] == 0
    env.provider.delete(first.instance_id)  # a terminated instance gives its place back
    again = env.clients.ec2.describe_capacity_reservations(CapacityReservationIds=[rid])
    assert again["CapacityReservations"][0]["AvailableInstanceCount"] == 1


def test_emulated_full_reservation_refuses_with_reservation_capacity_exceeded(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    rid = _odcr(env, count=1)
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    env.provider.launch(_claim(make_request, "r-1", RESERVED), nc)
    env.provider.launcher.reservations._counts[rid] = 1  # a stale belief: room left
    with pytest.raises(InsufficientCapacity) as err:
        env.provider.launch(_claim(make_request, "r-2", RESERVED), nc)
    assert err.value.code == "ReservationCapacityExceeded"
    assert env.provider.launcher.reservations.count(rid) == 0  # marked, as Karpenter marks it
    assert len(instances(env)) == 1


def _reserved_template(env: Any) -> str:
    for t in env.clients.ec2.describe_launch_templates()["LaunchTemplates"]:
        data = lt_data(env, t["LaunchTemplateName"])
        if "CapacityReservationSpecification" in data:
            return str(t["LaunchTemplateName"])
    raise AssertionError("no template targets a reservation")


# -- resolution and status ---------------------------------------------------------------------
def test_selector_terms_resolve_to_status_and_condition(env: Any, make_nodeclass: Any) -> None:
    ml = _odcr(env, team="ml")
    _odcr(env, team="web")
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"tags": {"team": "ml"}}])
    status = env.provider.resolve_nodeclass(nc).status().to_wire()
    assert status["capacityReservations"] == [
        {
            "availabilityZone": ZONE,
            "id": ml,
            "instanceMatchCriteria": "targeted",
            "instanceType": "m5.large",
            "ownerID": "123456789012",
            "reservationType": "default",
            "interruptible": False,
            "state": ACTIVE,
        }
    ]
    ready = {c["type"]: c["status"] for c in status["conditions"]}
    assert ready["CapacityReservationsReady"] == "True" and ready["Ready"] == "True"


def test_no_match_is_ready_with_no_reservations(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"tags": {"team": "none"}}])
    status = env.provider.resolve_nodeclass(nc).status().to_wire()
    assert status.get("capacityReservations", []) == []
    assert any(
        c["type"] == "CapacityReservationsReady" and c["status"] == "True"
        for c in status["conditions"]
    )


def test_capacity_block_near_its_end_is_expiring_and_ended_ones_are_gone(
    env: Any, make_nodeclass: Any
) -> None:
    now = datetime.now(UTC)
    soon = env.emulation.reservations.add(
        "m5.large", ZONE, 2, reservation_type="capacity-block", end=now + timedelta(minutes=30)
    )
    later = env.emulation.reservations.add(
        "m5.large", ZONE, 2, reservation_type="capacity-block", end=now + timedelta(hours=5)
    )
    ended = env.emulation.reservations.add(
        "m5.large", ZONE, 2, reservation_type="capacity-block", end=now - timedelta(minutes=1)
    )
    nc = make_nodeclass.build(
        capacityReservationSelectorTerms=[{"id": soon}, {"id": later}, {"id": ended}]
    )
    found = {r.id: r.state for r in env.provider.resolve_nodeclass(nc).capacity_reservations}
    assert found == {soon: EXPIRING, later: ACTIVE}


def test_selector_terms_validate_as_the_crd_does() -> None:
    from models.ec2nodeclass import CapacityReservationSelectorTerm

    with pytest.raises(ValueError, match="id cannot be combined"):
        CapacityReservationSelectorTerm.model_validate({"id": "cr-1", "tags": {"a": "b"}})
    with pytest.raises(ValueError):
        CapacityReservationSelectorTerm.model_validate({"id": "r-1"})
    with pytest.raises(ValueError, match="at least one"):
        CapacityReservationSelectorTerm.model_validate({"ownerID": "123456789012"})


# -- offerings ---------------------------------------------------------------------------------
def test_reserved_offering_is_priced_as_karpenter_prices_it(env: Any, make_nodeclass: Any) -> None:
    rid = _odcr(env, count=2)
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    m5 = next(t for t in env.provider.instance_types(nc) if t.name == "m5.large")
    od = min(o.price for o in m5.offerings if o.capacity_type == "on-demand")
    reserved = [o for o in m5.offerings if o.capacity_type == RESERVED]
    assert [(o.zone, o.reservation_id, o.available) for o in reserved] == [(ZONE, rid, True)]
    assert reserved[0].price == pytest.approx(od / RESERVED_PRICE_DIVISOR)
    assert m5.requirements.get_or_exists("karpenter.sh/capacity-type").has(RESERVED)
    others = [t for t in env.provider.instance_types(nc) if t.name == "m5.xlarge"]
    assert all(o.capacity_type != RESERVED for t in others for o in t.offerings)


def test_reserved_offering_unavailable_once_full(env: Any, make_nodeclass: Any) -> None:
    rid = _odcr(env, count=1)
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    env.provider.launcher.reservations.mark_launched(rid)  # synced on resolve below
    env.provider.resolve_nodeclass(nc)
    env.provider.launcher.reservations.mark_launched(rid)
    m5 = next(t for t in env.provider.instance_types(nc) if t.name == "m5.large")
    assert [o.available for o in m5.offerings if o.capacity_type == RESERVED] == [False]


# -- launches ----------------------------------------------------------------------------------
def test_reserved_claim_launches_targeted_into_its_reservation(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    rid = _odcr(env, count=2)
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    result = env.provider.launch(_claim(make_request, "r-1"), nc)
    assert (result.capacity_type, result.zone, result.instance_type) == (
        RESERVED,
        ZONE,
        "m5.large",
    )
    assert result.labels["karpenter.sh/capacity-type"] == RESERVED
    assert result.labels["karpenter.k8s.aws/capacity-reservation-id"] == rid
    assert result.labels["karpenter.k8s.aws/capacity-reservation-type"] == "default"
    assert result.labels["karpenter.k8s.aws/capacity-reservation-interruptible"] == "false"
    spec = lt_data(env, _reserved_template(env))["CapacityReservationSpecification"]
    assert spec["CapacityReservationPreference"] == "capacity-reservations-only"
    assert env.emulation.reservations.holding(result.instance_id) == rid
    assert env.provider.launcher.reservations.count(rid) == 1


def test_capacity_block_launch_uses_the_capacity_block_market(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    rid = env.emulation.reservations.add(
        "m5.large",
        ZONE,
        1,
        reservation_type="capacity-block",
        end=datetime.now(UTC) + timedelta(hours=4),
    )
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    result = env.provider.launch(_claim(make_request, "cb-1", RESERVED), nc)
    assert result.labels["karpenter.k8s.aws/capacity-reservation-type"] == "capacity-block"
    assert lt_data(env, _reserved_template(env))["InstanceMarketOptions"] == {
        "MarketType": "capacity-block"
    }


def test_full_reservation_falls_back_to_on_demand_where_the_claim_allows(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    rid = _odcr(env, count=1)
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    env.provider.launch(_claim(make_request, "r-1"), nc)
    # another worker filled it meanwhile: this one still believes there is room
    env.provider.launcher.reservations._counts[rid] = 1
    other = env.provider.launch(_claim(make_request, "r-2"), nc)
    assert other.capacity_type == "on-demand"
    assert "karpenter.k8s.aws/capacity-reservation-id" not in other.labels
    assert env.provider.launcher.reservations.count(rid) == 0
    # the on-demand pool was not marked unavailable by the reservation's refusal
    assert not env.provider.unavailable.is_unavailable("on-demand", "m5.large", ZONE)
    assert len(instances(env)) == 2


def test_the_status_controller_writes_the_reservations_drift_reads(
    env: Any, make_nodeclass: Any
) -> None:
    from activities.status.nodeclasses import desired

    rid = _odcr(env)
    with_terms = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    _, fields = desired(with_terms.model_dump(by_alias=True, exclude_none=True), env.provider)
    assert [r["id"] for r in fields["capacityReservations"]] == [rid]
    gone = make_nodeclass.build(capacityReservationSelectorTerms=[{"tags": {"team": "x"}}])
    _, fields = desired(gone.model_dump(by_alias=True, exclude_none=True), env.provider)
    assert fields["capacityReservations"] == []  # written empty: the old list must go
    _, fields = desired(
        make_nodeclass.build().model_dump(by_alias=True, exclude_none=True), env.provider
    )
    assert "capacityReservations" not in fields


def test_emulated_capacity_block_end_reclaims_its_instances(
    env: Any, make_nodeclass: Any, make_request: Any
) -> None:
    rid = env.emulation.reservations.add(
        "m5.large",
        ZONE,
        1,
        reservation_type="capacity-block",
        end=datetime.now(UTC) + timedelta(hours=1),
    )
    nc = make_nodeclass.build(capacityReservationSelectorTerms=[{"id": rid}])
    launched = env.provider.launch(_claim(make_request, "cb-1", RESERVED), nc)
    from moto.ec2.models import ec2_backends

    backend = ec2_backends["123456789012"]["us-east-1"]
    assert env.emulation.reservations.end(rid, backend) == [launched.instance_id]
    assert instances(env) == []
    found = env.clients.ec2.describe_capacity_reservations(
        Filters=[{"Name": "state", "Values": ["active"]}]
    )["CapacityReservations"]
    assert rid not in {r["CapacityReservationId"] for r in found}
