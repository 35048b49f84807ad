"""Re-stamping claims another tool or version stamped (``activities.status.claims``), against
the real control plane: the NodePool hash and the EC2NodeClass hash in one write, only where
the claim does not carry Joinery's version, so a hash Karpenter wrote is replaced, never read
as drift; a claim not launched yet is left for its launch to stamp."""

from __future__ import annotations

import uuid
from typing import Any

from activities.kubernetes import custom_objects, nodeclaims, nodeclasses
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODECLAIM, NODEPOOL
from activities.status import claims as claim_status
from models import aksnodeclass_hash as aks_hash
from models import ec2nodeclass_hash as class_hash
from models import karpenter_hash
from models import nodepool_hash as pool_hash
from models.aksnodeclass import AKSNodeClass
from models.ec2nodeclass import EC2NodeClass
from models.nodepool import NodePool
from tests.support.kube_objects import ensure_nodeclass, ensure_nodepool, nodeclaim

# The pool hash is filled in with Karpenter's hash of the claim's pool (``_claim``).
KARPENTER = {
    pool_hash.HASH_ANNOTATION: "",
    pool_hash.HASH_VERSION_ANNOTATION: "v3",
    class_hash.HASH_ANNOTATION: "456",
    class_hash.HASH_VERSION_ANNOTATION: "v6",
}


