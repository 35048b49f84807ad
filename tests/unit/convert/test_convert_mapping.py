"""The old-API mapping, field by field, against Karpenter's migration guides.

Each expected value below is written from the guides (v1beta1 and v1 migration,
``karpenter-convert``), not computed by the converter.
"""

from __future__ import annotations

from typing import Any

import pytest

from models.convert import ConversionError, convert_documents

Obj = dict[str, Any]


def provisioner(**spec: Any) -> Obj:
    spec.setdefault("providerRef", {"name": "default"})
    return {
        "apiVersion": "karpenter.sh/v1alpha5",
        "kind": "Provisioner",
        "metadata": {"name": "p"},
        "spec": spec,
    }


def template(**spec: Any) -> Obj:
    spec.setdefault("subnetSelector", {"karpenter.sh/discovery": "demo"})
    spec.setdefault("securityGroupSelector", {"karpenter.sh/discovery": "demo"})
    spec.setdefault("instanceProfile", "profile")
    return {
        "apiVersion": "karpenter.k8s.aws/v1alpha1",
        "kind": "AWSNodeTemplate",
        "metadata": {"name": "default"},
        "spec": spec,
    }


def beta_pool(**spec: Any) -> Obj:
    spec.setdefault("template", {"spec": {"nodeClassRef": {"name": "default"}}})
    return {
        "apiVersion": "karpenter.sh/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": "b"},
        "spec": spec,
    }


def beta_class(**spec: Any) -> Obj:
    spec.setdefault("subnetSelectorTerms", [{"tags": {"a": "b"}}])
    spec.setdefault("securityGroupSelectorTerms", [{"tags": {"a": "b"}}])
    spec.setdefault("role", "node-role")
    return {
        "apiVersion": "karpenter.k8s.aws/v1beta1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": spec,
    }


def one(kind: str, *docs: Obj) -> tuple[Obj, list[str]]:
    result = convert_documents(list(docs))
    (found,) = [d for d in result.documents if d["kind"] == kind]
    return found, result.notes


def pool_spec(*docs: Obj) -> Obj:
    pool, _ = one("NodePool", *docs)
    assert pool["apiVersion"] == "karpenter.sh/v1"
    spec: Obj = pool["spec"]
    return spec


def class_spec(*docs: Obj) -> Obj:
    found, _ = one("EC2NodeClass", *docs)
    assert found["apiVersion"] == "karpenter.k8s.aws/v1"
    spec: Obj = found["spec"]
    return spec


# -- Provisioner -> NodePool --------------------------------------------------------------


def test_ttl_seconds_after_empty_is_when_empty_after_that_long() -> None:
    assert pool_spec(provisioner(ttlSecondsAfterEmpty=30))["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "30s",
    }


def test_consolidation_enabled_is_when_empty_or_underutilized_at_once() -> None:
    assert pool_spec(provisioner(consolidation={"enabled": True}))["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "0s",
    }


def test_neither_emptiness_nor_consolidation_never_consolidates() -> None:
    assert pool_spec(provisioner())["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "Never",
    }


def test_both_emptiness_and_consolidation_keep_consolidation_and_say_so() -> None:
    pool, notes = one(
        "NodePool", provisioner(ttlSecondsAfterEmpty=30, consolidation={"enabled": True})
    )
    assert pool["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert notes == [
        "Provisioner p: spec.ttlSecondsAfterEmpty: set with consolidation.enabled "
        "(Karpenter refused both); consolidation kept"
    ]


@pytest.mark.parametrize(
    ("ttl", "expire"), [(2592000, "720h"), (90, "1m30s"), (3600, "1h"), (0, "0s")]
)
def test_ttl_seconds_until_expired_is_the_templates_expire_after(ttl: int, expire: str) -> None:
    spec = pool_spec(provisioner(ttlSecondsUntilExpired=ttl))
    assert spec["template"]["spec"]["expireAfter"] == expire
    assert "expireAfter" not in spec["disruption"]


def test_no_ttl_seconds_until_expired_never_expires() -> None:
    assert pool_spec(provisioner())["template"]["spec"]["expireAfter"] == "Never"


