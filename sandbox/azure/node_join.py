"""What a simulated AKS node learns from its VM's custom data, as the node image would.

The sandbox's node simulator has no kubelet to run the cloud-init document
``activities.azure.bootstrap`` renders; it reads the same files instead, so a simulated Node
registers with the labels, taints, max pods and Kubernetes version the VM was told, and a
wrong or missing value shows up as a node that does not join (or joins wrong), as it would
on Azure.
"""

from __future__ import annotations

import base64
import binascii
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

KUBELET_DEFAULTS = "/etc/default/kubelet"
NODE_ENV = "/opt/azure/joinery/node.env"
BOOTSTRAP_KUBECONFIG = "/var/lib/kubelet/bootstrap-kubeconfig"


class BadCustomData(ValueError):
    """The custom data is not a cloud-config a node could join with."""


@dataclass(frozen=True)
class NodeJoin:
    server: str
    kubernetes_version: str
    image_family: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, str]] = field(default_factory=list)
    max_pods: int = 110
    flags: dict[str, str] = field(default_factory=dict)

    @property
    def kubelet_version(self) -> str:
        """``status.nodeInfo.kubeletVersion`` as a kubelet of that version reports it."""
        return "v" + self.kubernetes_version.removeprefix("v")


def _env(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, raw = line.partition("=")
        if not sep:
            raise BadCustomData(f"not an environment line: {line!r}")
        words = shlex.split(raw)
        out[key.strip()] = words[0] if words else ""
    return out


def _taint(text: str) -> dict[str, str]:
    head, sep, effect = text.rpartition(":")
    if not sep or not head:
        raise BadCustomData(f"taint {text!r}: expected key[=value]:Effect")
    key, has_value, value = head.partition("=")
    taint = {"key": key, "effect": effect}
    if has_value:
        taint["value"] = value
    return taint


def read_custom_data(custom_data: str) -> NodeJoin:
    """The join facts of a VM's ``osProfile.customData`` (base64 of a cloud-config)."""
    try:
        text = base64.b64decode(custom_data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise BadCustomData("custom data is not base64 text") from None
    if not text.startswith("#cloud-config"):
        raise BadCustomData("custom data is not a #cloud-config document")
    doc: Any = yaml.safe_load(text)
    files = {
        f.get("path"): str(f.get("content") or "")
        for f in (doc or {}).get("write_files") or []
        if isinstance(f, dict)
    }
    missing = [p for p in (KUBELET_DEFAULTS, NODE_ENV, BOOTSTRAP_KUBECONFIG) if p not in files]
    if missing:
        raise BadCustomData(f"custom data writes no {', '.join(missing)}")
    kubelet = _env(files[KUBELET_DEFAULTS])
    env = _env(files[NODE_ENV])
    flags = dict(
        part.partition("=")[::2] for part in kubelet.get("KUBELET_FLAGS", "").split(" ") if part
    )
    labels = dict(
        kv.partition("=")[::2] for kv in kubelet.get("KUBELET_NODE_LABELS", "").split(",") if kv
    )
    taints = [_taint(t) for t in flags.get("--register-with-taints", "").split(",") if t]
    kubeconfig: Any = yaml.safe_load(files[BOOTSTRAP_KUBECONFIG])
    try:
        server = str(kubeconfig["clusters"][0]["cluster"]["server"])
        max_pods = int(flags.get("--max-pods", "110"))
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise BadCustomData(f"bootstrap kubeconfig or --max-pods: {exc}") from None
    return NodeJoin(
        server=server,
        kubernetes_version=env.get("KUBERNETES_VERSION", ""),
        image_family=env.get("IMAGE_FAMILY", ""),
        labels=labels,
        taints=taints,
        max_pods=max_pods,
        flags=flags,
    )
