"""``joinery doctor`` against moto: a working setup, then five broken ones, one line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sandbox.ec2.seed import seed_eks_cluster
from worker.cli import main

CLUSTER = "test-cluster"
ROLE = f"KarpenterNodeRole-{CLUSTER}"
QUEUE = "test-cluster-interruptions"
NODECLASS = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  role: {role}
  amiSelectorTerms: [{{alias: al2023@latest}}]
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: test-cluster}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: test-cluster}}}}]
"""


def doctor(
    env: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    role: str = ROLE,
    cluster: str = CLUSTER,
    queue: str = QUEUE,
) -> tuple[int, list[str]]:
    path = tmp_path / "nc.yaml"
    path.write_text(NODECLASS.format(role=role))
    code = main(
        [
            "doctor",
            "--cluster",
            cluster,
            "--region",
            "us-east-1",
            "--aws-endpoint-url",
            env.server.endpoint_url,
            "--interruption-queue",
            queue,
            "-f",
            str(path),
        ]
    )
    return code, capsys.readouterr().out.splitlines()


def missing(lines: list[str]) -> list[str]:
    return [ln for ln in lines if ln.startswith("missing")]


@pytest.fixture
def queue(env: Any) -> None:
    env.clients.sqs.create_queue(QueueName=QUEUE)


def test_a_working_setup(
    env: Any, queue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = doctor(env, tmp_path, capsys)
    assert code == 0, lines
    assert missing(lines) == []
    assert any(ln.startswith("ok") and "Kubernetes 1.31" in ln for ln in lines)
    assert any(ln.startswith("ok") and "EC2NodeClass default" in ln for ln in lines)
    # moto has no policy simulator: said so, in one line, not a traceback
    assert any(ln.startswith("unchecked") and "IAM permissions" in ln for ln in lines)


def _untag(env: Any, resource_ids: list[str]) -> None:
    env.clients.ec2.delete_tags(Resources=resource_ids, Tags=[{"Key": "karpenter.sh/discovery"}])


@pytest.mark.parametrize(
    "broken, expected",
    [
        ("no-subnet", "subnetSelectorTerms matched no subnets"),
        ("no-security-group", "securityGroupSelectorTerms matched no security groups"),
        ("no-role", "role 'NoSuchRole' does not exist in IAM"),
        ("no-ami", "none published for Kubernetes 1.29"),
        ("no-queue", "interruption queue nowhere-queue: does not exist"),
    ],
)
def test_each_broken_setup_is_one_line(
    env: Any,
    queue: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    broken: str,
    expected: str,
) -> None:
    kwargs: dict[str, str] = {}
    if broken == "no-subnet":
        _untag(env, list(env.seeded.network.subnets.values()))
    elif broken == "no-security-group":
        _untag(env, env.seeded.network.security_group_ids)
    elif broken == "no-role":
        kwargs["role"] = "NoSuchRole"
    elif broken == "no-ami":
        seed_eks_cluster(env.clients.ec2, "old-cluster", "1.29")
        kwargs["cluster"] = "old-cluster"
    elif broken == "no-queue":
        kwargs["queue"] = "nowhere-queue"
    code, lines = doctor(env, tmp_path, capsys, **kwargs)
    assert code == 1
    [line] = missing(lines)
    assert expected in line, lines


def test_an_account_without_the_spot_service_role(
    env: Any, queue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env.clients.iam.delete_role(RoleName="AWSServiceRoleForEC2Spot")
    code, lines = doctor(env, tmp_path, capsys)
    assert code == 1
    (line,) = missing(lines)
    assert "AWSServiceRoleForEC2Spot" in line
    assert "create-service-linked-role --aws-service-name spot.amazonaws.com" in line


def test_an_account_whose_imds_defaults_expose_tags(
    env: Any, queue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = doctor(env, tmp_path, capsys)
    assert any(ln.startswith("ok") and "none set" in ln for ln in lines), lines
    env.emulation.metadata_tags_default = "enabled"
    code, lines = doctor(env, tmp_path, capsys)
    assert code == 0, lines  # said, not missing: the templates turn the tags off themselves
    (imds,) = [ln for ln in lines if "instance metadata defaults" in ln]
    assert imds.startswith("ok") and "InstanceMetadataTags=enabled" in imds
    assert "InstanceMetadataTags=disabled explicitly" in imds


def test_a_reservation_term_that_finds_none_is_missing(
    env: Any, queue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = env.emulation.reservations.add("m5.large", "us-east-1a", 2, tags={"team": "ml"})
    terms = f"  capacityReservationSelectorTerms: [{{id: {rid}}}, {{tags: {{team: gone}}}}]\n"
    path = tmp_path / "reserved.yaml"
    path.write_text(NODECLASS.format(role=ROLE) + terms)
    code = main(
        [
            "doctor",
            "--cluster",
            CLUSTER,
            "--region",
            "us-east-1",
            "--aws-endpoint-url",
            env.server.endpoint_url,
            "--interruption-queue",
            QUEUE,
            "-f",
            str(path),
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    (line,) = missing(lines)
    assert "capacityReservationSelectorTerms[1]" in line and "'team': 'gone'" in line
    assert any(ln.startswith("ok") and rid in ln and "2 free" in ln for ln in lines), lines