def test_labels_annotations_taints_move_into_the_template() -> None:
    taint = {"key": "t", "value": "v", "effect": "NoSchedule"}
    startup = {"key": "s", "effect": "NoExecute"}
    spec = pool_spec(
        provisioner(
            labels={"team": "a"}, annotations={"x/y": "z"}, taints=[taint], startupTaints=[startup]
        )
    )
    assert spec["template"]["metadata"] == {"labels": {"team": "a"}, "annotations": {"x/y": "z"}}
    assert spec["template"]["spec"]["taints"] == [taint]
    assert spec["template"]["spec"]["startupTaints"] == [startup]


def test_limits_and_weight_stay_on_top() -> None:
    spec = pool_spec(provisioner(limits={"resources": {"cpu": "100", "memory": "1Ti"}}, weight=7))
    assert spec["limits"] == {"cpu": "100", "memory": "1Ti"}
    assert spec["weight"] == 7


def test_webhook_defaults_are_written_out() -> None:
    reqs = pool_spec(provisioner())["template"]["spec"]["requirements"]
    assert reqs == [
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
    ]


def test_given_requirements_and_labels_suppress_their_defaults() -> None:
    given = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
    ]
    reqs = pool_spec(provisioner(requirements=given, labels={"kubernetes.io/arch": "arm64"}))[
        "template"
    ]["spec"]["requirements"]
    assert reqs == [*given, {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]


def test_provider_ref_becomes_a_v1_node_class_ref() -> None:
    assert pool_spec(provisioner(providerRef={"name": "gpu"}))["template"]["spec"][
        "nodeClassRef"
    ] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "gpu",
    }


def test_inline_provider_becomes_its_own_ec2nodeclass() -> None:
    doc = provisioner(
        provider={
            "apiVersion": "extensions.karpenter.sh/v1alpha1",
            "kind": "AWS",
            "subnetSelector": {"k": "v"},
            "securityGroupSelector": {"k": "v"},
            "amiFamily": "Bottlerocket",
            "tags": {"team": "a"},
        }
    )
    del doc["spec"]["providerRef"]
    result = convert_documents([doc])
    nodeclass, pool = result.documents
    assert nodeclass["kind"] == "EC2NodeClass" and nodeclass["metadata"] == {"name": "p"}
    assert nodeclass["spec"]["amiSelectorTerms"] == [{"alias": "bottlerocket@latest"}]
    assert nodeclass["spec"]["tags"] == {"team": "a"}
    assert pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "p"


def test_kubelet_configuration_moves_to_the_node_class_without_container_runtime() -> None:
    result = convert_documents(
        [
            provisioner(kubeletConfiguration={"maxPods": 20, "containerRuntime": "dockerd"}),
            template(),
        ]
    )
    pool, nodeclass = result.documents
    assert "kubelet" not in pool["spec"]["template"]["spec"]
    assert nodeclass["spec"]["kubelet"] == {"maxPods": 20}
    assert result.notes == [
        "Provisioner p: spec.kubeletConfiguration.containerRuntime: "
        "only containerd remains; dropped"
    ]


def test_pools_sharing_a_class_with_different_kubelets_get_a_copy() -> None:
    a = provisioner(kubeletConfiguration={"maxPods": 110})
    a["metadata"]["name"] = "a"
    b = provisioner(kubeletConfiguration={"maxPods": 29})
    b["metadata"]["name"] = "b"
    result = convert_documents([a, b, template()])
    names = [(d["kind"], d["metadata"]["name"]) for d in result.documents]
    assert names == [
        ("NodePool", "a"),
        ("NodePool", "b"),
        ("EC2NodeClass", "default"),
        ("EC2NodeClass", "default-b"),
    ]
    by_name = {d["metadata"]["name"]: d for d in result.documents}
    assert by_name["default"]["spec"]["kubelet"] == {"maxPods": 110}
    assert by_name["default-b"]["spec"]["kubelet"] == {"maxPods": 29}
    assert by_name["b"]["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "default-b"
    assert by_name["a"]["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "default"
    assert len(result.notes) == 1 and "EC2NodeClass default-b" in result.notes[0]


def test_kubelet_for_a_class_not_in_the_input_is_reported() -> None:
    result = convert_documents([provisioner(kubeletConfiguration={"maxPods": 20})])
    assert result.notes == [
        "Provisioner p: spec.template.spec.kubelet: EC2NodeClass default is not in the input; "
        "add this kubelet block to its spec.kubelet by hand, dropped"
    ]


def test_unknown_and_removed_fields_are_one_note_each() -> None:
    doc = provisioner(
        labels={"karpenter.sh/provisioner-name": "p"},
        requirements=[
            {"key": "karpenter.k8s.aws/instance-pods", "operator": "Gt", "values": ["8"]}
        ],
        futureField=1,
    )
    notes = convert_documents([doc]).notes
    assert notes == [
        "Provisioner p: spec.futureField: no v1 equivalent, dropped",
        "Provisioner p: spec.labels.karpenter.sh/provisioner-name: now karpenter.sh/nodepool, "
        "which a NodePool may not set, dropped",
        "Provisioner p: spec.requirements[0] (karpenter.k8s.aws/instance-pods): "
        "label removed in v1beta1, dropped",
    ]


def test_exported_metadata_is_trimmed() -> None:
    doc = provisioner()
    doc["metadata"].update(
        uid="u",
        resourceVersion="1",
        labels={"a": "b"},
        annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}", "c": "d"},
    )
    doc["status"] = {"resources": {}}
    pool, _ = one("NodePool", doc)
    assert pool["metadata"] == {"name": "p", "labels": {"a": "b"}, "annotations": {"c": "d"}}
    assert "status" not in pool


# -- AWSNodeTemplate -> EC2NodeClass ------------------------------------------------------


def test_selectors_become_terms() -> None:
    spec = class_spec(
        template(
            subnetSelector={"aws-ids": "subnet-1, subnet-2"}, securityGroupSelector={"Name": "sg"}
        )
    )
    assert spec["subnetSelectorTerms"] == [{"id": "subnet-1"}, {"id": "subnet-2"}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"Name": "sg"}}]


