"""End-to-end fixtures: deployment tools built from pinned Go modules, a real control plane.

``helm`` and ``docker_compose`` run ``deploy/tools/build.sh`` (a no-op once the binaries are
cached in ~/.cache/joinery/tools); ``cluster`` starts one sandbox control plane per session.
The ``joinery dev`` scenario tests start their own stack as a subprocess instead.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.control_plane import cluster

__all__ = ["cluster"]

REPO = Path(__file__).resolve().parents[2]
TOOLS_BUILD = REPO / "deploy" / "tools" / "build.sh"


def build_tool(name: str) -> Path:
    """Path of a tool built by deploy/tools/build.sh (building it first if needed)."""
    result = subprocess.run(
        ["bash", str(TOOLS_BUILD), name], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        pytest.fail(f"deploy/tools/build.sh {name} failed:\n{result.stderr[-3000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def helm() -> Path:
    return build_tool("helm")


@pytest.fixture(scope="session")
def docker_compose() -> Path:
    return build_tool("docker-compose")
