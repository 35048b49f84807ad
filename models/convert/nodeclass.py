"""AWSNodeTemplate (v1alpha1) -> EC2NodeClass (v1beta1) -> EC2NodeClass (v1).

The first step is Karpenter's ``karpenter-convert`` mapping: selector maps become selector
terms (``aws-ids`` / ``aws::ids`` become ``id`` terms, ``aws::name`` and ``aws::owners``
become ``name`` and ``owner``, any other key a tag), an absent ``amiFamily`` is AL2 and
``launchTemplate`` has no successor. The second is the v1 migration guide's: a family with
no AMI selector terms becomes the matching ``alias`` (``AL2`` -> ``al2@latest``), Ubuntu
becomes AL2 with its root volume on ``/dev/sda1``, and the v1beta1 default instance-metadata
hop limit of 2 is written out, since v1 changed that default to 1 and pods that reach IMDS
would lose it without a word.
"""

from __future__ import annotations

from typing import Any

from models.convert.common import Obj, Subject, mapping, sequence

# The node role an AWSNodeTemplate never named (it used the controller's global default
# instance profile): the placeholder ``karpenter-convert`` writes, for ``envsubst``.
ROLE_PLACEHOLDER = "$KARPENTER_NODE_ROLE"

_ALPHA_FIELDS = frozenset(
    {
        "subnetSelector",
        "securityGroupSelector",
        "amiSelector",
        "amiFamily",
        "instanceProfile",
        "userData",
        "tags",
        "metadataOptions",
        "blockDeviceMappings",
        "detailedMonitoring",
        "context",
    }
)
# Keys of an inline ``provider`` block that only said which provider it was.
_PROVIDER_ENVELOPE = frozenset({"apiVersion", "kind"})
_BETA_FIELDS = frozenset(
    {
        "subnetSelectorTerms",
        "securityGroupSelectorTerms",
        "amiSelectorTerms",
        "amiFamily",
        "role",
        "instanceProfile",
        "userData",
        "tags",
        "metadataOptions",
        "blockDeviceMappings",
        "instanceStorePolicy",
        "detailedMonitoring",
        "associatePublicIPAddress",
        "context",
        "kubelet",
    }
)
ALIASES = {
    "AL2": "al2",
    "AL2023": "al2023",
    "Bottlerocket": "bottlerocket",
    "Windows2019": "windows2019",
    "Windows2022": "windows2022",
}
# Tag keys v1 reserves for what Karpenter stamps itself (the CRD refuses them).
_RESERVED_TAGS = (
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
)
_UBUNTU_ROOT_EBS = {"encrypted": True, "volumeType": "gp3", "volumeSize": "20Gi"}
BETA_HOP_LIMIT = 2


def _split(value: Any) -> list[str]:
    return [part.strip() for part in str(value).split(",") if part.strip()]


def _selector_terms(subject: Subject, selector: Obj, path: str) -> list[Obj]:
    """A v1alpha1 subnet or security-group selector map as v1beta1 terms."""
    ids: list[str] = []
    tags: dict[str, str] = {}
    for key, value in selector.items():
        if key in ("aws-ids", "aws::ids"):
            ids = _split(value)
        else:
            tags[str(key)] = str(value)
    if ids and tags:
        # v1 terms hold an id or tags, never both (the alpha selector meant both at once).
        subject.drop(
            f"{path} tags {sorted(tags)}",
            "cannot be combined with aws-ids in v1 terms, dropped (the ids are kept)",
        )
    return [{"id": i} for i in ids] if ids else ([{"tags": tags}] if tags else [])


def _ami_terms(subject: Subject, selector: Obj) -> list[Obj]:
    """A v1alpha1 ``amiSelector`` as v1beta1 terms: one per owner and name, as
    ``karpenter-convert`` expanded them."""
    ids: list[str] = []
    names: list[str] = []
    owners: list[str] = []
    tags: dict[str, str] = {}
    for key, value in selector.items():
        if key in ("aws-ids", "aws::ids"):
            ids = _split(value)
        elif key == "aws::name":
            names = _split(value)
        elif key == "aws::owners":
            owners = _split(value)
        else:
            tags[str(key)] = str(value)
    if ids:
        if names or owners or tags:
            subject.drop(
                "spec.amiSelector (name, owners, tags)",
                "cannot be combined with aws-ids in v1 terms, dropped (the ids are kept)",
            )
        return [{"id": i} for i in ids]
    if not names and not tags:
        if owners:
            subject.drop(
                "spec.amiSelector.aws::owners", "an owner alone selects no AMI in v1, dropped"
            )
        return []
    terms: list[Obj] = []
    for owner in owners or [""]:
        for name in names or [""]:
            term: Obj = {}
            if name:
                term["name"] = name
            if owner:
                term["owner"] = owner
            if tags:
                term["tags"] = dict(tags)
            terms.append(term)
    return terms


