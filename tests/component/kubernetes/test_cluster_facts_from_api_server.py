"""EKS_CONTROL_PLANE=false: the cluster facts come from the API server, never from EKS."""

from __future__ import annotations

import base64

from activities.ec2.provider import cluster_info
from activities.kubernetes.client import Kube
from worker.running import app, cluster_facts
from worker.running.settings import Settings, TemporalSettings


def test_facts_come_from_the_api_server_and_eks_is_never_asked(kube: Kube) -> None:
    configuration = kube.api_client.configuration
    settings = Settings(TemporalSettings(), cluster="self-managed", eks_control_plane=False)
    filled = cluster_facts.from_api_server(settings, kube)
    assert filled.cluster_endpoint == configuration.host
    assert filled.kubernetes_version == "1.36"  # the control plane the tests build
    if configuration.ssl_ca_cert:
        with open(configuration.ssl_ca_cert, "rb") as ca:
            assert base64.b64decode(filled.cluster_ca_bundle) == ca.read()
    info, discover = cluster_info(app.provider_options(filled))
    assert discover is False  # the service CIDR is not given, yet EKS is not asked
    assert info.kubernetes_version == "1.36"
    # Unset (Joinery's default) asks EKS for what is missing; given facts always win.
    _, discover = cluster_info(app.provider_options(Settings(TemporalSettings(), cluster="eks")))
    assert discover is True
    given = Settings(TemporalSettings(), kubernetes_version="1.30", eks_control_plane=False)
    assert cluster_facts.from_api_server(given, kube).kubernetes_version == "1.30"
