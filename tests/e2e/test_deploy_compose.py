"""docker-compose.yml is valid for the real Compose CLI and wires what it promises.

The machine's docker client has no compose plugin (and there is no engine), so the test runs
the standalone ``docker-compose`` binary built from ``github.com/docker/compose/v2`` by
``deploy/tools/build.sh``. ``config`` parses, interpolates and validates the file against the
Compose specification without a daemon.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandbox.dev import SEARCH_ATTRIBUTES

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"

pytestmark = pytest.mark.timeout(600)  # the first run builds docker-compose (~5 min)


def compose(binary: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root"), **env}
    return subprocess.run(
        [str(binary), "--project-directory", str(REPO), "-f", str(COMPOSE_FILE), *args],
        capture_output=True,
        text=True,
        check=False,
        env=clean,
        cwd=REPO,
    )


def config(binary: Path, **env: str) -> dict[str, Any]:
    result = compose(binary, "config", "--format", "json", **env)
    assert result.returncode == 0, result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


REQUIRED = {"JOINERY_CLUSTER": "dev-cluster", "AWS_REGION": "eu-west-1"}


def test_version(docker_compose: Path) -> None:
    result = subprocess.run(
        [str(docker_compose), "version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and "v2." in result.stdout, result.stdout + result.stderr


def test_config_validates(docker_compose: Path) -> None:
    result = compose(docker_compose, "config", "--quiet", **REQUIRED)
    assert result.returncode == 0, result.stderr


def test_services(docker_compose: Path) -> None:
    doc = config(docker_compose, **REQUIRED, AWS_PROFILE="sandbox")
    services = doc["services"]
    assert set(services) == {"temporal", "temporal-ui", "worker"}
    assert services["temporal"]["image"].startswith("temporalio/temporal:")
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    # Joinery's search attributes are registered by the server itself.
    command = services["temporal"]["command"]
    for key, kind in SEARCH_ATTRIBUTES.items():
        assert f"--search-attribute={key}={kind}" in command
    assert any(arg.startswith("--db-filename=") for arg in command)
    # Published only on loopback.
    for name, service in services.items():
        for port in service.get("ports", []):
            assert port["host_ip"] == "127.0.0.1", (name, port)

    worker = services["worker"]
    assert worker["build"]["dockerfile"] == "deploy/Dockerfile"
    assert (REPO / worker["build"]["dockerfile"]).is_file()
    env = worker["environment"]
    assert env["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert env["JOINERY_CLUSTER"] == "dev-cluster"
    assert env["AWS_REGION"] == "eu-west-1"
    assert env["AWS_PROFILE"] == "sandbox"  # passed through from the host
    assert env["AWS_ACCESS_KEY_ID"] is None  # unset on the host: left unset
    mounts = {v["target"]: v for v in worker["volumes"]}
    assert mounts["/home/joinery/.kube/config"]["read_only"] is True
    assert mounts["/home/joinery/.aws"]["read_only"] is True
    assert env["KUBECONFIG"] == "/home/joinery/.kube/config"


def test_host_paths_can_be_overridden(docker_compose: Path, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    doc = config(docker_compose, **REQUIRED, JOINERY_KUBECONFIG=str(kubeconfig))
    mounts = {v["target"]: v for v in doc["services"]["worker"]["volumes"]}
    assert mounts["/home/joinery/.kube/config"]["source"] == str(kubeconfig)


def test_cluster_name_is_required(docker_compose: Path) -> None:
    result = compose(docker_compose, "config", "--quiet", AWS_REGION="eu-west-1")
    assert result.returncode != 0
    assert "JOINERY_CLUSTER" in result.stderr
