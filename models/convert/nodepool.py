"""Provisioner (v1alpha5) -> NodePool (v1beta1) -> NodePool (v1).

The first step is Karpenter's ``karpenter-convert`` mapping: labels and annotations move to
the template's metadata, everything else a node gets to the template's spec, ``limits`` and
``weight`` stay on top, ``ttlSecondsAfterEmpty`` is ``WhenEmpty`` after that many seconds,
``consolidation.enabled`` is ``WhenUnderutilized``, ``ttlSecondsUntilExpired`` is
``expireAfter``; and the requirements the v1alpha5 webhook used to add are written out
(linux, amd64, on-demand, and c/m/r generation > 2 when no instance type is constrained), as
the v1beta1 guide asks. Where the Provisioner set neither emptiness nor consolidation, or no
expiry, it never removed or expired a node: the NodePool says so (``consolidateAfter: Never``,
``expireAfter: Never``) instead of taking v1's defaults, which would.

The second step is the v1 guide's: ``nodeClassRef`` names a group, not an apiVersion;
``expireAfter`` moves into the template; ``WhenUnderutilized`` is ``WhenEmptyOrUnderutilized``
with ``consolidateAfter: 0s`` (what v1 says keeps the v1beta1 behaviour); the kubelet block
leaves the pool for its EC2NodeClass (returned to the caller, which places it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.convert.common import Obj, Subject, api_group, mapping, seconds, sequence

_ALPHA_FIELDS = frozenset(
    {
        "annotations",
        "labels",
        "taints",
        "startupTaints",
        "requirements",
        "kubeletConfiguration",
        "provider",
        "providerRef",
        "ttlSecondsAfterEmpty",
        "ttlSecondsUntilExpired",
        "consolidation",
        "limits",
        "weight",
    }
)
_KUBELET_FIELDS = frozenset(
    {
        "clusterDNS",
        "maxPods",
        "podsPerCore",
        "systemReserved",
        "kubeReserved",
        "evictionHard",
        "evictionSoft",
        "evictionSoftGracePeriod",
        "evictionMaxPodGracePeriod",
        "imageGCHighThresholdPercent",
        "imageGCLowThresholdPercent",
        "cpuCFSQuota",
    }
)
# Label keys the v1beta1 guide dropped (v1 refuses the first in a NodePool; the second
# no longer exists on nodes).
_DROPPED_LABELS = {
    "karpenter.sh/provisioner-name": "now karpenter.sh/nodepool, which a NodePool may not set",
    "karpenter.k8s.aws/instance-pods": "label removed in v1beta1",
}
# Old node annotations v1 replaced with ``karpenter.sh/do-not-disrupt``.
_DO_NOT_DISRUPT = ("karpenter.sh/do-not-consolidate", "karpenter.sh/do-not-evict")
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
OS = "kubernetes.io/os"
ARCH = "kubernetes.io/arch"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_KEYS = (
    "node.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-generation",
)
_TEMPLATE_SPEC_FIELDS = frozenset(
    {
        "nodeClassRef",
        "taints",
        "startupTaints",
        "requirements",
        "kubelet",
        "expireAfter",
        "terminationGracePeriod",
    }
)
_DISRUPTION_FIELDS = frozenset(
    {"consolidationPolicy", "consolidateAfter", "expireAfter", "budgets"}
)
_BETA_FIELDS = frozenset({"template", "disruption", "limits", "weight"})


@dataclass
class AlphaPool:
    """A Provisioner as a v1beta1 NodePool spec, and its inline ``provider`` if it had one."""

    spec: Obj
    provider: Obj | None


@dataclass
class V1Pool:
    """A v1 NodePool spec, the kubelet block that left it, and the class it names."""

    spec: Obj
    kubelet: Obj | None
    nodeclass: str | None


def _default_requirements(requirements: list[Obj], labels: Obj) -> list[Obj]:
    """The v1alpha5 AWS webhook's defaults for keys neither requirements nor labels set."""
    keys = {r.get("key") for r in requirements} | set(labels)
    out = list(requirements)
    if OS not in keys:
        out.append({"key": OS, "operator": "In", "values": ["linux"]})
    if ARCH not in keys:
        out.append({"key": ARCH, "operator": "In", "values": ["amd64"]})
    if CAPACITY_TYPE not in keys:
        out.append({"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]})
    if not keys & set(INSTANCE_KEYS):
        out.append({"key": INSTANCE_KEYS[2], "operator": "In", "values": ["c", "m", "r"]})
        out.append({"key": INSTANCE_KEYS[3], "operator": "Gt", "values": ["2"]})
    return out


def _requirements(subject: Subject, value: Any, path: str) -> list[Obj]:
    out = []
    for i, req in enumerate(sequence(subject, value, path)):
        req = mapping(subject, req, f"{path}[{i}]")
        key = req.get("key")
        if not isinstance(key, str) or not key:
            raise subject.error(f"{path}[{i}].key", "required")
        if key in _DROPPED_LABELS:
            subject.drop(f"{path}[{i}] ({key})", _DROPPED_LABELS[key] + ", dropped")
            continue
        out.append(req)
    return out


def _labels(subject: Subject, value: Any, path: str) -> Obj:
    out = {}
    for key, val in mapping(subject, value, path).items():
        if key in _DROPPED_LABELS:
            subject.drop(f"{path}.{key}", _DROPPED_LABELS[key] + ", dropped")
        else:
            out[key] = val
    return out


def _annotations(subject: Subject, value: Any, path: str) -> Obj:
    out = {}
    for key, val in mapping(subject, value, path).items():
        if key in _DO_NOT_DISRUPT:
            subject.say(f"{path}.{key}: removed in v1, written as {DO_NOT_DISRUPT}")
            out[DO_NOT_DISRUPT] = str(val)
        else:
            out[key] = val
    return out


def _kubelet(subject: Subject, value: Any, path: str) -> Obj | None:
    kubelet = mapping(subject, value, path)
    out = {}
    for key, val in kubelet.items():
        if key in _KUBELET_FIELDS:
            out[key] = val
        elif key == "containerRuntime":
            subject.drop(f"{path}.containerRuntime", "only containerd remains; dropped")
        else:
            subject.drop(f"{path}.{key}")
    return out or None


def alpha_to_beta(subject: Subject, spec: Obj) -> AlphaPool:
    """A Provisioner's spec as a v1beta1 NodePool spec."""
    for key in spec:
        if key not in _ALPHA_FIELDS:
            subject.drop(f"spec.{key}")
    labels = _labels(subject, spec.get("labels"), "spec.labels")
    requirements = _default_requirements(
        _requirements(subject, spec.get("requirements"), "spec.requirements"), labels
    )
    template_spec: Obj = {"requirements": requirements}
    for key in ("taints", "startupTaints"):
        taints = sequence(subject, spec.get(key), f"spec.{key}")
        if taints:
            template_spec[key] = taints
    kubelet = _kubelet(subject, spec.get("kubeletConfiguration"), "spec.kubeletConfiguration")
    if kubelet:
        template_spec["kubelet"] = kubelet
    provider = spec.get("provider")
    ref = spec.get("providerRef")
    if provider is not None and ref is not None:
        raise subject.error("spec.provider", "set together with spec.providerRef; keep one")
    if provider is None and ref is None:
        raise subject.error("spec.providerRef", "required (the Provisioner has no provider either)")
    if ref is not None:
        ref = mapping(subject, ref, "spec.providerRef")
        if not ref.get("name"):
            raise subject.error("spec.providerRef.name", "required")
        kind = ref.get("kind") or "AWSNodeTemplate"
        if kind == "AWSNodeTemplate":
            template_spec["nodeClassRef"] = {
                "apiVersion": "karpenter.k8s.aws/v1beta1",
                "kind": "EC2NodeClass",
                "name": ref["name"],
            }
        else:
            template_spec["nodeClassRef"] = {
                k: ref[k] for k in ("apiVersion", "kind", "name") if k in ref
            }
    else:
        template_spec["nodeClassRef"] = {
            "apiVersion": "karpenter.k8s.aws/v1beta1",
            "kind": "EC2NodeClass",
            "name": subject.name,
        }
    template: Obj = {"spec": template_spec}
    meta: Obj = {}
    if labels:
        meta["labels"] = labels
    annotations = _annotations(subject, spec.get("annotations"), "spec.annotations")
    if annotations:
        meta["annotations"] = annotations
    if meta:
        template["metadata"] = meta
    disruption: Obj = {}
    consolidation = mapping(subject, spec.get("consolidation"), "spec.consolidation")
    for key in consolidation:
        if key != "enabled":
            subject.drop(f"spec.consolidation.{key}")
    if consolidation.get("enabled") is True:
        disruption["consolidationPolicy"] = "WhenUnderutilized"
        if spec.get("ttlSecondsAfterEmpty") is not None:
            subject.drop(
                "spec.ttlSecondsAfterEmpty",
                "set with consolidation.enabled (Karpenter refused both); consolidation kept",
            )
    elif spec.get("ttlSecondsAfterEmpty") is not None:
        disruption["consolidationPolicy"] = "WhenEmpty"
        disruption["consolidateAfter"] = seconds(
            subject, spec["ttlSecondsAfterEmpty"], "spec.ttlSecondsAfterEmpty"
        )
    else:
        disruption["consolidationPolicy"] = "WhenEmpty"
        disruption["consolidateAfter"] = "Never"
    if spec.get("ttlSecondsUntilExpired") is not None:
        disruption["expireAfter"] = seconds(
            subject, spec["ttlSecondsUntilExpired"], "spec.ttlSecondsUntilExpired"
        )
    else:
        disruption["expireAfter"] = "Never"
    out: Obj = {"template": template, "disruption": disruption}
    limits = mapping(subject, spec.get("limits"), "spec.limits")
    for key in limits:
        if key != "resources":
            subject.drop(f"spec.limits.{key}")
    resources = mapping(subject, limits.get("resources"), "spec.limits.resources")
    if resources:
        out["limits"] = dict(resources)
    if spec.get("weight") is not None:
        out["weight"] = spec["weight"]
    inline = None
    if provider is not None:
        inline = mapping(subject, provider, "spec.provider")
    return AlphaPool(out, inline)


def _node_class_ref(subject: Subject, value: Any) -> Obj:
    ref = mapping(subject, value, "spec.template.spec.nodeClassRef")
    if not ref.get("name"):
        raise subject.error("spec.template.spec.nodeClassRef.name", "required")
    if "group" in ref:  # already v1-shaped
        return {k: ref[k] for k in ("group", "kind", "name") if k in ref}
    group = api_group(str(ref.get("apiVersion") or "")) or "karpenter.k8s.aws"
    return {"group": group, "kind": ref.get("kind") or "EC2NodeClass", "name": ref["name"]}


def beta_to_v1(subject: Subject, spec: Obj) -> V1Pool:
    """A v1beta1 NodePool's spec as a v1 spec; the kubelet block is returned apart."""
    for key in spec:
        if key not in _BETA_FIELDS:
            subject.drop(f"spec.{key}")
    template = mapping(subject, spec.get("template"), "spec.template")
    for key in template:
        if key not in ("metadata", "spec"):
            subject.drop(f"spec.template.{key}")
    tspec = mapping(subject, template.get("spec"), "spec.template.spec")
    out_tspec: Obj = {}
    for key, value in tspec.items():
        if key == "resources":
            subject.drop("spec.template.spec.resources", "never used by Karpenter; v1 removed it")
        elif key not in _TEMPLATE_SPEC_FIELDS:
            subject.drop(f"spec.template.spec.{key}")
        elif key not in ("kubelet", "nodeClassRef", "requirements") and value is not None:
            out_tspec[key] = value
    ref = _node_class_ref(subject, tspec.get("nodeClassRef"))
    out_tspec["nodeClassRef"] = ref
    out_tspec["requirements"] = _requirements(
        subject, tspec.get("requirements"), "spec.template.spec.requirements"
    )
    kubelet = _kubelet(subject, tspec.get("kubelet"), "spec.template.spec.kubelet")
    disruption = dict(mapping(subject, spec.get("disruption"), "spec.disruption"))
    for key in disruption:
        if key not in _DISRUPTION_FIELDS:
            subject.drop(f"spec.disruption.{key}")
    expire = disruption.pop("expireAfter", None)
    out_tspec.setdefault("expireAfter", expire if expire is not None else "720h")
    policy = disruption.get("consolidationPolicy") or "WhenUnderutilized"
    if policy == "WhenUnderutilized":
        policy = "WhenEmptyOrUnderutilized"
    out_disruption: Obj = {
        "consolidationPolicy": policy,
        "consolidateAfter": disruption.get("consolidateAfter") or "0s",
    }
    if disruption.get("budgets") is not None:
        out_disruption["budgets"] = disruption["budgets"]
    meta_in = mapping(subject, template.get("metadata"), "spec.template.metadata")
    meta: Obj = {}
    labels = _labels(subject, meta_in.get("labels"), "spec.template.metadata.labels")
    annotations = _annotations(
        subject, meta_in.get("annotations"), "spec.template.metadata.annotations"
    )
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    out_template: Obj = {"metadata": meta, "spec": out_tspec} if meta else {"spec": out_tspec}
    out: Obj = {"template": out_template, "disruption": out_disruption}
    if spec.get("limits"):
        out["limits"] = spec["limits"]
    if spec.get("weight") is not None:
        out["weight"] = spec["weight"]
    own_class = ref["name"] if ref.get("group") == "karpenter.k8s.aws" else None
    if kubelet and own_class is None:
        subject.drop("spec.template.spec.kubelet", "its node class is not an EC2NodeClass, dropped")
        kubelet = None
    return V1Pool(out, kubelet, own_class)
