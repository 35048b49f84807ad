"""The JSON schema of every manifest field the planner reads, checked before parsing.

Parsing reads manifests as plain decoded YAML (fast, and close to the API's own defaulting),
so a field of the wrong type (a list where a mapping belongs, a mapping where a string does)
would surface deep inside as a Python error. Checking the shape first turns it into one line
naming the field, as the API server's schema validation would. ``null`` is accepted anywhere
(it reads as "not set"), as are fields the planner does not read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MapOf:
    """A mapping with any keys, every value of the given shape."""

    value: Any


@dataclass(frozen=True)
class ListOf:
    """A list whose items all have the given shape."""

    item: Any


SCALAR = "scalar"  # a string, number or boolean (read with str())
INT = "int"  # an integer (not a boolean)
QUANTITY = "quantity"  # a string or number (parse_quantity names a bad one itself)

_KIND_OF = {SCALAR: "a string", INT: "an integer", QUANTITY: "a quantity (string or number)"}

STRINGS = MapOf(SCALAR)
RESOURCES = MapOf(QUANTITY)
SELECTOR_REQUIREMENT = {"key": SCALAR, "operator": SCALAR, "values": ListOf(SCALAR)}
LABEL_SELECTOR = {"matchLabels": STRINGS, "matchExpressions": ListOf(SELECTOR_REQUIREMENT)}
NODE_SELECTOR_TERM = {
    "matchExpressions": ListOf(SELECTOR_REQUIREMENT),
    "matchFields": ListOf(SELECTOR_REQUIREMENT),
}
POD_AFFINITY_TERM = {
    "labelSelector": LABEL_SELECTOR,
    "namespaceSelector": LABEL_SELECTOR,
    "namespaces": ListOf(SCALAR),
    "topologyKey": SCALAR,
    "matchLabelKeys": ListOf(SCALAR),
    "mismatchLabelKeys": ListOf(SCALAR),
}
POD_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": ListOf(POD_AFFINITY_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": ListOf(
        {"weight": INT, "podAffinityTerm": POD_AFFINITY_TERM}
    ),
}
CONTAINER = {
    "name": SCALAR,
    "resources": {"requests": RESOURCES, "limits": RESOURCES},
    "ports": ListOf({"hostPort": INT, "hostIP": SCALAR, "protocol": SCALAR}),
    "restartPolicy": SCALAR,
}
METADATA = {
    "name": SCALAR,
    "generateName": SCALAR,
    "namespace": SCALAR,
    "uid": SCALAR,
    "labels": STRINGS,
    "annotations": STRINGS,
    "ownerReferences": ListOf({"kind": SCALAR, "name": SCALAR}),
    "finalizers": ListOf(SCALAR),
    "deletionTimestamp": SCALAR,
    "creationTimestamp": SCALAR,
}
TAINT = {"key": SCALAR, "value": SCALAR, "effect": SCALAR}
POD_SPEC = {
    "containers": ListOf(CONTAINER),
    "initContainers": ListOf(CONTAINER),
    "overhead": RESOURCES,
    "runtimeClassName": SCALAR,
    "nodeName": SCALAR,
    "priority": INT,
    "nodeSelector": STRINGS,
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": ListOf(NODE_SELECTOR_TERM)
            },
            "preferredDuringSchedulingIgnoredDuringExecution": ListOf(
                {"weight": INT, "preference": NODE_SELECTOR_TERM}
            ),
        },
        "podAffinity": POD_AFFINITY,
        "podAntiAffinity": POD_AFFINITY,
    },
    "tolerations": ListOf({"key": SCALAR, "operator": SCALAR, "value": SCALAR, "effect": SCALAR}),
    "topologySpreadConstraints": ListOf(
        {
            "maxSkew": INT,
            "minDomains": INT,
            "topologyKey": SCALAR,
            "whenUnsatisfiable": SCALAR,
            "labelSelector": LABEL_SELECTOR,
            "matchLabelKeys": ListOf(SCALAR),
            "nodeAffinityPolicy": SCALAR,
            "nodeTaintsPolicy": SCALAR,
        }
    ),
    "volumes": ListOf(
        {
            "name": SCALAR,
            "persistentVolumeClaim": {"claimName": SCALAR},
            "ephemeral": {
                "volumeClaimTemplate": {"spec": {"storageClassName": SCALAR, "volumeName": SCALAR}}
            },
        }
    ),
}
CONDITIONS = ListOf({"type": SCALAR, "status": SCALAR, "reason": SCALAR})
POD = {
    "metadata": METADATA,
    "spec": POD_SPEC,
    "status": {"phase": SCALAR, "conditions": CONDITIONS},
}

# Shapes by kind; kinds not listed are checked for metadata only (most are ignored).
SHAPES: dict[str, Any] = {
    "Pod": POD,
    "DaemonSet": {
        "metadata": METADATA,
        "spec": {"template": {"metadata": METADATA, "spec": POD_SPEC}},
    },
    "Node": {
        "metadata": METADATA,
        "spec": {"taints": ListOf(TAINT), "providerID": SCALAR},
        "status": {"allocatable": RESOURCES, "capacity": RESOURCES, "conditions": CONDITIONS},
    },
    "PersistentVolumeClaim": {
        "metadata": METADATA,
        "spec": {"volumeName": SCALAR, "storageClassName": SCALAR},
    },
    "PersistentVolume": {
        "metadata": METADATA,
        "spec": {
            "nodeAffinity": {"required": {"nodeSelectorTerms": ListOf(NODE_SELECTOR_TERM)}},
            "csi": {"driver": SCALAR},
        },
    },
    "StorageClass": {
        "metadata": METADATA,
        "provisioner": SCALAR,
        "allowedTopologies": ListOf({"matchLabelExpressions": ListOf(SELECTOR_REQUIREMENT)}),
    },
    "CSINode": {
        "metadata": METADATA,
        "spec": {
            "drivers": ListOf({"name": SCALAR, "nodeID": SCALAR, "allocatable": {"count": INT}})
        },
    },
    "RuntimeClass": {"metadata": METADATA, "overhead": {"podFixed": RESOURCES}},
    "PodDisruptionBudget": {
        "metadata": METADATA,
        "spec": {"selector": LABEL_SELECTOR, "minAvailable": SCALAR, "maxUnavailable": SCALAR},
    },
}
_DEFAULT = {"metadata": METADATA}


def _leaf_ok(value: Any, shape: str) -> bool:
    if shape == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str | int | float)


def _mismatch(value: Any, shape: Any, path: str) -> str | None:
    # Leaves and unset fields are checked in the loops, without a call or a path string
    # each: a Pod has hundreds of fields to look at and is almost always right.
    if value is None:
        return None
    if isinstance(shape, dict):
        if not isinstance(value, Mapping):
            return f"{path}: expected a mapping"
        for key, sub in shape.items():
            item = value.get(key)
            if item is None:
                continue
            if isinstance(sub, str):
                if _leaf_ok(item, sub):
                    continue
                return (
                    f"{path}.{key}: expected {_KIND_OF[sub]}"
                    if path
                    else (f"{key}: expected {_KIND_OF[sub]}")
                )
            err = _mismatch(item, sub, f"{path}.{key}" if path else key)
            if err:
                return err
        return None
    if isinstance(shape, ListOf):
        if not isinstance(value, list):
            return f"{path}: expected a list"
        sub = shape.item
        for i, item in enumerate(value):
            if item is None:
                if isinstance(sub, dict):
                    return f"{path}[{i}]: expected a mapping"
                continue
            if isinstance(sub, str):
                if _leaf_ok(item, sub):
                    continue
                return f"{path}[{i}]: expected {_KIND_OF[sub]}"
            err = _mismatch(item, sub, f"{path}[{i}]")
            if err:
                return err
        return None
    if isinstance(shape, MapOf):
        if not isinstance(value, Mapping):
            return f"{path}: expected a mapping"
        sub = shape.value
        for key, item in value.items():
            if item is None:
                continue
            if isinstance(sub, str):
                if _leaf_ok(item, sub):
                    continue
                return f"{path}.{key}: expected {_KIND_OF[sub]}"
            err = _mismatch(item, sub, f"{path}.{key}")
            if err:
                return err
        return None
    return None if _leaf_ok(value, shape) else f"{path}: expected {_KIND_OF[shape]}"


Check = Callable[[Any], bool]


# Decoded YAML and JSON hold plain dicts, strs, ints and floats: an exact type test answers
# for nearly every value, before the slower isinstance (an ABC check for Mapping).
_SCALAR_TYPES = frozenset((str, int, float))


def _scalar(value: Any) -> bool:
    return type(value) in _SCALAR_TYPES or isinstance(value, str | int | float)


def _int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def _compile(shape: Any) -> Check:
    """A test of a non-null value that passes exactly when ``_mismatch`` finds nothing.

    It visits only the fields a value has (not every field its shape names) and builds no
    path: most manifests are right, and ``_mismatch`` then names the field of one that is
    not. Thousands of Pods are checked on every read."""
    if isinstance(shape, dict):
        fields = {key: _compile(sub) for key, sub in shape.items()}

        def mapping(value: Any) -> bool:
            if type(value) is not dict and not isinstance(value, Mapping):
                return False
            for key, item in value.items():
                if item is not None:
                    check = fields.get(key)
                    if check is not None and not check(item):
                        return False
            return True

        return mapping
    if isinstance(shape, ListOf):
        item_check = _compile(shape.item)
        nullable = not isinstance(shape.item, dict)

        def listing(value: Any) -> bool:
            if type(value) is not list and not isinstance(value, list):
                return False
            for item in value:
                if item is None:
                    if not nullable:
                        return False
                elif not item_check(item):
                    return False
            return True

        return listing
    if isinstance(shape, MapOf):
        value_check = _compile(shape.value)

        def values(value: Any) -> bool:
            if type(value) is not dict and not isinstance(value, Mapping):
                return False
            for item in value.values():  # noqa: SIM110 (a plain loop: hot path)
                if item is not None and not value_check(item):
                    return False
            return True

        return values
    return _int if shape == INT else _scalar


_CHECKS: dict[str, Check] = {kind: _compile(shape) for kind, shape in SHAPES.items()}
_DEFAULT_CHECK = _compile(_DEFAULT)


def shape_error(body: Mapping[str, Any]) -> str | None:
    """The first field of ``body`` whose JSON type is not what its kind allows, as
    ``"spec.containers[0].resources: expected a mapping"``; None when the shape is right."""
    kind = body.get("kind")
    if kind is not None and not isinstance(kind, str):
        return "kind: expected a string"
    api = body.get("apiVersion")
    if api is not None and not isinstance(api, str):
        return "apiVersion: expected a string"
    if _CHECKS.get(kind or "", _DEFAULT_CHECK)(body):
        return None
    return _mismatch(body, SHAPES.get(kind or "", _DEFAULT), "")
