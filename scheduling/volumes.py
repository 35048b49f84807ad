"""Per-node volume attach limits, counted where Karpenter counts them.

A node's CSINode publishes, per CSI driver, how many volumes it can attach
(``spec.drivers[].allocatable.count``). Karpenter (``VolumeUsage``) tracks, for every existing
and in-flight node, the distinct volumes its pods use per driver, and does not put a pod on a
node where that count would pass the driver's limit. A driver with no published count is
unlimited, and so is a node with no CSINode (an in-flight claim, a node still booting). A
new NodeClaim gets no volume limit, as in Karpenter's scheduler: its CSINode does not exist
yet.

A pod's volumes are its PVCs (``namespace/claim``) and generic ephemeral volumes
(``namespace/pod-volume``, the name the API server gives their PVC); each is counted under
the driver of its bound PV's ``spec.csi.driver``, else its StorageClass's ``provisioner``.
A volume whose driver cannot be resolved is not counted (Karpenter skips it too). The same
volume used by two pods on a node counts once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Volumes = dict[str, frozenset[str]]  # CSI driver → volume ids

_INT32_MAX = 2**31 - 1


def csinode_limits(body: Mapping[str, Any]) -> dict[str, int]:
    """The attach limit per driver a CSINode publishes; ValueError naming the field when a
    count is not an integer from 0 to 2^31-1 (the API's int32) or a driver is unnamed."""
    drivers = (body.get("spec") or {}).get("drivers") or []
    out: dict[str, int] = {}
    for i, d in enumerate(drivers):
        name = d.get("name")
        if not name:
            raise ValueError(f"spec.drivers[{i}].name is required")
        if str(name) in out:
            raise ValueError(f"spec.drivers[{i}].name: duplicate driver {str(name)!r}")
        count = (d.get("allocatable") or {}).get("count")
        if count is None:
            continue
        if not isinstance(count, int) or isinstance(count, bool):
            raise ValueError(f"spec.drivers[{i}].allocatable.count: expected an integer")
        if not 0 <= count <= _INT32_MAX:
            raise ValueError(
                f"spec.drivers[{i}].allocatable.count: must be from 0 to {_INT32_MAX}, not {count}"
            )
        out[str(name)] = count
    return out


def pod_volumes(
    namespace: str,
    pod_name: str,
    spec_volumes: list[Mapping[str, Any]],
    pvcs: Mapping[tuple[str, str], Mapping[str, Any]],
    pvs: Mapping[str, Mapping[str, Any]],
    classes: Mapping[str, Mapping[str, Any]],
) -> Volumes:
    """The pod's CSI volumes by driver (see the module docstring)."""
    found: dict[str, set[str]] = {}
    for v in spec_volumes:
        claim = v.get("persistentVolumeClaim")
        ephemeral = v.get("ephemeral")
        if claim:
            vol_id = f"{namespace}/{claim.get('claimName')}"
            pvc_spec = (pvcs.get((namespace, str(claim.get("claimName")))) or {}).get("spec")
        elif ephemeral:
            vol_id = f"{namespace}/{pod_name}-{v.get('name')}"
            pvc_spec = (ephemeral.get("volumeClaimTemplate") or {}).get("spec")
        else:
            continue
        driver = _driver(pvc_spec or {}, pvs, classes)
        if driver:
            found.setdefault(driver, set()).add(vol_id)
    return {k: frozenset(v) for k, v in found.items()}


def _driver(
    pvc_spec: Mapping[str, Any],
    pvs: Mapping[str, Mapping[str, Any]],
    classes: Mapping[str, Mapping[str, Any]],
) -> str | None:
    pv_name = pvc_spec.get("volumeName")
    if pv_name:
        csi = ((pvs.get(str(pv_name)) or {}).get("spec") or {}).get("csi") or {}
        if csi.get("driver"):
            return str(csi["driver"])
    sc_name = pvc_spec.get("storageClassName")
    if sc_name:
        provisioner = (classes.get(str(sc_name)) or {}).get("provisioner")
        if provisioner:
            return str(provisioner)
    return None


def over_limit(
    used: Mapping[str, set[str]], limits: Mapping[str, int], adding: Volumes
) -> str | None:
    """The first driver whose limit the pod's volumes would pass on this node, or None."""
    for driver, ids in adding.items():
        limit = limits.get(driver)
        if limit is None:
            continue
        have = used.get(driver, set())
        if len(have) + len(ids - have) > limit:
            return driver
    return None


def attach(used: dict[str, set[str]], adding: Volumes) -> None:
    """Record the pod's volumes on the node."""
    for driver, ids in adding.items():
        used.setdefault(driver, set()).update(ids)
