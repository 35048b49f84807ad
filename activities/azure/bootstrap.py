"""The VM custom data that joins a node to a self-hosted AKS cluster.

Karpenter Azure's self-hosted mode hands each VM a cloud-init document (base64, the VM's
``osProfile.customData``) that the AKS node image's provisioning reads: the API server, the
cluster CA, a TLS bootstrap token (or, without one, the kubelet's managed identity), the
cloud config the kubelet and credential provider use, and the kubelet's flags, node labels and
registration taints. Joinery renders the same contract in its own layout:

* ``/etc/kubernetes/certs/ca.crt`` — the cluster CA (PEM);
* ``/var/lib/kubelet/bootstrap-kubeconfig`` — the API server and the bootstrap credential
  (a token, or an ``exec`` plugin that gets an Entra token for the kubelet identity);
* ``/etc/kubernetes/azure.json`` — the cloud config (tenant, subscription, node resource
  group, location, subnet, the kubelet identity);
* ``/etc/default/kubelet`` — ``KUBELET_FLAGS`` (AKS's base flags, then the node class's
  ``kubelet`` block and ``maxPods``, then ``--register-with-taints``) and
  ``KUBELET_NODE_LABELS``;
* ``/opt/azure/joinery/node.env`` — the node's facts for the image's provisioning scripts
  (Kubernetes version, image family and OS SKU, architecture, network plugin);

and ``runcmd`` starts the kubelet. Every node registers with ``karpenter.sh/unregistered:
NoExecute`` beside the claim's taints and startup taints, as Karpenter requires.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from activities.azure import type_labels as AZ
from activities.azure.capacity import kube_reserved
from activities.azure.images import effective_name
from activities.azure.params import cluster_label
from activities.azure.skus import Sku
from activities.cloud.kubelet_labels import kubelet_may_set
from activities.cloud.launch import LaunchRequest
from models import labels as L
from models.aksnodeclass import AKSNodeClass, KubeletConfiguration

CA_PATH = "/etc/kubernetes/certs/ca.crt"
BOOTSTRAP_KUBECONFIG_PATH = "/var/lib/kubelet/bootstrap-kubeconfig"
KUBECONFIG_PATH = "/var/lib/kubelet/kubeconfig"
AZURE_JSON_PATH = "/etc/kubernetes/azure.json"
KUBELET_DEFAULTS_PATH = "/etc/default/kubelet"
NODE_ENV_PATH = "/opt/azure/joinery/node.env"
# The Entra application every AKS API server accepts tokens for (AKS's AAD server app id).
AKS_AAD_SERVER_APP_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
DEFAULT_SERVICE_CIDR = "10.0.0.0/16"
DEFAULT_CLUSTER_DNS = "10.0.0.10"
UNREGISTERED_TAINT = {"key": L.UNREGISTERED_TAINT_KEY, "effect": "NoExecute"}
KUBELET_IDENTITY_LABEL = f"{AZ.AKS}/kubelet-identity-client-id"
OS_SKU_REQUESTED_LABEL = f"{AZ.AKS}/os-sku-requested"
OS_SKU_EFFECTIVE_LABEL = f"{AZ.AKS}/os-sku-effective"
NODE_IMAGE_VERSION_LABEL = f"{AZ.AKS}/node-image-version"
ROLE_LABEL = f"{AZ.AKS}/role"


# AKS's kubelet flags that do not depend on the node class (Karpenter Azure's base set, less
# what newer kubelets dropped); the node class and the claim override them.
BASE_KUBELET_FLAGS: dict[str, str] = {
    "--address": "0.0.0.0",
    "--anonymous-auth": "false",
    "--authentication-token-webhook": "true",
    "--authorization-mode": "Webhook",
    "--cgroups-per-qos": "true",
    "--client-ca-file": CA_PATH,
    "--cloud-provider": "external",
    "--cluster-domain": "cluster.local",
    "--enforce-node-allocatable": "pods",
    "--event-qps": "0",
    "--eviction-hard": "memory.available<750Mi,nodefs.available<10%,nodefs.inodesFree<5%",
    "--image-gc-high-threshold": "85",
    "--image-gc-low-threshold": "80",
    "--kubeconfig": KUBECONFIG_PATH,
    "--bootstrap-kubeconfig": BOOTSTRAP_KUBECONFIG_PATH,
    "--max-pods": "110",
    "--node-status-update-frequency": "10s",
    "--pod-manifest-path": "/etc/kubernetes/manifests",
    "--pod-max-pids": "-1",
    "--protect-kernel-defaults": "true",
    "--read-only-port": "0",
    "--resolv-conf": "/run/systemd/resolve/resolv.conf",
    "--rotate-certificates": "true",
    "--streaming-connection-idle-timeout": "4h",
    "--image-credential-provider-config": "/var/lib/kubelet/credential-provider-config.yaml",
    "--image-credential-provider-bin-dir": "/var/lib/kubelet/credential-provider",
}


def cluster_dns_ip(service_cidr: str) -> str:
    """The cluster DNS service address AKS uses: the service range's tenth address."""
    net = ipaddress.ip_network(service_cidr, strict=False)
    return str(net.network_address + 10)


