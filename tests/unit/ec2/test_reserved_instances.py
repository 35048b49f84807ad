"""A DescribeInstances answer read as Karpenter reads it: reserved only when the instance was
launched targeted at its reservation (an instance that found room in an open ODCR is on-demand)."""

from __future__ import annotations

from typing import Any

from activities.ec2.instances import Instance


def raw(**extra: Any) -> dict[str, Any]:
    return {
        "InstanceId": "i-1",
        "InstanceType": "m5.large",
        "Placement": {"AvailabilityZone": "us-east-1a"},
        "State": {"Name": "running"},
        **extra,
    }


TARGETED = {"CapacityReservationPreference": "capacity-reservations-only"}


def test_targeted_into_a_reservation_is_reserved() -> None:
    inst = Instance.from_api(
        raw(CapacityReservationId="cr-1", CapacityReservationSpecification=TARGETED)
    )
    assert (inst.capacity_type, inst.capacity_reservation_id) == ("reserved", "cr-1")
    assert inst.capacity_reservation_type == "default"


def test_a_capacity_block_instance_says_so() -> None:
    inst = Instance.from_api(
        raw(
            CapacityReservationId="cr-2",
            CapacityReservationSpecification=TARGETED,
            InstanceLifecycle="capacity-block",
        )
    )
    assert inst.capacity_reservation_type == "capacity-block"


def test_an_open_odcr_or_none_is_on_demand() -> None:
    opened = raw(
        CapacityReservationId="cr-3",
        CapacityReservationSpecification={"CapacityReservationPreference": "open"},
    )
    for answer in (opened, raw(), raw(CapacityReservationSpecification=TARGETED)):
        inst = Instance.from_api(answer)
        assert (inst.capacity_type, inst.capacity_reservation_id) == ("on-demand", "")
    assert Instance.from_api(raw(InstanceLifecycle="spot")).capacity_type == "spot"
