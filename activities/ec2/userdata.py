"""Node bootstrap user data per AMI family, carrying the NodePool's labels, taints and kubelet.

AL2023 reads a nodeadm ``NodeConfig`` from a MIME multipart document; a NodeClass's own user
data is kept as an earlier part (nodeadm merges them, ours last so cluster facts win).
Bottlerocket reads TOML settings.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from activities.ec2.families import AL2, BOTTLEROCKET
from activities.ec2.settings import ClusterInfo

BOUNDARY = "//"


@dataclass(frozen=True)
class Bootstrap:
    cluster: ClusterInfo
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    max_pods: int | None = None
    kubelet: Mapping[str, Any] = field(default_factory=dict)
    custom: str | None = None


def _taint_str(t: Mapping[str, Any]) -> str:
    value = t.get("value")
    return f"{t['key']}={value}:{t['effect']}" if value else f"{t['key']}:{t['effect']}"


def _kubelet_config(b: Bootstrap) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if b.max_pods is not None:
        config["maxPods"] = b.max_pods
    for ours, theirs in (
        ("clusterDNS", "clusterDNS"),
        ("systemReserved", "systemReserved"),
        ("kubeReserved", "kubeReserved"),
        ("evictionHard", "evictionHard"),
        ("evictionSoft", "evictionSoft"),
    ):
        if b.kubelet.get(ours):
            config[theirs] = b.kubelet[ours]
    if b.taints:
        config["registerWithTaints"] = [
            {k: v for k, v in t.items() if k in ("key", "value", "effect") and v is not None}
            for t in b.taints
        ]
    return config


def al2023(b: Bootstrap) -> str:
    node_config = {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {
            "cluster": {
                "name": b.cluster.name,
                "apiServerEndpoint": b.cluster.endpoint,
                "certificateAuthority": b.cluster.certificate_authority,
                "cidr": b.cluster.service_cidr,
            },
            "kubelet": {
                "config": _kubelet_config(b),
                "flags": [
                    "--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(b.labels.items()))
                ],
            },
        },
    }
    parts = []
    if b.custom:
        content_type = (
            "application/node.eks.aws" if "NodeConfig" in b.custom else "text/x-shellscript"
        )
        if b.custom.startswith("MIME-Version"):
            parts.append(_inner_parts(b.custom))
        else:
            parts.append(
                f'Content-Type: {content_type}; charset="us-ascii"\n\n{b.custom.rstrip()}\n'
            )
    body = yaml.safe_dump(node_config, sort_keys=False)
    parts.append(f'Content-Type: application/node.eks.aws; charset="us-ascii"\n\n{body}')
    out = [f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{BOUNDARY}"\n']
    for part in parts:
        out.append(f"--{BOUNDARY}\n{part.rstrip()}\n")
    out.append(f"--{BOUNDARY}--\n")
    return "\n".join(out)


def _inner_parts(mime: str) -> str:
    """The parts of a user-supplied MIME document, without its header and closing boundary."""
    header, _, rest = mime.partition("\n\n")
    marker = 'boundary="'
    boundary = header.split(marker, 1)[1].split('"', 1)[0] if marker in header else BOUNDARY
    chunks = [c.strip("\n") for c in rest.split(f"--{boundary}") if c.strip("\n-")]
    return f"\n--{BOUNDARY}\n".join(chunks)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def bottlerocket(b: Bootstrap) -> str:
    lines = [b.custom.rstrip() + "\n"] if b.custom else []
    lines.append("[settings.kubernetes]")
    lines.append(f"cluster-name = {_toml_value(b.cluster.name)}")
    lines.append(f"api-server = {_toml_value(b.cluster.endpoint)}")
    lines.append(f"cluster-certificate = {_toml_value(b.cluster.certificate_authority)}")
    if b.max_pods is not None:
        lines.append(f"max-pods = {b.max_pods}")
    if b.kubelet.get("clusterDNS"):
        lines.append(f"cluster-dns-ip = {_toml_value(b.kubelet['clusterDNS'][0])}")
    lines.append("\n[settings.kubernetes.node-labels]")
    lines.extend(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in sorted(b.labels.items()))
    taints: dict[str, list[str]] = {}
    for t in b.taints:
        value = t.get("value") or ""
        taints.setdefault(str(t["key"]), []).append(f"{value}:{t['effect']}")
    if taints:
        lines.append("\n[settings.kubernetes.node-taints]")
        lines.extend(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in sorted(taints.items()))
    return "\n".join(lines) + "\n"


def al2(b: Bootstrap) -> str:
    node_labels = ",".join(f"{k}={v}" for k, v in sorted(b.labels.items()))
    args = [f"--kubelet-extra-args '--node-labels={node_labels}"]
    if b.taints:
        args[0] += f" --register-with-taints={','.join(_taint_str(t) for t in b.taints)}"
    args[0] += "'"
    if b.max_pods is not None:
        args.append(f"--use-max-pods false --max-pods={b.max_pods}")
    script = (
        "#!/bin/bash -xe\n"
        f"/etc/eks/bootstrap.sh '{b.cluster.name}' --apiserver-endpoint '{b.cluster.endpoint}' "
        f"--b64-cluster-ca '{b.cluster.certificate_authority}' {' '.join(args)}\n"
    )
    return (b.custom.rstrip() + "\n" if b.custom else "") + script


def render(family: str, b: Bootstrap) -> str:
    if family == BOTTLEROCKET:
        return bottlerocket(b)
    if family == AL2:
        return al2(b)
    return al2023(b)


def encode(user_data: str) -> str:
    return base64.b64encode(user_data.encode()).decode()
