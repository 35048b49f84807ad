"""Drift from the EC2NodeClass (the AWS provider's reasons): a newer AMI, other subnets or
security groups, static fields changed since launch; and no verdict where a fact is missing,
nor ever from a hash Karpenter wrote."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from models import labels as L
from models.catalog import load_catalog
from models.ec2nodeclass import EC2NodeClass
from models.ec2nodeclass_hash import (
    HASH_ANNOTATION,
    HASH_VERSION,
    HASH_VERSION_ANNOTATION,
    hash_annotations,
    nodeclass_hash,
)
from scheduling.disruption.claim_conditions import Wanted, desired
from scheduling.disruption.prepare import RoundInputs, prepare_round
from scheduling.inputs import Document, InputError
from tests.support.catalogs import catalog
from tests.support.disruption import NOW, claim_for, managed, pool
from tests.support.labels import ARCH, CAPACITY_TYPE
from tests.support.manifests import req

AMD, ARM = "amd64", "arm64"


def ami(ami_id: str, arch: str, *extra: Mapping[str, Any]) -> dict[str, Any]:
    """A ``status.amis`` entry as the resolver writes it."""
    return {
        "id": ami_id,
        "name": f"image {ami_id}",
        "requirements": [req(ARCH, "In", arch), *extra],
    }


def nodeclass(
    name: str = "x",
    *,
    amis: Sequence[Mapping[str, Any]] | None = None,
    subnets: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An EC2NodeClass as ``kubectl get -o yaml`` shows it (the pools' ``nodeClassRef`` is
    ``x``); ``None`` lists are left out of its status."""
    body: dict[str, Any] = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            **spec,
        },
        "status": {},
    }
    if amis is not None:
        body["status"]["amis"] = [dict(a) for a in amis]
    if subnets is not None:
        body["status"]["subnets"] = [{"id": s, "zone": "us-east-1a"} for s in subnets]
    if groups is not None:
        body["status"]["securityGroups"] = [{"id": g, "name": g} for g in groups]
    return body