def os_sku(image_family: str) -> str:
    """``kubernetes.azure.com/os-sku`` for a node class's image family: AzureLinux or Ubuntu
    (the catalog's requirement, ``type_labels.os_sku``)."""
    return AZ.os_sku(image_family)


@dataclass(frozen=True)
class ClusterJoin:
    """The cluster's facts every node of it needs (the same for all claims)."""

    cluster_name: str
    api_server: str  # https://<fqdn>[:port], or the bare host name
    ca_bundle: str  # PEM, or base64 of PEM (as AKS returns it)
    kubernetes_version: str
    subscription_id: str
    tenant_id: str
    node_resource_group: str
    location: str
    bootstrap_token: str = ""  # <token-id>.<token-secret>; else the kubelet identity is used
    kubelet_identity_client_id: str = ""
    cluster_dns: str = DEFAULT_CLUSTER_DNS
    network_plugin: str = "azure"
    network_plugin_mode: str = "overlay"
    network_policy: str = ""

    @property
    def server_url(self) -> str:
        api = self.api_server.strip().rstrip("/")
        if "://" not in api:
            api = f"https://{api}:443"
        return api

    def ca_pem(self) -> str:
        """The CA bundle as PEM text, whether it was given as PEM or base64 of it."""
        text = self.ca_bundle.strip()
        if text.startswith("-----BEGIN"):
            return text + "\n"
        try:
            decoded = base64.b64decode(text, validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            raise ValueError("cluster CA bundle: neither PEM nor base64 of PEM") from None
        if not decoded.lstrip().startswith("-----BEGIN"):
            raise ValueError("cluster CA bundle: neither PEM nor base64 of PEM")
        return decoded.strip() + "\n"


@dataclass(frozen=True)
class BootstrapParams:
    """Everything one VM's custom data says."""

    cluster: ClusterJoin
    image_family: str  # the node class's imageFamily (Ubuntu, Ubuntu2204, Ubuntu2404, AzureLinux)
    arch: str = "amd64"
    node_image_version: str = ""  # the gallery version booted (a node label, as AKS sets)
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Mapping[str, Any]] = ()
    startup_taints: Sequence[Mapping[str, Any]] = ()
    kubelet: KubeletConfiguration | None = None
    max_pods: int = 110
    subnet_id: str = ""
    fips: bool = False
    trusted_launch: bool = False
    kube_reserved: Mapping[str, str] = field(default_factory=dict)
    system_reserved: Mapping[str, str] = field(default_factory=dict)
    eviction_hard: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def for_launch(
        cluster: ClusterJoin,
        nodeclass: AKSNodeClass,
        request: LaunchRequest,
        *,
        arch: str,
        max_pods: int,
        subnet_id: str,
        node_image_version: str = "",
        labels: Mapping[str, str] | None = None,
        sku: Sku | None = None,
    ) -> BootstrapParams:
        """The parameters for one claim: its labels (``labels`` adds the instance type's) and
        taints, the class's kubelet block and image family; with the VM's ``sku``, the
        kubelet reserves what the catalog took off its allocatable (``capacity``)."""
        return BootstrapParams(
            cluster=cluster,
            image_family=nodeclass.spec.image_family,
            arch=arch,
            node_image_version=node_image_version,
            labels={**request.labels, **(labels or {})},
            taints=tuple(request.taints),
            startup_taints=tuple(request.startup_taints),
            kubelet=nodeclass.spec.kubelet,
            max_pods=max_pods,
            subnet_id=subnet_id,
            fips=nodeclass.spec.fips_mode == "FIPS",
            trusted_launch=nodeclass.spec.trusted_launch_enabled,
            kube_reserved=kube_reserved_flags(sku) if sku is not None else {},
        )

    def registration_taints(self) -> list[Mapping[str, Any]]:
        """The claim's taints, its startup taints and ``karpenter.sh/unregistered``, each once."""
        out: list[Mapping[str, Any]] = []
        seen: set[tuple[str, str, str]] = set()
        for t in (*self.taints, *self.startup_taints, UNREGISTERED_TAINT):
            key = (str(t.get("key")), str(t.get("value") or ""), str(t.get("effect")))
            if key not in seen:
                seen.add(key)
                out.append(t)
        return out

    def effective_family(self) -> str:
        """The family the node boots (Ubuntu2204, Ubuntu2404, AzureLinux2, AzureLinux3...)."""
        return effective_name(
            self.image_family,
            self.cluster.kubernetes_version,
            fips=self.fips,
            trusted_launch=self.trusted_launch,
        )

    def node_labels(self) -> dict[str, str]:
        """The labels the kubelet registers: AKS's own (those Karpenter Azure's label
        provider sets), then the claim's it may set."""
        out = {
            ROLE_LABEL: "agent",
            AZ.AKS_CLUSTER: cluster_label(self.cluster.node_resource_group),
            AZ.AKS_MODE: "user",
            AZ.AKS_OS_SKU: os_sku(self.image_family),
            OS_SKU_REQUESTED_LABEL: self.image_family,
            OS_SKU_EFFECTIVE_LABEL: self.effective_family(),
            # startup taints are the node's own to remove: Karpenter must not put them back
            L.DO_NOT_SYNC_TAINTS: "true",
        }
        if self.fips:
            out[AZ.AKS_FIPS_ENABLED] = "true"
        if self.node_image_version:
            out[NODE_IMAGE_VERSION_LABEL] = self.node_image_version
        if self.cluster.kubelet_identity_client_id:
            out[KUBELET_IDENTITY_LABEL] = self.cluster.kubelet_identity_client_id
        for k, v in self.labels.items():
            if kubelet_may_set(k):
                out[k] = v
        return out

    def kubelet_flags(self) -> dict[str, str]:
        flags = dict(BASE_KUBELET_FLAGS)
        flags["--cluster-dns"] = self.cluster.cluster_dns
        flags.update(kubelet_block_flags(self.kubelet))
        flags["--max-pods"] = str(self.max_pods)
        for name, values, sep in (
            ("--kube-reserved", self.kube_reserved, "="),
            ("--system-reserved", self.system_reserved, "="),
            ("--eviction-hard", self.eviction_hard, "<"),
        ):
            if values:
                flags[name] = ",".join(f"{k}{sep}{v}" for k, v in sorted(values.items()))
        flags["--register-with-taints"] = ",".join(
            taint_flag(t) for t in self.registration_taints()
        )
        return flags


