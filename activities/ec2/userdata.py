"""Node bootstrap user data per AMI family: what the node needs to join, and nothing lost.

Every family gets the cluster's name, endpoint, CA bundle and service range (the cluster DNS
address is derived from it when the NodeClass sets no ``clusterDNS``), the NodeClaim's labels
and taints, and every ``kubelet`` field of the EC2NodeClass the family's bootstrap accepts:

* AL2023 — a nodeadm ``NodeConfig`` (kubelet fields verbatim in ``kubelet.config``) in a MIME
  multipart document; the NodeClass's own user data follows as further parts, as Karpenter
  orders them, so nodeadm merges the user's settings over ours.
* AL2 — ``/etc/eks/bootstrap.sh`` arguments, kubelet fields as ``--kubelet-extra-args`` flags,
  in the same MIME wrapping (the user's script runs first).
* Bottlerocket — TOML ``[settings.kubernetes]``; the user's TOML is parsed and merged, cluster
  facts and kubelet fields overwrite it.
* Windows — a PowerShell call of ``Start-EKSBootstrap.ps1``.

``instanceStorePolicy: RAID0`` becomes nodeadm's ``localStorage`` strategy, bootstrap.sh's
``--local-disks raid0`` and Bottlerocket's ephemeral-storage bootstrap command.
"""

from __future__ import annotations

import base64
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from email import message_from_string
from typing import Any

import yaml

from activities.cloud.kubelet_labels import kubelet_may_set
from activities.ec2.families import AL2, BOTTLEROCKET, CUSTOM, WINDOWS
from activities.ec2.settings import IPV6, ClusterInfo

BOUNDARY = "//"
NODECONFIG_TYPE = 'application/node.eks.aws; charset="us-ascii"'
SHELL_TYPE = 'text/x-shellscript; charset="us-ascii"'
RAID0 = "RAID0"


@dataclass(frozen=True)
class Bootstrap:
    cluster: ClusterInfo
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    max_pods: int | None = None
    kubelet: Mapping[str, Any] = field(default_factory=dict)  # EC2NodeClass kubelet, wire form
    custom: str | None = None
    instance_store_policy: str | None = None

    def kubelet_fields(self) -> dict[str, Any]:
        """The kubelet settings to apply: the NodeClass's, with maxPods and clusterDNS filled."""
        out = {k: v for k, v in self.kubelet.items() if v is not None}
        if self.max_pods is not None and "maxPods" not in out:
            out["maxPods"] = self.max_pods
        if not out.get("clusterDNS"):
            out["clusterDNS"] = [self.cluster.dns_ip]
        return out


def _labels(b: Bootstrap) -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in b.labels.items() if kubelet_may_set(k))


def _taint_str(t: Mapping[str, Any]) -> str:
    return f"{t['key']}={t.get('value') or ''}:{t['effect']}"


def _pairs(values: Mapping[str, Any], sep: str) -> str:
    return ",".join(f"{k}{sep}{v}" for k, v in sorted(values.items()))