def _claim(admin: Kube, annotations: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A claim of a fresh pool on class ``default``, made with ``annotations``; and its pool."""
    ensure_nodeclass(admin)
    pool = f"stamp-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    stored = custom_objects.get(admin, NODEPOOL, pool)
    body = nodeclaim(f"{pool}-a", pool)
    body["metadata"]["annotations"] = dict(annotations)
    if annotations.get(pool_hash.HASH_ANNOTATION) == "":
        template = stored["spec"]["template"]
        body["metadata"]["annotations"][pool_hash.HASH_ANNOTATION] = karpenter_hash.nodepool_hash(
            template
        )
    return custom_objects.create(admin, NODECLAIM, body), stored


def _annotations(admin: Kube, claim: dict[str, Any]) -> dict[str, str]:
    return dict(nodeclaims.get(admin, claim["metadata"]["name"])["metadata"]["annotations"])


def test_a_claim_karpenter_stamped_gets_both_of_joinerys_hashes_in_one_write(
    admin: Kube,
) -> None:
    claim, pool = _claim(admin, KARPENTER)
    nodeclass = nodeclasses.get(admin, "default")
    assert claim_status.needs_stamp(claim)
    assert claim_status.restamp(admin, claim, pool, nodeclass)
    expected = {
        **pool_hash.hash_annotations(NodePool.model_validate(pool)),
        **class_hash.hash_annotations(EC2NodeClass.model_validate(nodeclass)),
    }
    assert _annotations(admin, claim) == expected
    assert not claim_status.needs_stamp(nodeclaims.get(admin, claim["metadata"]["name"]))


def test_a_launched_claim_without_a_nodeclass_hash_gets_one_an_unlaunched_one_does_not(
    admin: Kube,
) -> None:
    """An older Joinery launched it (its pool hash is Joinery's, no class hash): stamped. A
    claim not launched yet carries none either: its launch stamps it, no write now."""
    ours = {
        pool_hash.HASH_ANNOTATION: "x",
        pool_hash.HASH_VERSION_ANNOTATION: pool_hash.HASH_VERSION,
    }
    claim, pool = _claim(admin, ours)
    nodeclass = nodeclasses.get(admin, "default")
    assert not claim_status.needs_stamp(claim)
    assert not claim_status.restamp(admin, claim, pool, nodeclass)
    launched = {**claim, "status": {"providerID": "aws:///us-east-1a/i-0abc"}}
    assert claim_status.needs_stamp(launched)
    assert claim_status.restamp(admin, launched, pool, nodeclass)
    got = _annotations(admin, claim)
    assert got[pool_hash.HASH_ANNOTATION] == "x"  # Joinery's own pool hash is kept
    stamped = class_hash.hash_annotations(EC2NodeClass.model_validate(nodeclass))
    assert got.items() >= stamped.items()


def test_an_unreadable_or_invalid_nodeclass_leaves_no_hash_to_compare(admin: Kube) -> None:
    claim, pool = _claim(admin, KARPENTER)
    # not known now: the pool is stamped, the class is left for the claim's next event
    assert claim_status.restamp(admin, claim, pool, None)
    got = _annotations(admin, claim)
    assert got[class_hash.HASH_VERSION_ANNOTATION] == "v6"
    # a class that does not validate: its version alone, Karpenter's hash removed
    claim = nodeclaims.get(admin, claim["metadata"]["name"])
    invalid = {"metadata": {"name": "default"}, "spec": {"role": "r"}}
    assert claim_status.restamp(admin, claim, pool, invalid)
    got = _annotations(admin, claim)
    assert got[class_hash.HASH_VERSION_ANNOTATION] == class_hash.HASH_VERSION
    assert class_hash.HASH_ANNOTATION not in got


def test_an_older_joinery_hash_is_restamped_unless_the_claim_is_already_drifted(
    admin: Kube,
) -> None:
    """A hash version bump (``joinery-1`` hashed neither ``expireAfter`` nor
    ``terminationGracePeriod``) re-stamps claims instead of drifting them all; one already
    Drifted keeps its old hash, so it stays drifted, as Karpenter's hash controller does."""
    older = {pool_hash.HASH_ANNOTATION: "old", pool_hash.HASH_VERSION_ANNOTATION: "joinery-1"}
    claim, pool = _claim(admin, older)
    assert claim_status.restamp(admin, claim, pool)
    assert _annotations(admin, claim) == pool_hash.hash_annotations(NodePool.model_validate(pool))

    claim, pool = _claim(admin, older)
    drifted = {
        **claim,
        "status": {"conditions": [{"type": "Drifted", "status": "True", "reason": "x"}]},
    }
    assert claim_status.restamp(admin, drifted, pool)
    got = _annotations(admin, claim)
    assert got[pool_hash.HASH_ANNOTATION] == "old"
    assert got[pool_hash.HASH_VERSION_ANNOTATION] == pool_hash.HASH_VERSION


def test_a_claim_karpenter_launched_from_an_older_template_is_stamped_as_drifted(
    admin: Kube,
) -> None:
    """Karpenter's v3 hash no longer matches the pool (its template changed while Karpenter
    was gone): Karpenter would call it drifted, and so does Joinery's stamp."""
    claim, pool = _claim(admin, {**KARPENTER, pool_hash.HASH_ANNOTATION: "1234567890"})
    assert claim_status.karpenter_drifted(claim, pool)
    assert claim_status.restamp(admin, claim, pool, nodeclasses.get(admin, "default"))
    got = _annotations(admin, claim)
    assert got[pool_hash.HASH_VERSION_ANNOTATION] == pool_hash.HASH_VERSION
    assert got[pool_hash.HASH_ANNOTATION] == claim_status.KARPENTER_DRIFTED
    assert got[pool_hash.HASH_ANNOTATION] != pool_hash.template_hash(NodePool.model_validate(pool))


def test_an_older_karpenter_hash_version_is_never_read_as_drift(admin: Kube) -> None:
    claim, pool = _claim(admin, {**KARPENTER, pool_hash.HASH_VERSION_ANNOTATION: "v2"})
    assert not claim_status.karpenter_drifted(claim, pool)


def test_a_claim_karpenter_azure_stamped_gets_joinerys_aksnodeclass_hash(admin: Kube) -> None:
    """Karpenter Azure's ``v3`` AKSNodeClass hash is replaced by Joinery's, and no EC2NodeClass
    annotation is written on an Azure claim."""
    karpenter_azure = {
        pool_hash.HASH_ANNOTATION: "",
        pool_hash.HASH_VERSION_ANNOTATION: "v3",
        aks_hash.HASH_ANNOTATION: "1234567890",
        aks_hash.HASH_VERSION_ANNOTATION: "v3",
    }
    claim, pool = _claim(admin, karpenter_azure)
    aks = {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": {"imageFamily": "AzureLinux", "osDiskSizeGB": 64},
    }
    assert claim_status.needs_stamp(claim)
    assert claim_status.restamp(admin, claim, pool, aks)
    expected = {
        **pool_hash.hash_annotations(NodePool.model_validate(pool)),
        **aks_hash.hash_annotations(AKSNodeClass.model_validate(aks)),
    }
    assert _annotations(admin, claim) == expected
    assert not claim_status.needs_stamp(nodeclaims.get(admin, claim["metadata"]["name"]))
