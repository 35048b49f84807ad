"""From an EKS cluster in moto to each AMI family's user data, parsed back field by field.

The cluster is discovered through DescribeCluster (version 1.30, service CIDR 172.20.0.0/16,
both different from Joinery's defaults), so the test fails if any of endpoint, CA, service
range, version or a kubelet field is dropped or taken from a default.
"""

from __future__ import annotations

import base64
import re
import shlex
import tomllib
from dataclasses import dataclass, replace
from email import message_from_string
from typing import Any

import pytest
import yaml

from activities.ec2.clients import AWSClients
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from sandbox.ec2.seed import seed_eks_amis, seed_eks_cluster

REGION = "us-east-1"
CLUSTER = "prod-130"
Env = Any  # conftest.Env
SessionCatalog = Any  # conftest.SessionCatalog
VERSION = "1.30"
SERVICE_CIDR = "172.20.0.0/16"
KUBELET: dict[str, Any] = {
    "maxPods": 42,
    "podsPerCore": 4,
    "systemReserved": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"},
    "kubeReserved": {"cpu": "200m", "memory": "200Mi"},
    "evictionHard": {"memory.available": "5%", "nodefs.available": "10%"},
    "evictionSoft": {"memory.available": "10%"},
    "evictionSoftGracePeriod": {"memory.available": "1m0s"},
    "evictionMaxPodGracePeriod": 60,
    "imageGCHighThresholdPercent": 85,
    "imageGCLowThresholdPercent": 80,
    "cpuCFSQuota": False,
    "clusterDNS": ["172.20.0.53"],
}
# The same settings as kubelet command-line flags (AL2 and Windows bootstraps).
FLAGS = {
    "--max-pods": "42",
    "--pods-per-core": "4",
    "--system-reserved": "cpu=100m,ephemeral-storage=1Gi,memory=100Mi",
    "--kube-reserved": "cpu=200m,memory=200Mi",
    "--eviction-hard": "memory.available<5%,nodefs.available<10%",
    "--eviction-soft": "memory.available<10%",
    "--eviction-soft-grace-period": "memory.available=1m0s",
    "--eviction-max-pod-grace-period": "60",
    "--image-gc-high-threshold": "85",
    "--image-gc-low-threshold": "80",
    "--cpu-cfs-quota": "false",
}
FAMILY_IMAGE = {
    "al2023@latest": ("al2023", "standard", "x86_64"),
    "al2@latest": ("al2", "standard", "x86_64"),
    "bottlerocket@latest": ("bottlerocket", "standard", "x86_64"),
    "windows2022@latest": ("windows2022", "standard", "x86_64"),
}


@dataclass
class Discovered:
    provider: EC2Provider
    cluster: dict[str, Any]
    images: dict[tuple[str, str, str], str]
    make_request: Any  # conftest.RequestFactory


@pytest.fixture
def discovered(env: Env, session_catalog: SessionCatalog, make_request: Any) -> Discovered:
    cluster = seed_eks_cluster(env.clients.ec2, CLUSTER, VERSION, SERVICE_CIDR)
    amis = seed_eks_amis(
        REGION, VERSION, releases=("v20240920",), bottlerocket_releases=("1.24.0",)
    )
    provider = _provider(env, session_catalog, ClusterInfo(CLUSTER))
    return Discovered(provider, cluster, amis.images, make_request)


def _provider(env: Env, catalog: SessionCatalog, cluster: ClusterInfo) -> EC2Provider:
    settings = ProviderSettings(region=REGION, cluster=cluster, discover_cluster=True)
    clients = AWSClients.create(REGION, env.server.endpoint_url, env.server.session())
    provider = EC2Provider.create(settings, clients, clock=env.clock)
    provider.catalog.use_raw(catalog.raw)
    provider.pricing.load(catalog.on_demand, catalog.spot, catalog.source)
    return provider


