"""AKSNodeClasses among ``joinery plan`` inputs: read, validated, and one provider per cluster.

An AKSNodeClass (``karpenter.azure.com``) shapes its pools' catalog as an EC2NodeClass does
(image family, OS disk, max pods, security and GPU filters: ``activities.azure.params``), so
the command takes them out of the planner's documents and validates each with the model the
worker uses. A bad field is one line naming the document and the field; a class setting a
field Joinery does not implement yet would not be Ready in a cluster (its ``ValidationSucceeded``
condition is False), so no pool could launch from it: the command refuses it the same way
rather than plan nodes the worker would never make. EC2 and AKS node classes in one input
are refused too: a cluster has one provider.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from models.errors import field_error
from scheduling.inputs import Document
from worker.plan_inputs.plan_catalogs import AKS_KIND
from worker.plan_inputs.plan_catalogs import NODECLASS_GROUP as EC2_GROUP
from worker.plan_inputs.plan_catalogs import NODECLASS_KIND as EC2_KIND
from worker.usage import UsageError

if TYPE_CHECKING:
    from models.aksnodeclass import AKSNodeClass

# The model (models.aksnodeclass) is imported only when a class is read: plans without one
# do not pay for it. The inputs are split in one pass by ``plan_catalogs.split_inputs``.
GROUP = "karpenter.azure.com"
KIND = AKS_KIND
AWS, AZURE = "aws", "azure"
# nodeClassRef (group, kind) → the provider it belongs to.
PROVIDER_OF_REF = {(EC2_GROUP.rstrip("/"), EC2_KIND): AWS, (GROUP, KIND): AZURE}


def is_aks(body: Mapping[str, Any]) -> bool:
    return body.get("kind") == KIND and str(body.get("apiVersion", "")).startswith(f"{GROUP}/")


def parse(d: Document) -> AKSNodeClass:
    """The document as the model, or one line naming the field that is wrong or not
    implemented."""
    from models.aksnodeclass import AKSNodeClass, validation_condition

    try:
        nodeclass = AKSNodeClass.model_validate(d.body)
    except ValidationError as exc:
        raise UsageError(f"{d.label()}: {field_error(exc)}") from None
    condition = validation_condition(nodeclass.spec)
    if condition.status != "True":
        raise UsageError(
            f"{d.label()}: {condition.message} (the class would not be Ready: "
            f"{condition.type} {condition.reason})"
        )
    return nodeclass


def parse_all(classes: Mapping[str, Document]) -> dict[str, AKSNodeClass]:
    return {name: parse(d) for name, d in classes.items()}


def _pool_refs(pools: Sequence[Document]) -> list[tuple[Document, str]]:
    """(NodePool document, provider) for every pool whose nodeClassRef names a provider's
    class (other refs, and malformed pools, are the planner's to judge)."""
    out = []
    for d in pools:
        node: Any = d.body
        for key in ("spec", "template", "spec", "nodeClassRef"):
            node = node.get(key) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping):
            continue
        provider = PROVIDER_OF_REF.get((str(node.get("group", "")), str(node.get("kind", ""))))
        if provider is not None:
            out.append((d, provider))
    return out


def cluster_provider(
    pools: Sequence[Document],
    ec2_classes: Mapping[str, Document],
    aks_classes: Mapping[str, Document],
    asked: str | None = None,
) -> str | None:
    """The one provider the inputs belong to (``asked``, from ``--provider``, when given), or
    None when nothing says. Inputs of both providers are refused, naming one of each."""
    seen: dict[str, str] = {}
    for d, provider in _pool_refs(pools):
        seen.setdefault(provider, d.label())
    for provider, classes in ((AWS, ec2_classes), (AZURE, aks_classes)):
        for d in classes.values():
            seen.setdefault(provider, d.label())
    if len(seen) > 1:
        raise UsageError(
            f"inputs mix providers: {seen[AWS]} is AWS, {seen[AZURE]} is Azure "
            "(one provider per cluster: plan them separately)"
        )
    found = next(iter(seen), None)
    if asked is not None and found is not None and found != asked:
        raise UsageError(f"{seen[found]}: belongs to {found}, not to --provider {asked}")
    return asked or found