def test_ami_selector_names_and_owners_expand_to_terms() -> None:
    spec = class_spec(template(amiSelector={"aws::name": "a,b", "aws::owners": "123,amazon"}))
    assert spec["amiSelectorTerms"] == [
        {"name": "a", "owner": "123"},
        {"name": "b", "owner": "123"},
        {"name": "a", "owner": "amazon"},
        {"name": "b", "owner": "amazon"},
    ]
    assert spec["amiFamily"] == "AL2"  # the v1alpha1 default, needed without an alias


def test_no_ami_selector_is_the_familys_alias() -> None:
    assert class_spec(template())["amiSelectorTerms"] == [{"alias": "al2@latest"}]
    assert class_spec(template(amiFamily="AL2023"))["amiSelectorTerms"] == [
        {"alias": "al2023@latest"}
    ]


def test_ids_with_tags_keep_the_ids_and_say_so() -> None:
    found, notes = one(
        "EC2NodeClass", template(subnetSelector={"aws::ids": "subnet-1", "zone": "a"})
    )
    assert found["spec"]["subnetSelectorTerms"] == [{"id": "subnet-1"}]
    assert notes == [
        "AWSNodeTemplate default: spec.subnetSelector tags ['zone']: cannot be combined with "
        "aws-ids in v1 terms, dropped (the ids are kept)"
    ]


def test_launch_template_is_reported_and_a_role_placeholder_written() -> None:
    doc = template(launchTemplate="lt")
    del doc["spec"]["instanceProfile"]
    found, notes = one("EC2NodeClass", doc)
    assert found["spec"]["role"] == "$KARPENTER_NODE_ROLE"
    assert "launchTemplate" not in found["spec"]
    assert [n.split(": ")[1] for n in notes] == ["spec.launchTemplate", "spec.role"]


def test_role_option_fills_a_missing_role() -> None:
    doc = template()
    del doc["spec"]["instanceProfile"]
    assert convert_documents([doc], role="r").documents[0]["spec"]["role"] == "r"


def test_copied_fields_and_the_beta_hop_limit() -> None:
    bdm = [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3"}}]
    spec = class_spec(
        template(
            userData="echo",
            tags={"t": "1"},
            detailedMonitoring=True,
            context="c",
            blockDeviceMappings=bdm,
        )
    )
    assert (spec["userData"], spec["tags"], spec["detailedMonitoring"], spec["context"]) == (
        "echo",
        {"t": "1"},
        True,
        "c",
    )
    assert spec["blockDeviceMappings"] == bdm
    assert spec["instanceProfile"] == "profile"
    # v1 lowered the default to 1; the old objects ran with 2.
    assert spec["metadataOptions"] == {"httpPutResponseHopLimit": 2}


# -- v1beta1 -> v1 ------------------------------------------------------------------------


def test_beta_pool_moves_expire_after_and_renames_the_policy() -> None:
    spec = pool_spec(
        beta_pool(disruption={"consolidationPolicy": "WhenUnderutilized", "expireAfter": "24h"})
    )
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "0s",
    }
    assert spec["template"]["spec"]["expireAfter"] == "24h"