def node(
    name: str = "a",
    instance_type: str = "m5.xlarge",
    *,
    image: str | None = "ami-new",
    annotations: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """A managed node and its claim (launched from ``image``, with ``annotations``)."""
    n = managed(name, instance_type)
    c = claim_for(n, annotations=annotations)
    if image is not None:
        c["status"]["imageID"] = image
    return [n, c]


GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"


def ec2_like_catalog() -> dict[str, Any]:
    """The test catalog with every type stating the GPU count it lacks as DoesNotExist, as
    the EC2 catalog states each AWS label a type lacks (``activities.ec2.type_labels``)."""
    doc = catalog()
    for entry in doc["instanceTypes"]:
        entry["requirements"].append(req(GPU_COUNT, "DoesNotExist"))
    return doc


def _inputs(docs: Sequence[Mapping[str, Any]]) -> RoundInputs:
    return prepare_round(
        [Document(copy.deepcopy(dict(d)), f"doc {n}") for n, d in enumerate(docs)],
        load_catalog(ec2_like_catalog()),
        NOW,
    )


def drift(*docs: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, str | None]:
    flat: list[Mapping[str, Any]] = []
    for d in docs:
        flat.extend(d if isinstance(d, list) else [d])  # type: ignore[list-item]
    return {c.node.name: c.drifted for c in _inputs(flat).candidates}


# -- AMIDrift ---------------------------------------------------------------------------------


def test_a_node_on_the_ami_its_type_maps_to_has_not_drifted() -> None:
    nc = nodeclass(amis=[ami("ami-new", AMD), ami("ami-arm", ARM)])
    assert drift(pool(), nc, node(image="ami-new")) == {"a": None}


def test_a_newer_ami_first_in_the_list_drifts_a_node_on_an_older_one_still_listed() -> None:
    """Karpenter's MapToInstanceTypes: the first compatible entry, not any listed one."""
    nc = nodeclass(amis=[ami("ami-new", AMD), ami("ami-old", AMD)])
    got = drift(pool(), nc, node(image="ami-old"))["a"]
    assert got == "AMIDrift: ami-old -> ami-new (EC2NodeClass x's AMI for m5.xlarge)"
    assert drift(pool(), nc, node(image="ami-new"))["a"] is None


def test_each_architecture_maps_to_its_own_ami() -> None:
    nc = nodeclass(amis=[ami("ami-arm", ARM), ami("ami-amd", AMD)])
    docs = [
        *node("amd-ok", "m5.xlarge", image="ami-amd"),
        *node("arm-ok", "m6g.xlarge", image="ami-arm"),
        *node("arm-on-amd", "m6g.xlarge", image="ami-amd"),
        *node("amd-on-arm", "m5.xlarge", image="ami-arm"),
    ]
    got = drift(pool(), nc, docs)
    assert got["amd-ok"] is None and got["arm-ok"] is None
    assert got["arm-on-amd"] == "AMIDrift: ami-amd -> ami-arm (EC2NodeClass x's AMI for m6g.xlarge)"
    assert got["amd-on-arm"] == "AMIDrift: ami-arm -> ami-amd (EC2NodeClass x's AMI for m5.xlarge)"


def test_an_ami_whose_requirements_the_type_lacks_is_passed_over() -> None:
    """A GPU image (requires a GPU count the type does not have) listed first is not the
    m5's: the standard image after it is."""
    gpu = ami("ami-gpu", AMD, req(GPU_COUNT, "Exists"))
    nc = nodeclass(amis=[gpu, ami("ami-std", AMD)])
    assert drift(pool(), nc, node(image="ami-std"))["a"] is None
    assert drift(pool(), nc, node(image="ami-gpu"))["a"] == (
        "AMIDrift: ami-gpu -> ami-std (EC2NodeClass x's AMI for m5.xlarge)"
    )


def test_no_ami_left_for_the_type_drifts_it() -> None:
    nc = nodeclass(amis=[ami("ami-arm", ARM)])
    assert drift(pool(), nc, node(image="ami-amd"))["a"] == (
        "AMIDrift: no AMI of EC2NodeClass x suits m5.xlarge now (has ami-amd)"
    )


def test_no_ami_verdict_without_an_image_id_amis_or_the_nodeclass() -> None:
    moved_on = nodeclass(amis=[ami("ami-newer", AMD)])
    assert drift(pool(), moved_on, node(image=None))["a"] is None
    assert drift(pool(), nodeclass(amis=[]), node(image="ami-old"))["a"] is None
    assert drift(pool(), nodeclass(), node(image="ami-old"))["a"] is None
    assert drift(pool(), node(image="ami-old"))["a"] is None  # no EC2NodeClass in the inputs
    # a pool on another class is not judged by this one
    assert drift(pool(), nodeclass("other", amis=[ami("ami-newer", AMD)]), node())["a"] is None


# -- SubnetDrift, SecurityGroupDrift -----------------------------------------------------------

LAUNCHED = {
    L.SUBNET_ID_ANNOTATION: "subnet-a",
    L.SECURITY_GROUP_IDS_ANNOTATION: "sg-1,sg-2",
}


def placed(**status: Any) -> str | None:
    nc = nodeclass(amis=[ami("ami-new", AMD)], **status)
    return drift(pool(), nc, node(annotations=LAUNCHED))["a"]


def test_a_subnet_no_longer_resolved_drifts_the_node() -> None:
    assert placed(subnets=["subnet-a", "subnet-b"], groups=["sg-2", "sg-1"]) is None
    assert placed(subnets=["subnet-b", "subnet-c"], groups=["sg-1", "sg-2"]) == (
        "SubnetDrift: subnet-a is not among EC2NodeClass x's subnets (subnet-b, subnet-c)"
    )


def test_security_groups_other_than_the_resolved_set_drift_the_node() -> None:
    assert placed(subnets=["subnet-a"], groups=["sg-1"]) == (
        "SecurityGroupDrift: launched with sg-1, sg-2, EC2NodeClass x now has sg-1"
    )
    # a group added is drift too: the set must be equal
    assert (placed(subnets=["subnet-a"], groups=["sg-1", "sg-2", "sg-3"]) or "").startswith(
        "SecurityGroupDrift"
    )


def test_no_subnet_or_group_verdict_without_the_launch_annotations_or_a_resolved_list() -> None:
    assert placed(subnets=[], groups=[]) is None
    assert placed() is None
    nc = nodeclass(amis=[ami("ami-new", AMD)], subnets=["subnet-b"], groups=["sg-9"])
    # a claim Karpenter (or an older Joinery) launched carries neither annotation
    assert drift(pool(), nc, node())["a"] is None


# -- NodeClassDrift ---------------------------------------------------------------------------


def stamped(body: Mapping[str, Any]) -> dict[str, str]:
    return hash_annotations(EC2NodeClass.model_validate(body))


def test_static_fields_changed_since_launch_drift_claims_joinery_stamped() -> None:
    before = nodeclass(amis=[ami("ami-new", AMD)], tags={"team": "a"})
    after = nodeclass(amis=[ami("ami-new", AMD)], tags={"team": "b"})
    launched = node(annotations=stamped(before))
    assert drift(pool(), before, launched)["a"] is None
    assert drift(pool(), after, launched)["a"] == (
        "NodeClassDrift: EC2NodeClass x's static fields changed since launch"
    )


def test_a_hash_karpenter_or_another_version_wrote_is_never_drift() -> None:
    after = nodeclass(amis=[ami("ami-new", AMD)], userData="echo changed")
    for version in ("v6", "v5", "joinery-0", ""):
        karpenter = {HASH_ANNOTATION: "1234567890", HASH_VERSION_ANNOTATION: version}
        assert drift(pool(), after, node(annotations=karpenter))["a"] is None
    assert drift(pool(), after, node(annotations={HASH_ANNOTATION: "1"}))["a"] is None


def test_the_selector_terms_are_not_static_fields() -> None:
    before = nodeclass(amis=[ami("ami-new", AMD)])
    after = nodeclass(
        amis=[ami("ami-new", AMD)],
        amiSelectorTerms=[{"alias": "al2023@v20250101"}],
        subnetSelectorTerms=[{"id": "subnet-a"}],
        securityGroupSelectorTerms=[{"id": "sg-1"}],
        capacityReservationSelectorTerms=[{"id": "cr-1"}],
    )
    assert drift(pool(), after, node(annotations=stamped(before)))["a"] is None


def test_the_static_check_comes_first_as_in_karpenter() -> None:
    before = nodeclass(amis=[ami("ami-new", AMD)], tags={"team": "a"})
    after = nodeclass(amis=[ami("ami-newer", AMD)], tags={"team": "b"})
    got = drift(pool(), after, node(image="ami-new", annotations=stamped(before)))["a"] or ""
    assert got.startswith("NodeClassDrift")
    # the pool's own reasons come before the class's
    spot_only = pool(requirements=[req(CAPACITY_TYPE, "In", "spot")])
    assert (drift(spot_only, after, node(image="ami-new"))["a"] or "").startswith(
        "RequirementsDrifted"
    )


def _hash(**spec: Any) -> str:
    return nodeclass_hash(EC2NodeClass.model_validate(nodeclass(**spec)))


def test_the_hash_ignores_defaults_order_and_the_family_an_alias_implies() -> None:
    plain = _hash()
    assert plain == _hash(amiFamily="AL2023")
    assert plain == _hash(
        metadataOptions={
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        }
    )
    assert plain == _hash(tags={})
    b1 = {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}}
    b2 = {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}
    assert _hash(blockDeviceMappings=[b1, b2]) == _hash(blockDeviceMappings=[b2, b1])
    assert _hash(blockDeviceMappings=[b1]) != plain
    assert _hash(kubelet={"maxPods": 20}) != plain
    assert _hash(amiSelectorTerms=[{"alias": "bottlerocket@latest"}]) != plain