# -- AL2023 (nodeadm) --------------------------------------------------------------------------
def node_config(b: Bootstrap) -> dict[str, Any]:
    config = b.kubelet_fields()
    if b.taints:
        config["registerWithTaints"] = [
            {k: v for k, v in t.items() if k in ("key", "value", "effect") and v is not None}
            for t in b.taints
        ]
    spec: dict[str, Any] = {
        "cluster": {
            "name": b.cluster.name,
            "apiServerEndpoint": b.cluster.endpoint,
            "certificateAuthority": b.cluster.certificate_authority,
            "cidr": b.cluster.service_cidr,
        },
        "kubelet": {
            "config": config,
            "flags": ["--node-labels=" + ",".join(f"{k}={v}" for k, v in _labels(b))],
        },
    }
    if b.instance_store_policy == RAID0:
        spec["instance"] = {"localStorage": {"strategy": RAID0}}
    return {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": spec}


def al2023(b: Bootstrap) -> str:
    """The user's parts first, Joinery's NodeConfig last: nodeadm merges later documents over
    earlier ones, so the cluster, the taints (``karpenter.sh/unregistered`` among them) and
    maxPods the claim needs win over a user NodeConfig that sets them, as in Karpenter."""
    ours = "# Joinery generated NodeConfig\n" + yaml.safe_dump(node_config(b), sort_keys=False)
    return mime([*custom_parts(b.custom, nodeconfig_aware=True), (NODECONFIG_TYPE, ours)])


# -- AL2 (bootstrap.sh) ------------------------------------------------------------------------
def kubelet_flags(b: Bootstrap) -> list[str]:
    """The kubelet settings as command-line flags (AL2 and Windows bootstraps take these)."""
    k = b.kubelet_fields()
    flags = []
    labels = _labels(b)
    if labels:
        flags.append('--node-labels="' + ",".join(f"{n}={v}" for n, v in labels) + '"')
    if b.taints:
        flags.append('--register-with-taints="' + ",".join(_taint_str(t) for t in b.taints) + '"')
    for key, flag, sep in (
        ("systemReserved", "--system-reserved", "="),
        ("kubeReserved", "--kube-reserved", "="),
        ("evictionHard", "--eviction-hard", "<"),
        ("evictionSoft", "--eviction-soft", "<"),
        ("evictionSoftGracePeriod", "--eviction-soft-grace-period", "="),
    ):
        if k.get(key):
            flags.append(f'{flag}="{_pairs(k[key], sep)}"')
    for key, flag in (
        ("maxPods", "--max-pods"),
        ("podsPerCore", "--pods-per-core"),
        ("evictionMaxPodGracePeriod", "--eviction-max-pod-grace-period"),
        ("imageGCHighThresholdPercent", "--image-gc-high-threshold"),
        ("imageGCLowThresholdPercent", "--image-gc-low-threshold"),
    ):
        if k.get(key) is not None:
            flags.append(f"{flag}={k[key]}")
    if k.get("cpuCFSQuota") is not None:
        flags.append(f"--cpu-cfs-quota={'true' if k['cpuCFSQuota'] else 'false'}")
    return flags


def bootstrap_sh(b: Bootstrap) -> str:
    c = b.cluster
    k = b.kubelet_fields()
    lines = [
        "#!/bin/bash -xe",
        "exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1",
    ]
    args = [
        f"/etc/eks/bootstrap.sh '{c.name}' --apiserver-endpoint '{c.endpoint}'",
        f"--b64-cluster-ca '{c.certificate_authority}'",
    ]
    if c.ip_family == IPV6:
        args.append(f"--ip-family ipv6 --service-ipv6-cidr '{c.service_cidr}'")
    else:
        args.append(f"--service-ipv4-cidr '{c.service_cidr}'")
    args.append(f"--dns-cluster-ip '{k['clusterDNS'][0]}'")
    if "maxPods" in k:
        args.append("--use-max-pods false")
    args.append(f"--kubelet-extra-args '{' '.join(kubelet_flags(b))}'")
    if b.instance_store_policy == RAID0:
        args.append("--local-disks raid0")
    lines.append(" \\\n".join(args))
    return "\n".join(lines) + "\n"


def al2(b: Bootstrap) -> str:
    return mime([*custom_parts(b.custom, nodeconfig_aware=False), (SHELL_TYPE, bootstrap_sh(b))])


# -- MIME --------------------------------------------------------------------------------------
def mime(parts: list[tuple[str, str]]) -> str:
    out = [f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{BOUNDARY}"\n']
    for content_type, body in parts:
        out.append(f"--{BOUNDARY}\nContent-Type: {content_type}\n\n{body.rstrip()}\n")
    out.append(f"--{BOUNDARY}--\n")
    return "\n".join(out)


def custom_parts(custom: str | None, *, nodeconfig_aware: bool) -> list[tuple[str, str]]:
    """The user's user data as MIME parts: its own parts if it is MIME, else one part."""
    if not custom or not custom.strip():
        return []
    text = custom.strip()
    if text.startswith(("MIME-Version:", "Content-Type:")):
        msg = message_from_string(text)
        if msg.is_multipart():
            return [
                (p.get("Content-Type", SHELL_TYPE), str(p.get_payload()))
                for p in msg.walk()
                if not p.is_multipart()
            ]
        return [(msg.get("Content-Type", SHELL_TYPE), str(msg.get_payload()))]
    if nodeconfig_aware and _is_yaml_mapping(text):
        return [(NODECONFIG_TYPE, custom)]
    return [(SHELL_TYPE, custom)]


def _is_yaml_mapping(text: str) -> bool:
    try:
        return isinstance(yaml.safe_load(text), dict)
    except yaml.YAMLError:
        return False


# -- Bottlerocket (TOML) -----------------------------------------------------------------------
def bottlerocket_settings(b: Bootstrap) -> dict[str, Any]:
    doc: dict[str, Any] = tomllib.loads(b.custom) if b.custom and b.custom.strip() else {}
    settings = doc.setdefault("settings", {})
    kube = settings.setdefault("kubernetes", {})
    c = b.cluster
    kube["cluster-name"] = c.name
    kube["api-server"] = c.endpoint
    kube["cluster-certificate"] = c.certificate_authority
    k = b.kubelet_fields()
    kube["cluster-dns-ip"] = k["clusterDNS"][0]
    for ours, theirs in (
        ("maxPods", "max-pods"),
        ("evictionMaxPodGracePeriod", "eviction-max-pod-grace-period"),
        ("cpuCFSQuota", "cpu-cfs-quota-enforced"),
        ("systemReserved", "system-reserved"),
        ("kubeReserved", "kube-reserved"),
        ("evictionHard", "eviction-hard"),
        ("evictionSoft", "eviction-soft"),
        ("evictionSoftGracePeriod", "eviction-soft-grace-period"),
    ):
        if k.get(ours) is not None:
            kube[theirs] = k[ours]
    for ours, theirs in (
        ("imageGCHighThresholdPercent", "image-gc-high-threshold-percent"),
        ("imageGCLowThresholdPercent", "image-gc-low-threshold-percent"),
    ):
        if k.get(ours) is not None:
            kube[theirs] = str(k[ours])  # Bottlerocket takes these percentages as strings
    # Bottlerocket has no pods-per-core setting: max-pods already carries min(podsPerCore x
    # vCPUs, ...) from the catalog's pod-density formula.
    kube.setdefault("node-labels", {}).update(dict(_labels(b)))
    taints: dict[str, list[str]] = {}
    for t in b.taints:
        taints.setdefault(str(t["key"]), []).append(f"{t.get('value') or ''}:{t['effect']}")
    kube["node-taints"] = taints
    if b.instance_store_policy == RAID0:
        settings.setdefault("bootstrap-commands", {})["000-mount-instance-storage"] = {
            "commands": [
                ["apiclient", "ephemeral-storage", "init"],
                [
                    "apiclient",
                    "ephemeral-storage",
                    "bind",
                    "--dirs",
                    "/var/lib/containerd",
                    "/var/lib/kubelet",
                    "/var/log/pods",
                ],
            ],
            "mode": "always",
            "essential": True,
        }
    # Nodes Joinery launches join no Auto Scaling group; waiting for one would block kubelet.
    if "autoscaling" in settings:
        settings["autoscaling"]["should-wait"] = False
    return doc


def bottlerocket(b: Bootstrap) -> str:
    return dump_toml(bottlerocket_settings(b))


def dump_toml(doc: Mapping[str, Any]) -> str:
    """TOML for nested tables of strings, numbers, booleans and lists (what settings use)."""
    lines: list[str] = []

    def table(path: list[str], values: Mapping[str, Any]) -> None:
        scalars = {k: v for k, v in values.items() if not isinstance(v, Mapping)}
        tables = {k: v for k, v in values.items() if isinstance(v, Mapping)}
        if path and (scalars or not tables):
            lines.append(f"\n[{'.'.join(_toml_key(p) for p in path)}]")
        lines.extend(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars.items())
        for k, v in tables.items():
            table([*path, k], v)

    table([], doc)
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_key(key: str) -> str:
    bare = key.replace("-", "").replace("_", "").isalnum()
    return key if bare else json.dumps(key)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


# -- Windows (PowerShell) ----------------------------------------------------------------------
def windows(b: Bootstrap) -> str:
    c = b.cluster
    k = b.kubelet_fields()
    lines = ["<powershell>"]
    if b.custom and b.custom.strip():
        lines.append(b.custom.strip())
    lines.append(
        '[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"'
    )
    call = (
        f"& $EKSBootstrapScriptFile -EKSClusterName '{c.name}' -APIServerEndpoint '{c.endpoint}'"
        f" -Base64ClusterCA '{c.certificate_authority}' -ServiceCIDR '{c.service_cidr}'"
        f" -DNSClusterIP '{k['clusterDNS'][0]}'"
    )
    flags = kubelet_flags(b)
    if flags:
        call += f" -KubeletExtraArgs '{' '.join(flags)}'"
    lines.append(call)
    lines.append("</powershell>")
    return "\n".join(lines) + "\n"


def render(family: str, b: Bootstrap) -> str:
    if family == CUSTOM:
        # A custom AMI bootstraps itself: its user data goes through untouched, as Karpenter
        # passes it (no MIME wrapper, no NodeConfig: cloud-init or TOML stay what they are).
        return b.custom or ""
    if family == BOTTLEROCKET:
        return bottlerocket(b)
    if family == AL2:
        return al2(b)
    if family in WINDOWS:
        return windows(b)
    return al2023(b)


def encode(user_data: str) -> str:
    return base64.b64encode(user_data.encode()).decode()