def test_beta_pool_defaults_are_v1beta1s() -> None:
    spec = pool_spec(beta_pool())
    assert spec["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert spec["template"]["spec"]["expireAfter"] == "720h"
    assert spec["template"]["spec"]["nodeClassRef"] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "default",
    }


def test_beta_pool_keeps_budgets_limits_weight_and_when_empty() -> None:
    budgets = [{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}]
    spec = pool_spec(
        beta_pool(
            disruption={
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "30s",
                "budgets": budgets,
            },
            limits={"cpu": 10},
            weight=3,
        )
    )
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "30s",
        "budgets": budgets,
    }
    assert (spec["limits"], spec["weight"]) == ({"cpu": 10}, 3)


def test_beta_do_not_consolidate_annotation_is_do_not_disrupt() -> None:
    doc = beta_pool(
        template={
            "metadata": {"annotations": {"karpenter.sh/do-not-consolidate": "true"}},
            "spec": {"nodeClassRef": {"name": "default"}},
        }
    )
    assert pool_spec(doc)["template"]["metadata"]["annotations"] == {
        "karpenter.sh/do-not-disrupt": "true"
    }


def test_beta_kubelet_moves_to_the_beta_class() -> None:
    doc = beta_pool(
        template={"spec": {"nodeClassRef": {"name": "default"}, "kubelet": {"podsPerCore": 4}}}
    )
    assert class_spec(doc, beta_class())["kubelet"] == {"podsPerCore": 4}


def test_beta_class_family_becomes_an_alias() -> None:
    spec = class_spec(beta_class(amiFamily="Bottlerocket"))
    assert spec["amiSelectorTerms"] == [{"alias": "bottlerocket@latest"}]
    assert "amiFamily" not in spec


def test_beta_class_ubuntu_is_al2_with_its_root_volume() -> None:
    found, notes = one(
        "EC2NodeClass", beta_class(amiFamily="Ubuntu", amiSelectorTerms=[{"id": "ami-1"}])
    )
    assert found["spec"]["amiFamily"] == "AL2"
    assert found["spec"]["blockDeviceMappings"][0]["deviceName"] == "/dev/sda1"
    assert len(notes) == 1 and "Ubuntu" in notes[0]


def test_beta_class_reserved_tags_are_dropped() -> None:
    found, notes = one("EC2NodeClass", beta_class(tags={"karpenter.sh/nodeclaim": "x", "ok": "1"}))
    assert found["spec"]["tags"] == {"ok": "1"}
    assert notes == [
        "EC2NodeClass default: spec.tags.karpenter.sh/nodeclaim: "
        "v1 reserves this tag for Karpenter, dropped"
    ]


def test_other_documents_pass_through_unchanged() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": []}}
    v1 = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "n"},
        "spec": {"x": 1},
    }
    assert convert_documents([pod, None, v1]).documents == [pod, v1]


# -- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            provisioner(ttlSecondsAfterEmpty="30s"),
            "Provisioner p: spec.ttlSecondsAfterEmpty: expected a non-negative integer",
        ),
        ({**provisioner(), "metadata": {}}, "document 1 (Provisioner): metadata.name: required"),
        ({**provisioner(), "spec": None}, "Provisioner p: spec: required"),
        (provisioner(providerRef=None), "Provisioner p: spec.providerRef: required"),
        (
            provisioner(provider={"subnetSelector": {}}),
            "Provisioner p: spec.provider: set together with spec.providerRef",
        ),
        (provisioner(requirements="x"), "Provisioner p: spec.requirements: expected a list"),
        (
            beta_class(amiFamily="Custom"),
            "EC2NodeClass default: spec.amiFamily: Custom has no v1 AMI alias",
        ),
        (
            template(subnetSelector={}),
            "AWSNodeTemplate default: spec.subnetSelector: required",
        ),
    ],
)
def test_bad_input_is_one_line_naming_object_and_field(doc: Obj, message: str) -> None:
    with pytest.raises(ConversionError) as info:
        convert_documents([doc])
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_a_document_that_is_not_a_mapping_is_bad_input() -> None:
    with pytest.raises(ConversionError, match="document 2: expected a mapping"):
        convert_documents([provisioner(), ["x"]])