def kube_reserved_flags(sku: Sku) -> dict[str, str]:
    """``--kube-reserved`` values for a VM size: AKS's sliding scale (``capacity``), the
    same numbers the catalog subtracts, so the node's allocatable is the planned one."""
    cpu_milli, memory_bytes = kube_reserved(sku.vcpus or 0, sku.memory_gib or 0.0)
    return {"cpu": f"{cpu_milli}m", "memory": f"{memory_bytes // 2**20}Mi"}


def taint_flag(taint: Mapping[str, Any]) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as the kubelet reads it."""
    value = taint.get("value")
    head = f"{taint['key']}={value}" if value else str(taint["key"])
    return f"{head}:{taint['effect']}"


def kubelet_block_flags(kubelet: KubeletConfiguration | None) -> dict[str, str]:
    """The node class's ``kubelet`` fields as kubelet flags (those AKS lets a pool set)."""
    if kubelet is None:
        return {}
    out = {
        "--cpu-cfs-quota": str(kubelet.cpu_cfs_quota).lower(),
        "--cpu-cfs-quota-period": kubelet.cpu_cfs_quota_period,
        "--container-log-max-size": kubelet.container_log_max_size,
        "--container-log-max-files": str(kubelet.container_log_max_files),
    }
    if kubelet.cpu_manager_policy != "none":
        out["--cpu-manager-policy"] = kubelet.cpu_manager_policy
    if kubelet.topology_manager_policy != "none":
        out["--topology-manager-policy"] = kubelet.topology_manager_policy
    if kubelet.image_gc_high_threshold_percent is not None:
        out["--image-gc-high-threshold"] = str(kubelet.image_gc_high_threshold_percent)
    if kubelet.image_gc_low_threshold_percent is not None:
        out["--image-gc-low-threshold"] = str(kubelet.image_gc_low_threshold_percent)
    if kubelet.pod_pids_limit is not None:
        out["--pod-max-pids"] = str(kubelet.pod_pids_limit)
    if kubelet.allowed_unsafe_sysctls:
        out["--allowed-unsafe-sysctls"] = ",".join(kubelet.allowed_unsafe_sysctls)
    if kubelet.fail_swap_on is not None:
        out["--fail-swap-on"] = str(kubelet.fail_swap_on).lower()
    return out