def _launch(d: Discovered, env: Env, make_nodeclass: Any, alias: str, **spec: Any) -> str:
    """Launch one m5.large; return its image id and leave its template's user data readable."""
    nc = make_nodeclass.build(amiSelectorTerms=[{"alias": alias}], **spec)
    name = f"claim-{alias.split('@')[0]}"
    request = d.make_request.build(
        name,
        labels={"team": "web", "kubernetes.io/not-allowed": "x"},
        taints=[{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
        resources={"cpu": "1", "memory": "1Gi", "pods": "3"},
    )
    result = d.provider.launch(request, nc)
    return result.image_id


def _user_data(env: Env) -> str:
    names = [
        t["LaunchTemplateName"]
        for t in env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    ]
    assert len(names) == 1, names
    data = env.clients.ec2.describe_launch_template_versions(LaunchTemplateName=names[0])
    raw = data["LaunchTemplateVersions"][0]["LaunchTemplateData"]["UserData"]
    return base64.b64decode(raw).decode()


def _raid0_with(d: Discovered, env: Env, make_nodeclass: Any, alias: str, own: str) -> str:
    """The user data of a RAID0 NodeClass with its own user data (earlier templates removed)."""
    for t in env.clients.ec2.describe_launch_templates()["LaunchTemplates"]:
        env.clients.ec2.delete_launch_template(LaunchTemplateName=t["LaunchTemplateName"])
    _launch(d, env, make_nodeclass, alias, userData=own, instanceStorePolicy="RAID0")
    return _user_data(env)


def _mime_parts(text: str) -> list[tuple[str, str]]:
    msg = message_from_string(text)
    assert msg.is_multipart(), text
    return [
        (p.get_content_type(), str(p.get_payload())) for p in msg.walk() if not p.is_multipart()
    ]


def _flag_map(flags: list[str]) -> dict[str, str]:
    out = {}
    for f in flags:
        key, _, value = f.partition("=")
        out[key] = value
    return out


def _bootstrap_args(script: str) -> list[str]:
    line = next(ln for ln in script.replace("\\\n", " ").splitlines() if "bootstrap.sh" in ln)
    return shlex.split(line)


def _arg(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_discovery_reads_the_eks_cluster(discovered: Discovered) -> None:
    info = discovered.provider.cluster.current()
    assert info.kubernetes_version == VERSION and info.service_cidr == SERVICE_CIDR
    assert info.endpoint == discovered.cluster["endpoint"].rstrip("/")
    assert info.certificate_authority == discovered.cluster["certificateAuthority"]["data"]
    assert info.dns_ip == "172.20.0.10"


def test_settings_override_discovered_endpoint_and_ca(
    env: Env, session_catalog: SessionCatalog, discovered: Discovered
) -> None:
    static = ClusterInfo(CLUSTER, endpoint="https://10.0.0.1:6443", certificate_authority="Q0E=")
    info = _provider(env, session_catalog, static).cluster.current()
    assert (info.endpoint, info.certificate_authority) == ("https://10.0.0.1:6443", "Q0E=")
    assert info.kubernetes_version == VERSION and info.service_cidr == SERVICE_CIDR


def test_al2023_nodeconfig_carries_cluster_and_every_kubelet_field(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    image = _launch(discovered, env, make_nodeclass, "al2023@latest", kubelet=KUBELET)
    assert image == discovered.images[FAMILY_IMAGE["al2023@latest"]]
    parts = _mime_parts(_user_data(env))
    assert [t for t, _ in parts] == ["application/node.eks.aws"]
    config = yaml.safe_load(parts[0][1])
    assert config["kind"] == "NodeConfig"
    cluster = config["spec"]["cluster"]
    assert cluster == {
        "name": CLUSTER,
        "apiServerEndpoint": discovered.cluster["endpoint"].rstrip("/"),
        "certificateAuthority": discovered.cluster["certificateAuthority"]["data"],
        "cidr": SERVICE_CIDR,
    }
    kubelet = config["spec"]["kubelet"]
    assert {k: kubelet["config"][k] for k in KUBELET} == KUBELET
    assert kubelet["config"]["registerWithTaints"][0] == {
        "key": "dedicated",
        "value": "web",
        "effect": "NoSchedule",
    }
    labels = kubelet["flags"][0].removeprefix("--node-labels=").split(",")
    assert "team=web" in labels and "karpenter.sh/nodepool=default" in labels
    # a label the kubelet may not set on itself would stop it from starting
    assert not any(lb.startswith("kubernetes.io/not-allowed") for lb in labels)


def test_al2_bootstrap_arguments(env: Env, discovered: Discovered, make_nodeclass: Any) -> None:
    image = _launch(discovered, env, make_nodeclass, "al2@latest", kubelet=KUBELET)
    assert image == discovered.images[FAMILY_IMAGE["al2@latest"]]
    parts = _mime_parts(_user_data(env))
    args = _bootstrap_args(parts[-1][1])
    assert args[:2] == ["/etc/eks/bootstrap.sh", CLUSTER]
    assert _arg(args, "--apiserver-endpoint") == discovered.cluster["endpoint"].rstrip("/")
    assert _arg(args, "--b64-cluster-ca") == discovered.cluster["certificateAuthority"]["data"]
    assert _arg(args, "--service-ipv4-cidr") == SERVICE_CIDR
    assert _arg(args, "--dns-cluster-ip") == "172.20.0.53"
    assert _arg(args, "--use-max-pods") == "false"
    flags = _flag_map(shlex.split(_arg(args, "--kubelet-extra-args")))
    assert {k: flags[k] for k in FLAGS} == FLAGS
    taints = flags["--register-with-taints"].split(",")
    assert taints == ["dedicated=web:NoSchedule", "karpenter.sh/unregistered=:NoExecute"]
    assert "team=web" in flags["--node-labels"].split(",")


def test_bottlerocket_toml(env: Env, discovered: Discovered, make_nodeclass: Any) -> None:
    image = _launch(discovered, env, make_nodeclass, "bottlerocket@latest", kubelet=KUBELET)
    assert image == discovered.images[FAMILY_IMAGE["bottlerocket@latest"]]
    kube = tomllib.loads(_user_data(env))["settings"]["kubernetes"]
    assert kube["cluster-name"] == CLUSTER
    assert kube["api-server"] == discovered.cluster["endpoint"].rstrip("/")
    assert kube["cluster-certificate"] == discovered.cluster["certificateAuthority"]["data"]
    assert kube["cluster-dns-ip"] == "172.20.0.53"
    assert kube["max-pods"] == 42
    assert kube["system-reserved"] == KUBELET["systemReserved"]
    assert kube["kube-reserved"] == KUBELET["kubeReserved"]
    assert kube["eviction-hard"] == KUBELET["evictionHard"]
    assert kube["eviction-soft"] == KUBELET["evictionSoft"]
    assert kube["eviction-soft-grace-period"] == KUBELET["evictionSoftGracePeriod"]
    assert kube["eviction-max-pod-grace-period"] == 60
    assert kube["image-gc-high-threshold-percent"] == "85"
    assert kube["image-gc-low-threshold-percent"] == "80"
    assert kube["cpu-cfs-quota-enforced"] is False
    assert kube["node-labels"]["team"] == "web"
    assert kube["node-taints"]["dedicated"] == ["web:NoSchedule"]
    assert kube["node-taints"]["karpenter.sh/unregistered"] == [":NoExecute"]


def test_windows_powershell(env: Env, discovered: Discovered, make_nodeclass: Any) -> None:
    image = _launch(discovered, env, make_nodeclass, "windows2022@latest", kubelet=KUBELET)
    assert image == discovered.images[FAMILY_IMAGE["windows2022@latest"]]
    text = _user_data(env)
    assert text.startswith("<powershell>") and text.rstrip().endswith("</powershell>")
    call = next(ln for ln in text.splitlines() if ln.startswith("& $EKSBootstrapScriptFile"))
    args = shlex.split(call)
    assert _arg(args, "-EKSClusterName") == CLUSTER
    assert _arg(args, "-APIServerEndpoint") == discovered.cluster["endpoint"].rstrip("/")
    assert _arg(args, "-Base64ClusterCA") == discovered.cluster["certificateAuthority"]["data"]
    assert _arg(args, "-ServiceCIDR") == SERVICE_CIDR
    assert _arg(args, "-DNSClusterIP") == "172.20.0.53"
    flags = _flag_map(shlex.split(_arg(args, "-KubeletExtraArgs")))
    assert {k: flags[k] for k in FLAGS} == FLAGS


def test_defaults_derive_cluster_dns_from_the_service_cidr(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    _launch(discovered, env, make_nodeclass, "al2023@latest")
    config = yaml.safe_load(_mime_parts(_user_data(env))[0][1])
    assert config["spec"]["kubelet"]["config"]["clusterDNS"] == ["172.20.0.10"]
    assert config["spec"]["kubelet"]["config"]["maxPods"] == 29  # the ENI limit of m5.large


def test_al2023_merges_the_users_nodeconfig_and_raid0(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    own = (
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
        "spec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n"
    )
    parts = _mime_parts(_raid0_with(discovered, env, make_nodeclass, "al2023@latest", own))
    assert [t for t, _ in parts] == ["application/node.eks.aws", "application/node.eks.aws"]
    theirs, ours = (yaml.safe_load(body) for _, body in parts)  # ours last: nodeadm's winner
    assert ours["spec"]["instance"]["localStorage"]["strategy"] == "RAID0"
    assert theirs["spec"]["kubelet"]["config"]["shutdownGracePeriod"] == "30s"


def _nodeadm_merge(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """nodeadm's rule for several NodeConfigs, written from its documentation: documents are
    merged in order, a later document's value replacing an earlier one's (maps merge key by
    key; lists and scalars are replaced)."""

    def merge(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            return {
                k: merge(a[k], b[k]) if k in a and k in b else b.get(k, a.get(k))
                for k in {**a, **b}
            }
        return b

    out: dict[str, Any] = {}
    for doc in documents:
        out = merge(out, doc)
    return out


def test_al2023_a_users_nodeconfig_cannot_drop_the_claims_taints_or_max_pods(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    own = (
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
        "spec:\n  kubelet:\n    config:\n      maxPods: 250\n"
        "      registerWithTaints: []\n      shutdownGracePeriod: 30s\n"
    )
    _launch(discovered, env, make_nodeclass, "al2023@latest", userData=own)
    parts = _mime_parts(_user_data(env))
    merged = _nodeadm_merge([yaml.safe_load(body) for _, body in parts])
    config = merged["spec"]["kubelet"]["config"]
    taints = {(t["key"], t["effect"]) for t in config["registerWithTaints"]}
    assert ("karpenter.sh/unregistered", "NoExecute") in taints
    assert ("dedicated", "NoSchedule") in taints
    assert config["maxPods"] == 29  # the pods the claim was planned with, not the user's 250
    assert config["shutdownGracePeriod"] == "30s"  # the user's other settings still apply


def test_custom_family_user_data_verbatim_and_no_default_volume(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    own = "#cloud-config\nruncmd:\n  - [ /opt/bootstrap, --cluster, mine ]\n"
    image = discovered.images[FAMILY_IMAGE["al2023@latest"]]
    nc = make_nodeclass.build(amiFamily="Custom", amiSelectorTerms=[{"id": image}], userData=own)
    request = discovered.make_request.build(
        "claim-custom", resources={"cpu": "1", "memory": "1Gi", "pods": "3"}
    )
    assert discovered.provider.launch(request, nc).image_id == image
    assert _user_data(env) == own  # no MIME wrapper, no NodeConfig: cloud-init runs it
    [template] = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    data = env.clients.ec2.describe_launch_template_versions(
        LaunchTemplateName=template["LaunchTemplateName"]
    )["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    assert not data.get("BlockDeviceMappings")  # the AMI's own snapshot sizes its disks


def test_al2_and_bottlerocket_raid0_and_user_data_merge(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    script = "#!/bin/bash\necho hello"
    parts = _mime_parts(_raid0_with(discovered, env, make_nodeclass, "al2@latest", script))
    assert parts[0] == ("text/x-shellscript", "#!/bin/bash\necho hello\n")
    assert _arg(_bootstrap_args(parts[-1][1]), "--local-disks") == "raid0"
    own = (
        "[settings.host-containers.admin]\nenabled = true\n"
        '[settings.kubernetes]\ncluster-name = "wrong"\n'
    )
    doc = tomllib.loads(_raid0_with(discovered, env, make_nodeclass, "bottlerocket@latest", own))
    assert doc["settings"]["host-containers"]["admin"]["enabled"] is True
    assert doc["settings"]["kubernetes"]["cluster-name"] == CLUSTER
    mount = doc["settings"]["bootstrap-commands"]["000-mount-instance-storage"]
    assert mount["commands"][0] == ["apiclient", "ephemeral-storage", "init"]
    assert mount["essential"] is True


def test_launch_template_honours_network_monitoring_metadata_and_disks(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    _launch(
        discovered,
        env,
        make_nodeclass,
        "al2023@latest",
        detailedMonitoring=True,
        associatePublicIPAddress=False,
        metadataOptions={"httpTokens": "optional", "httpPutResponseHopLimit": 2},
        blockDeviceMappings=[
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3"}}
        ],
    )
    names = [
        t["LaunchTemplateName"]
        for t in env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    ]
    data = env.clients.ec2.describe_launch_template_versions(LaunchTemplateName=names[0])[
        "LaunchTemplateVersions"
    ][0]["LaunchTemplateData"]
    assert data["Monitoring"] == {"Enabled": True}
    assert data["NetworkInterfaces"][0]["AssociatePublicIpAddress"] is False
    assert data["MetadataOptions"]["HttpTokens"] == "optional"
    assert data["MetadataOptions"]["HttpPutResponseHopLimit"] == 2
    assert data["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 100
    assert re.fullmatch(r"karpenter\.k8s\.aws/[0-9a-f]{32}", names[0])


def test_discovery_follows_an_upgrade_and_survives_an_outage(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    """Re-read after the TTL: a control-plane upgrade moves aliases to the new version; an EKS
    outage afterwards keeps the last good answer instead of failing launches."""
    source = discovered.provider.cluster
    assert source.current().kubernetes_version == VERSION
    eks = env.clients.eks
    eks.delete_cluster(name=CLUSTER)
    seed_eks_cluster(env.clients.ec2, CLUSTER, "1.31", SERVICE_CIDR)
    assert source.current().kubernetes_version == VERSION  # still cached
    env.clock.advance(301)
    assert source.current().kubernetes_version == "1.31"
    amis = discovered.provider.resolve_nodeclass(make_nodeclass.build()).amis
    assert amis and all("-1.31-" in a.name for a in amis)  # the alias follows the upgrade
    eks.delete_cluster(name=CLUSTER)  # DescribeCluster now fails: ResourceNotFound
    env.clock.advance(301)
    assert source.current().kubernetes_version == "1.31"


def test_ipv6_cluster_templates_give_the_primary_interface_an_ipv6_address(
    env: Env, session_catalog: SessionCatalog, discovered: Discovered, make_nodeclass: Any
) -> None:
    """Real subnets often leave IPv6 auto-assign off; an IPv6 cluster's node without an IPv6
    address never becomes Ready, so the template asks for one (moto assigns none either way)."""
    ipv6 = ClusterInfo(
        CLUSTER,
        endpoint="https://10.0.0.1:6443",
        certificate_authority="Q0E=",
        service_cidr="fd5e:3a1c:9e2b::/108",
        kubernetes_version=VERSION,
        ip_family="ipv6",
    )
    settings = ProviderSettings(region=REGION, cluster=ipv6, discover_cluster=False)
    clients = AWSClients.create(REGION, env.server.endpoint_url, env.server.session())
    provider = EC2Provider.create(settings, clients, clock=env.clock)
    provider.catalog.use_raw(session_catalog.raw)
    provider.pricing.load(session_catalog.on_demand, session_catalog.spot, session_catalog.source)
    _launch(replace(discovered, provider=provider), env, make_nodeclass, "al2023@latest")
    (template,) = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    data = env.clients.ec2.describe_launch_template_versions(
        LaunchTemplateName=template["LaunchTemplateName"]
    )["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    (interface,) = data["NetworkInterfaces"]
    assert interface["DeviceIndex"] == 0
    assert interface["PrimaryIpv6"] is True and interface["Ipv6AddressCount"] == 1
    assert interface["Groups"] and all(g.startswith("sg-") for g in interface["Groups"])
    assert "SecurityGroupIds" not in data  # EC2 refuses groups both here and on an interface
    config = yaml.safe_load(_mime_parts(_user_data(env))[0][1])
    assert config["spec"]["cluster"]["cidr"] == "fd5e:3a1c:9e2b::/108"


def test_ipv4_cluster_templates_leave_the_interface_to_the_subnet(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    _launch(discovered, env, make_nodeclass, "al2023@latest")
    (template,) = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    data = env.clients.ec2.describe_launch_template_versions(
        LaunchTemplateName=template["LaunchTemplateName"]
    )["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    assert "NetworkInterfaces" not in data and data["SecurityGroupIds"]


def _template_data(env: Env) -> dict[str, Any]:
    (template,) = env.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    versions = env.clients.ec2.describe_launch_template_versions(
        LaunchTemplateName=template["LaunchTemplateName"]
    )
    data: dict[str, Any] = versions["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    return data


@pytest.mark.parametrize(("instance_type", "cards"), [("c5n.18xlarge", 1), ("c6in.32xlarge", 2)])
def test_a_claim_requesting_efa_gets_every_efa_interface_of_its_type(
    env: Env, discovered: Discovered, make_nodeclass: Any, instance_type: str, cards: int
) -> None:
    """Karpenter's rule: pods that request vpc.amazonaws.com/efa get a node whose template has
    one EFA interface per network card the type supports (DescribeInstanceTypes'
    MaximumEfaInterfaces), else the device plugin would advertise none."""
    request = discovered.make_request.build(
        "claim-efa",
        requirements=[
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": [instance_type],
            },
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
        resources={"cpu": "1", "vpc.amazonaws.com/efa": "1"},
    )
    result = discovered.provider.launch(request, make_nodeclass.build())
    assert result.instance_type == instance_type
    interfaces = _template_data(env)["NetworkInterfaces"]
    assert [i["NetworkCardIndex"] for i in interfaces] == list(range(cards))
    assert [i["DeviceIndex"] for i in interfaces] == [0] + [1] * (cards - 1)
    assert {i["InterfaceType"] for i in interfaces} == {"efa"}
    assert all(i["Groups"] for i in interfaces)


def test_a_claim_without_efa_gets_no_efa_interface_on_an_efa_type(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    request = discovered.make_request.build(
        "claim-plain",
        requirements=[
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": ["c5n.18xlarge"],
            },
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
    )
    discovered.provider.launch(request, make_nodeclass.build())
    assert "NetworkInterfaces" not in _template_data(env)


def test_the_kubelet_is_told_to_keep_its_own_taints(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    """Every family but Custom labels the node karpenter.sh/do-not-sync-taints=true (the
    kubelet registers the taints itself), so registration leaves its taints alone."""
    _launch(discovered, env, make_nodeclass, "al2023@latest")
    config = yaml.safe_load(_mime_parts(_user_data(env))[0][1])
    labels = config["spec"]["kubelet"]["flags"][0].removeprefix("--node-labels=").split(",")
    assert "karpenter.sh/do-not-sync-taints=true" in labels


def test_cpu_options_prefixes_connection_tracking_and_volume_initialization(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    """Each field goes to the launch template where EC2 reads it (the interfaces carry the
    prefixes and the timeouts, the template the CPU options, the EBS mapping the rate)."""
    request = discovered.make_request.build(
        "claim-options",
        requirements=[
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c7i.large"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
    )
    nodeclass = make_nodeclass.build(
        cpuOptions={"nestedVirtualization": "enabled"},
        ipPrefixCount=2,
        connectionTracking={
            "tcpEstablishedTimeout": 3600,
            "udpStreamTimeout": 120,
            "udpTimeout": 30,
        },
        blockDeviceMappings=[
            {
                "deviceName": "/dev/xvda",
                "rootVolume": True,
                "ebs": {
                    "volumeSize": "40Gi",
                    "snapshotID": "snap-0abc",
                    "volumeInitializationRate": 200,
                },
            }
        ],
    )
    discovered.provider.launch(request, nodeclass)
    data = _template_data(env)
    assert data["CpuOptions"] == {"NestedVirtualization": "enabled"}
    (interface,) = data["NetworkInterfaces"]
    assert interface["Ipv4PrefixCount"] == 2
    assert interface["ConnectionTrackingSpecification"] == {
        "TcpEstablishedTimeout": 3600,
        "UdpStreamTimeout": 120,
        "UdpTimeout": 30,
    }
    assert data["BlockDeviceMappings"][0]["Ebs"]["VolumeInitializationRate"] == 200


def test_a_launched_claim_carries_karpenters_placement_labels(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    """The zone id of the subnet it launched in (as EC2 names it: DescribeSubnets'
    AvailabilityZoneId), its EC2NodeClass and its tenancy, as Karpenter's claims carry."""
    nodeclass = make_nodeclass.build()
    request = discovered.make_request.build("claim-labels")
    result = discovered.provider.launch(request, nodeclass)
    (subnet,) = env.clients.ec2.describe_subnets(SubnetIds=[result.subnet_id])["Subnets"]
    assert subnet["AvailabilityZone"] == result.zone
    assert result.labels["topology.k8s.aws/zone-id"] == subnet["AvailabilityZoneId"]
    assert result.labels["karpenter.k8s.aws/ec2nodeclass"] == nodeclass.name
    assert result.labels["karpenter.k8s.aws/instance-tenancy"] == "default"


def test_only_a_claim_asking_for_efa_advertises_it(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    """An EFA type launched for pods that did not ask gets no EFA interface, so its node
    will advertise none: the claim must not promise it (Karpenter filters it the same way)."""
    on_c5n = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c5n.18xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    plain = discovered.provider.launch(
        discovered.make_request.build("claim-no-efa", requirements=on_c5n),
        make_nodeclass.build(),
    )
    assert "vpc.amazonaws.com/efa" not in plain.capacity
    assert "vpc.amazonaws.com/efa" not in plain.allocatable
    asked = discovered.provider.launch(
        discovered.make_request.build(
            "claim-efa-yes",
            requirements=on_c5n,
            resources={"cpu": "1", "vpc.amazonaws.com/efa": "1"},
        ),
        make_nodeclass.build(),
    )
    assert asked.capacity["vpc.amazonaws.com/efa"] == "1"


def test_a_placement_group_is_resolved_launched_into_and_labelled(
    env: Env, discovered: Discovered, make_nodeclass: Any
) -> None:
    """Karpenter's placementGroupSelector: the group found by name (or id) goes into the
    template's Placement and onto the claim's label; types whose PlacementGroupInfo lacks
    the group's strategy are not offered; a name EC2 does not know leaves the class not
    Ready (PlacementGroupReady False) rather than launching outside the group."""
    env.clients.ec2.create_placement_group(GroupName="training", Strategy="cluster")
    (group,) = env.clients.ec2.describe_placement_groups(GroupNames=["training"])["PlacementGroups"]
    nodeclass = make_nodeclass.build(placementGroupSelector={"name": "training"})
    resolved = discovered.provider.resolve_nodeclass(nodeclass)
    assert cond(resolved, "PlacementGroupReady").status == "True"
    types = {t.name for t in discovered.provider.instance_types(nodeclass)}
    infos = {str(i["InstanceType"]): i for i in env.provider.catalog.raw().infos}
    assert types and all(
        "cluster" in infos[n]["PlacementGroupInfo"]["SupportedStrategies"] for n in types
    )
    assert "t3.micro" not in types  # partition and spread only
    result = discovered.provider.launch(discovered.make_request.build("claim-pg"), nodeclass)
    assert _template_data(env)["Placement"] == {"GroupId": group["GroupId"]}
    assert result.labels["karpenter.k8s.aws/placement-group-id"] == group["GroupId"]
    by_id = make_nodeclass.build(placementGroupSelector={"id": group["GroupId"]})
    found = discovered.provider.resolve_nodeclass(by_id).placement_group
    assert found is not None and (found.name, found.strategy) == ("training", "cluster")

    missing = make_nodeclass.build(placementGroupSelector={"name": "no-such-group"})
    resolved = discovered.provider.resolve_nodeclass(missing)
    c = cond(resolved, "PlacementGroupReady")
    assert (c.status, c.reason) == ("False", "PlacementGroupNotFound")
    assert not resolved.ready and "no-such-group" in c.message


def cond(resolved: Any, type_: str) -> Any:
    return next(c for c in resolved.conditions if c.type == type_)
