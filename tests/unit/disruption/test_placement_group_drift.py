"""PlacementGroupDrift (Karpenter's AWS provider): a node whose placement group is not the one
its EC2NodeClass's selector resolves to now has drifted; a class whose resolution Joinery has
not published yet gives no verdict."""

from __future__ import annotations

from typing import Any

import pytest

from models import labels as L
from scheduling.inputs import InputError
from tests.support.disruption import pool
from tests.unit.disruption.test_nodeclass_drift import drift, node, nodeclass


def _class(group: str | None) -> dict[str, Any]:
    body = nodeclass()
    if group is not None:
        body["metadata"]["annotations"] = {L.NODECLASS_PLACEMENT_GROUP_ANNOTATION: group}
    return body


def _node(group: str | None) -> list[dict[str, Any]]:
    body, claim = node()
    if group is not None:
        claim["metadata"]["labels"][L.PLACEMENT_GROUP_ID] = group
    return [body, claim]


@pytest.mark.parametrize(
    ("launched", "now", "reason"),
    [
        # the group deleted and made again under its name: a new id
        (
            "pg-old",
            "pg-new",
            "PlacementGroupDrift: launched into pg-old, EC2NodeClass x's placement group "
            "is now pg-new",
        ),
        # the selector removed
        (
            "pg-old",
            "",
            "PlacementGroupDrift: launched into pg-old, EC2NodeClass x's placement group "
            "is now none",
        ),
        # a selector added
        (
            None,
            "pg-new",
            "PlacementGroupDrift: launched into no placement group, EC2NodeClass x's "
            "placement group is now pg-new",
        ),
        ("pg-same", "pg-same", None),
        (None, "", None),
        # not published (an older Joinery resolved the class): no verdict
        ("pg-old", None, None),
    ],
)
def test_a_node_outside_the_classs_placement_group_has_drifted(
    launched: str | None, now: str | None, reason: str | None
) -> None:
    assert drift(pool(), _class(now), _node(launched)) == {"a": reason}


def test_a_malformed_annotation_names_the_class_and_field() -> None:
    body = nodeclass()
    body["metadata"]["annotations"] = {L.NODECLASS_PLACEMENT_GROUP_ANNOTATION: 7}
    with pytest.raises(InputError, match=r"EC2NodeClass.*joinery.dev/placement-group-id"):
        drift(pool(), body, _node(None))