# -- where the verdicts show -------------------------------------------------------------------


def test_the_drifted_condition_carries_the_nodeclass_reason() -> None:
    nc = nodeclass(amis=[ami("ami-new", AMD)])
    got = desired(_inputs([pool(), nc, *node(image="ami-old")]).cluster, NOW)
    assert got["a-claim"]["Drifted"] == Wanted(
        "Drifted", "True", "AMIDrift", "ami-old -> ami-new (EC2NodeClass x's AMI for m5.xlarge)"
    )


def test_a_drifted_node_is_blocked_as_any_other_but_its_condition_still_shows() -> None:
    nc = nodeclass(amis=[ami("ami-new", AMD)])
    body, claim = node(image="ami-old")
    body["metadata"]["annotations"] = {L.DO_NOT_DISRUPT: "true"}
    i = _inputs([pool(), nc, body, claim])
    assert [b.node for b in i.blocked] == ["a"]
    assert (desired(i.cluster, NOW)["a-claim"]["Drifted"] or Wanted("", "", "")).reason == (
        "AMIDrift"
    )


@pytest.mark.parametrize(
    ("status", "field"),
    [
        ({"amis": "ami-1"}, "status.amis: expected a list"),
        ({"amis": [{"name": "no id"}]}, "status.amis[0].id: expected an id"),
        (
            {"amis": [{"id": "ami-1", "requirements": [{"key": ARCH, "operator": "Near"}]}]},
            "status.amis[0].requirements",
        ),
        ({"subnets": [{"zone": "us-east-1a"}]}, "status.subnets[0].id"),
        ({"securityGroups": {"id": "sg-1"}}, "status.securityGroups: expected a list"),
    ],
)
def test_a_malformed_status_is_one_line_naming_the_class_and_field(
    status: dict[str, Any], field: str
) -> None:
    nc = nodeclass()
    nc["status"] = status
    with pytest.raises(InputError) as err:
        _inputs([pool(), nc, *node()])
    assert "EC2NodeClass x" in str(err.value) and field in str(err.value)
    assert "\n" not in str(err.value)


