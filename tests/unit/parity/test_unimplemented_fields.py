"""Which fields Joinery refuses (``models.unimplemented``), and the ``ValidationSucceeded``
condition the status reports write for them: one test per field, so the parity table
(docs/parity.md) can name the test that shows each refusal."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.status import nodepools as nodepool_status
from activities.status import reporting
from models import unimplemented
from tests.support.manifests import nodepool_body
from tests.support.plan_cli import nodeclass

ROOT = Path(__file__).resolve().parents[3]


def _class_with(**spec: Any) -> dict[str, Any]:
    body = nodeclass("c", None)
    body["spec"].update(spec)
    return body


def _refused(body: dict[str, Any]) -> list[str]:
    return [f.path for f in unimplemented.nodeclass_fields(body)]


def _condition(found: list[unimplemented.Unimplemented]) -> tuple[str, str, str]:
    c = reporting.refusal(found)
    return c.status, c.reason, c.message


def _assert_refused(body: dict[str, Any], path: str) -> None:
    """Exactly ``path`` is refused, and the condition names it."""
    found = unimplemented.nodeclass_fields(body)
    assert [f.path for f in found] == [path]
    status, reason, message = _condition(found)
    assert (status, reason) == ("False", "UnsupportedField")
    assert message.startswith(f"{path}: ") and "not implemented" in message


def test_network_interfaces_are_refused() -> None:
    efa = [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
    ]
    _assert_refused(_class_with(networkInterfaces=efa), "spec.networkInterfaces")


@pytest.mark.parametrize(
    "spec",
    [
        {"placementGroupSelector": {"id": "pg-0123abcd"}},
        {"capacityReservationSelectorTerms": [{"id": "cr-0123456789abcdef0"}]},
        {"cpuOptions": {"nestedVirtualization": "enabled"}},
        {"connectionTracking": {"udpTimeout": 30}},
        {"ipPrefixCount": 1},
        {
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvdb",
                    "ebs": {"snapshotID": "snap-1", "volumeInitializationRate": 300},
                }
            ]
        },
    ],
)
def test_fields_joinery_acts_on_are_not_refused(spec: dict[str, Any]) -> None:
    """Acted on since issue 29 (tests/component/ec2/test_ec2_userdata.py and
    test_ec2_catalog.py show how)."""
    assert _refused(_class_with(**spec)) == []


def test_every_refused_field_is_named_in_one_condition() -> None:
    body = _class_with(
        networkInterfaces=[{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}],
        ipPrefixCount=4,
        capacityReservationSelectorTerms=[{"id": "cr-0123456789abcdef0"}],
    )
    found = unimplemented.nodeclass_fields(body)
    # only the field still refused; the others are acted on
    assert [f.path for f in found] == ["spec.networkInterfaces"]
    message = _condition(found)[2]
    assert message.count("; ") == 0 and all(f.path in message for f in found)


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"capacityReservationSelectorTerms": []},
        {"networkInterfaces": []},
        {"cpuOptions": {}},
        {"placementGroupSelector": None},
        {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50Gi"}}]},
    ],
)
def test_fields_asking_for_nothing_are_not_refused(spec: dict[str, Any]) -> None:
    body = _class_with(**spec)
    assert _refused(body) == []
    assert _condition([])[:2] == ("True", "ValidationSucceeded")


def test_static_nodepools_are_refused() -> None:
    """``replicas``, even 0: it asks for a static pool, not a dynamic one."""
    for replicas in (3, 0):
        body = nodepool_body("static", requirements=[])
        body["spec"]["replicas"] = replicas
        c = nodepool_status.validation(body)
        assert (c.type, c.status, c.reason) == ("ValidationSucceeded", "False", "UnsupportedField")
        assert c.message.startswith("spec.replicas: static NodePools")
    dynamic = nodepool_status.validation(nodepool_body("dynamic", requirements=[]))
    assert (dynamic.status, dynamic.reason) == ("True", "ValidationSucceeded")


def test_an_invalid_nodepool_still_says_invalid_first() -> None:
    """A pool that is both invalid and static names the invalid field (fix that first)."""
    body = nodepool_body("both", requirements=[{"key": "kubernetes.io/team", "operator": "Exists"}])
    body["spec"]["replicas"] = 1
    c = nodepool_status.validation(body)
    assert (c.status, c.reason) == ("False", "Invalid")


def test_the_examples_ask_for_nothing_refused() -> None:
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict):
                continue
            assert unimplemented.nodepool_fields(copy.deepcopy(doc)) == [], path
            assert unimplemented.nodeclass_fields(doc) == [], path