def alpha_to_beta(subject: Subject, spec: Obj, *, inline: bool = False) -> Obj:
    """An AWSNodeTemplate's spec (or a Provisioner's inline ``provider``) as a v1beta1
    EC2NodeClass spec."""
    where = "spec.provider" if inline else "spec"
    out: Obj = {}
    for key in spec:
        if key in _ALPHA_FIELDS:
            continue
        if inline and key in _PROVIDER_ENVELOPE:
            continue
        if key == "launchTemplate":
            subject.drop(
                f"{where}.launchTemplate",
                "unmanaged launch templates have no v1 equivalent, dropped",
            )
        else:
            subject.drop(f"{where}.{key}")
    subnets = mapping(subject, spec.get("subnetSelector"), f"{where}.subnetSelector")
    groups = mapping(subject, spec.get("securityGroupSelector"), f"{where}.securityGroupSelector")
    for key, selector in (("subnetSelector", subnets), ("securityGroupSelector", groups)):
        if not selector:
            raise subject.error(f"{where}.{key}", "required: a non-empty selector")
    out["subnetSelectorTerms"] = _selector_terms(subject, subnets, f"{where}.subnetSelector")
    out["securityGroupSelectorTerms"] = _selector_terms(
        subject, groups, f"{where}.securityGroupSelector"
    )
    amis = _ami_terms(subject, mapping(subject, spec.get("amiSelector"), f"{where}.amiSelector"))
    if amis:
        out["amiSelectorTerms"] = amis
    out["amiFamily"] = spec.get("amiFamily") or "AL2"
    for key in (
        "instanceProfile",
        "userData",
        "tags",
        "metadataOptions",
        "detailedMonitoring",
        "context",
    ):
        if spec.get(key) is not None:
            out[key] = spec[key]
    bdms = sequence(subject, spec.get("blockDeviceMappings"), f"{where}.blockDeviceMappings")
    if bdms:
        out["blockDeviceMappings"] = bdms
    return out


def beta_to_v1(subject: Subject, spec: Obj, *, role: str | None) -> Obj:
    """A v1beta1 EC2NodeClass spec as a v1 spec (kubelet is placed later, from the pools)."""
    out: Obj = {}
    for key, value in spec.items():
        if key not in _BETA_FIELDS:
            subject.drop(f"spec.{key}")
        elif value is not None:
            out[key] = value
    for key in ("subnetSelectorTerms", "securityGroupSelectorTerms"):
        if not sequence(subject, out.get(key), f"spec.{key}"):
            raise subject.error(f"spec.{key}", "required: at least one term")
    family = str(out.get("amiFamily") or "AL2")
    terms = sequence(subject, out.get("amiSelectorTerms"), "spec.amiSelectorTerms")
    if not terms:
        if family not in ALIASES:
            raise subject.error(
                "spec.amiFamily",
                f"{family} has no v1 AMI alias: add amiSelectorTerms naming its AMIs",
            )
        out["amiSelectorTerms"] = [{"alias": f"{ALIASES[family]}@latest"}]
        out.pop("amiFamily", None)
    elif family == "Ubuntu":
        subject.drop(
            "spec.amiFamily: Ubuntu",
            "no v1 family; written as AL2 with the root volume on /dev/sda1 (Karpenter's v1 guide)",
        )
        out["amiFamily"] = "AL2"
        if not out.get("blockDeviceMappings"):
            out["blockDeviceMappings"] = [
                {"deviceName": "/dev/sda1", "rootVolume": True, "ebs": dict(_UBUNTU_ROOT_EBS)}
            ]
    elif not any(isinstance(t, dict) and "alias" in t for t in terms):
        out["amiFamily"] = family
    metadata = dict(mapping(subject, out.get("metadataOptions"), "spec.metadataOptions"))
    metadata.setdefault("httpPutResponseHopLimit", BETA_HOP_LIMIT)
    out["metadataOptions"] = metadata
    tags = mapping(subject, out.get("tags"), "spec.tags")
    if tags:
        kept = {}
        for key, value in tags.items():
            if (
                key in _RESERVED_TAGS
                or key == "eks:eks-cluster-name"
                or str(key).startswith("kubernetes.io/cluster")
            ):
                subject.drop(f"spec.tags.{key}", "v1 reserves this tag for Karpenter, dropped")
            else:
                kept[key] = value
        out["tags"] = kept
        if not kept:
            del out["tags"]
    if not out.get("role") and not out.get("instanceProfile"):
        out["role"] = role or ROLE_PLACEHOLDER
        if not role:
            subject.say(
                f"spec.role: the old object named no node role or instance profile; "
                f"wrote {ROLE_PLACEHOLDER}, replace it (or pass --role)"
            )
    return out