def test_a_version_string_of_joinerys_own() -> None:
    assert HASH_VERSION.startswith("joinery-")


# -- CapacityReservationDrift -------------------------------------------------------------------

RESERVED_POOL = [req(CAPACITY_TYPE, "In", "reserved", "on-demand")]


def reserved_node(reservation: str = "cr-1", capacity_type: str = "reserved") -> list[Any]:
    n = managed("a", capacity_type=capacity_type, labels={L.CAPACITY_RESERVATION_ID: reservation})
    c = claim_for(n)
    c["status"]["imageID"] = "ami-new"
    return [n, c]


def reserved_class(*ids: str) -> dict[str, Any]:
    nc = nodeclass(amis=[ami("ami-new", AMD)])
    nc["status"]["capacityReservations"] = [
        {"id": i, "instanceType": "m5.xlarge", "availabilityZone": "us-east-1a"} for i in ids
    ]
    return nc


def test_a_reservation_that_left_the_selector_drifts_its_node() -> None:
    assert (
        drift(pool(requirements=RESERVED_POOL), reserved_class("cr-1"), reserved_node())["a"]
        is None
    )
    assert drift(pool(requirements=RESERVED_POOL), reserved_class("cr-2"), reserved_node())[
        "a"
    ] == ("CapacityReservationDrift: cr-1 is not among EC2NodeClass x's capacity reservations")


def test_a_node_fallen_back_to_on_demand_does_not_drift_for_its_old_reservation() -> None:
    """When an ODCR ends its nodes become on-demand (the capacity-type label flips); Karpenter
    judges the instance's reservation, which it no longer has."""
    fallen = reserved_node(capacity_type="on-demand")
    assert drift(pool(requirements=RESERVED_POOL), reserved_class(), fallen)["a"] is None