def _bootstrap_kubeconfig(cluster: ClusterJoin) -> dict[str, Any]:
    if cluster.bootstrap_token:
        user: dict[str, Any] = {"token": cluster.bootstrap_token}
    elif cluster.kubelet_identity_client_id:
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": "/usr/local/bin/kubelogin",
                "args": [
                    "get-token",
                    "--login",
                    "msi",
                    "--client-id",
                    cluster.kubelet_identity_client_id,
                    "--server-id",
                    AKS_AAD_SERVER_APP_ID,
                ],
                "interactiveMode": "Never",
            }
        }
    else:
        raise ValueError("bootstrap: neither a bootstrap token nor a kubelet identity is given")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "localcluster",
                "cluster": {"server": cluster.server_url, "certificate-authority": CA_PATH},
            }
        ],
        "users": [{"name": "kubelet-bootstrap", "user": user}],
        "contexts": [
            {
                "name": "bootstrap-context",
                "context": {"cluster": "localcluster", "user": "kubelet-bootstrap"},
            }
        ],
        "current-context": "bootstrap-context",
    }


def _subnet_parts(subnet_id: str) -> dict[str, str]:
    parts = subnet_id.strip("/").split("/")
    low = [p.lower() for p in parts]
    out = {"vnetResourceGroup": "", "vnetName": "", "subnetName": ""}
    for key, marker in (
        ("vnetResourceGroup", "resourcegroups"),
        ("vnetName", "virtualnetworks"),
        ("subnetName", "subnets"),
    ):
        if marker in low and low.index(marker) + 1 < len(parts):
            out[key] = parts[low.index(marker) + 1]
    return out


def _azure_json(params: BootstrapParams) -> dict[str, Any]:
    c = params.cluster
    return {
        "cloud": "AzurePublicCloud",
        "tenantId": c.tenant_id,
        "subscriptionId": c.subscription_id,
        "resourceGroup": c.node_resource_group,
        "location": c.location,
        "vmType": "standard",
        **_subnet_parts(params.subnet_id),
        "useManagedIdentityExtension": True,
        "userAssignedIdentityID": c.kubelet_identity_client_id,
        "useInstanceMetadata": True,
        "loadBalancerSku": "Standard",
    }


def _env_file(values: Mapping[str, str]) -> str:
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in values.items())


def node_env(params: BootstrapParams) -> dict[str, str]:
    c = params.cluster
    return {
        "CLUSTER_NAME": c.cluster_name,
        "API_SERVER": c.server_url,
        "KUBERNETES_VERSION": c.kubernetes_version.removeprefix("v"),
        "IMAGE_FAMILY": params.image_family,
        "IMAGE_FAMILY_EFFECTIVE": params.effective_family(),
        "OS_SKU": os_sku(params.image_family),
        "ARCH": params.arch,
        "NODE_IMAGE_VERSION": params.node_image_version,
        "NETWORK_PLUGIN": c.network_plugin,
        "NETWORK_PLUGIN_MODE": c.network_plugin_mode,
        "NETWORK_POLICY": c.network_policy,
        "CLUSTER_DNS": c.cluster_dns,
        "TLS_BOOTSTRAP": "token" if c.bootstrap_token else "kubelet-identity",
    }


def render_cloud_config(params: BootstrapParams) -> str:
    """The cloud-init document (text) the VM boots with."""
    flags = params.kubelet_flags()
    labels = params.node_labels()
    kubelet_defaults = _env_file(
        {
            "KUBELET_FLAGS": " ".join(f"{k}={v}" for k, v in sorted(flags.items())),
            "KUBELET_NODE_LABELS": ",".join(f"{k}={v}" for k, v in sorted(labels.items())),
            "KUBELET_REGISTER_SCHEDULABLE": "true",
        }
    )

    def file(path: str, content: str, mode: str = "0644") -> dict[str, str]:
        return {"path": path, "owner": "root:root", "permissions": mode, "content": content}

    doc = {
        "write_files": [
            file(CA_PATH, params.cluster.ca_pem()),
            file(
                BOOTSTRAP_KUBECONFIG_PATH,
                yaml.safe_dump(_bootstrap_kubeconfig(params.cluster), sort_keys=False),
                "0600",
            ),
            file(AZURE_JSON_PATH, json.dumps(_azure_json(params), indent=2) + "\n", "0600"),
            file(KUBELET_DEFAULTS_PATH, kubelet_defaults),
            file(NODE_ENV_PATH, _env_file(node_env(params))),
        ],
        "runcmd": [
            ["systemctl", "daemon-reload"],
            ["systemctl", "enable", "--now", "kubelet"],
        ],
    }
    return "#cloud-config\n" + yaml.safe_dump(doc, sort_keys=False, width=1 << 16)


def render_custom_data(params: BootstrapParams) -> str:
    """The VM's ``osProfile.customData``: the cloud-init document, base64-encoded."""
    return base64.b64encode(render_cloud_config(params).encode()).decode()
