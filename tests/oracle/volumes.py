"""Volumes: VolumeZone (a bound PV's zone/region labels), VolumeBinding (a bound PV's
nodeAffinity; an unbound claim provisions only under WaitForFirstConsumer, within its class's
allowedTopologies) and NodeVolumeLimits (CSINode attach counts per driver)."""

from __future__ import annotations

from collections.abc import Mapping

from tests.oracle.cluster import Cluster, Obj, namespace_of
from tests.oracle.selectors import node_labels, term_matches

_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_BETA = {
    "failure-domain.beta.kubernetes.io/zone": _ZONE,
    "failure-domain.beta.kubernetes.io/region": _REGION,
}
_ZONE_KEYS = {_ZONE, _REGION, *_BETA}


def _claims(pod: Obj) -> list[str]:
    return [
        str(v["persistentVolumeClaim"]["claimName"])
        for v in (pod.get("spec") or {}).get("volumes") or []
        if v.get("persistentVolumeClaim")
    ]


def _node_value(labels: Mapping[str, str], key: str) -> str | None:
    ga = _BETA.get(key, key)
    if ga in labels:
        return labels[ga]
    beta = next((b for b, g in _BETA.items() if g == ga), None)
    return labels.get(beta) if beta else None


def _zone_failure(pv: Obj, node: Obj) -> str | None:
    labels = node_labels(node)
    if not any(k in labels for k in _ZONE_KEYS):
        return None  # a node without zone labels is not constrained (the plugin's fast path)
    for key, value in ((pv.get("metadata") or {}).get("labels") or {}).items():
        if key not in _ZONE_KEYS:
            continue
        allowed = set(str(value).split("__"))
        have = _node_value(labels, key)
        if have is None or have not in allowed:
            return f"volume zone: PV {pv['metadata']['name']} is in {key}={value}"
    return None


def _claim_failure(pod: Obj, claim: str, node: Obj, cluster: Cluster) -> str | None:
    pvc = cluster.pvcs.get((namespace_of(pod), claim))
    if pvc is None:
        return f"volume binding: PVC {claim} not found"
    spec = pvc.get("spec") or {}
    labels = node_labels(node)
    name = node["metadata"]["name"]
    volume = spec.get("volumeName")
    if volume:
        pv = cluster.pvs.get(str(volume))
        if pv is None:
            return f"volume binding: PV {volume} of PVC {claim} not found"
        zone = _zone_failure(pv, node)
        if zone:
            return zone
        required = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")) or None
        if required is not None and not any(
            term_matches(t, labels, name) for t in required.get("nodeSelectorTerms") or []
        ):
            return f"volume node affinity: PV {volume} does not admit the node"
        return None
    sc = cluster.storage_classes.get(str(spec.get("storageClassName") or ""))
    if sc is None or sc.get("volumeBindingMode") != "WaitForFirstConsumer":
        return f"volume binding: PVC {claim} is unbound and not WaitForFirstConsumer"
    topologies = sc.get("allowedTopologies") or []
    if not topologies:
        return None
    for topo in topologies:
        exprs = topo.get("matchLabelExpressions") or []
        if all(labels.get(e["key"]) in [str(v) for v in e.get("values") or []] for e in exprs):
            return None
    return f"volume binding: class {sc['metadata']['name']}'s allowedTopologies exclude the node"


def volume_failure(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    for claim in _claims(pod):
        failure = _claim_failure(pod, claim, node, cluster)
        if failure:
            return failure
    return None


def csi_volumes(pod: Obj, cluster: Cluster) -> dict[str, set[str]]:
    """The pod's CSI volumes by driver: a bound PV's handle, or an unbound claim (which its
    class's provisioner will create) by name."""
    out: dict[str, set[str]] = {}
    for claim in _claims(pod):
        pvc = cluster.pvcs.get((namespace_of(pod), claim))
        if pvc is None:
            continue
        spec = pvc.get("spec") or {}
        pv = cluster.pvs.get(str(spec.get("volumeName") or ""))
        if pv is not None:
            csi = (pv.get("spec") or {}).get("csi")
            if csi:
                out.setdefault(str(csi["driver"]), set()).add(str(csi["volumeHandle"]))
            continue
        sc = cluster.storage_classes.get(str(spec.get("storageClassName") or ""))
        if sc is not None and sc.get("provisioner"):
            out.setdefault(str(sc["provisioner"]), set()).add(f"{namespace_of(pod)}/{claim}")
    return out


def _limits(csinode: Obj | None) -> dict[str, int]:
    out = {}
    for d in ((csinode or {}).get("spec") or {}).get("drivers") or []:
        count = (d.get("allocatable") or {}).get("count")
        if count is not None:
            out[str(d["name"])] = int(count)
    return out


def attach_failure(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    mine = csi_volumes(pod, cluster)
    if not mine:
        return None
    name = node["metadata"]["name"]
    limits = _limits(cluster.csinodes.get(name))
    attached: dict[str, set[str]] = {}
    for p in cluster.pods_on(name):
        for driver, vols in csi_volumes(p, cluster).items():
            attached.setdefault(driver, set()).update(vols)
    for driver, vols in sorted(mine.items()):
        if driver not in limits:
            continue
        have = attached.get(driver, set())
        new = vols - have
        if new and len(have) + len(new) > limits[driver]:
            return (
                f"attach limit: {driver} allows {limits[driver]} volumes, "
                f"{len(have)} attached + {len(new)} new"
            )
    return None
