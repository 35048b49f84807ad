"""``joinery plan`` as users run it, the installed command on files written to disk, with
EC2NodeClasses of their own and catalog files per NodeClass."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.support.catalogs import catalog

JOINERY = Path(sys.executable).with_name("joinery")


def nodeclass(name: str, zones: Sequence[str] | None) -> dict[str, Any]:
    """An EC2NodeClass as ``kubectl get -o yaml`` shows it (with ``zones``: its resolved
    subnets in ``status``; None: hand-written, no status)."""
    body: dict[str, Any] = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        },
    }
    if zones is not None:
        body["status"] = {
            "subnets": [{"id": f"subnet-{z}", "zone": z, "zoneID": f"id-{z}"} for z in zones]
        }
    return body


def on_class(body: dict[str, Any], nodeclass_name: str) -> dict[str, Any]:
    """The NodePool ``body`` referring to the EC2NodeClass ``nodeclass_name``."""
    body = copy.deepcopy(body)
    body["spec"]["template"]["spec"]["nodeClassRef"]["name"] = nodeclass_name
    return body


def run(
    tmp_path: Path, docs: Sequence[Any], *args: str, catalogs: Mapping[str, Any] | None = None
) -> tuple[int, dict[str, Any], str]:
    """``joinery plan -f cluster.yaml --catalog catalog.yaml [--catalog NAME=FILE ...] ARGS``;
    the exit code, the JSON output ({} when none) and stderr."""
    m = tmp_path / "cluster.yaml"
    m.write_text(yaml.safe_dump_all(list(docs)))
    flags = ["--catalog", str(tmp_path / "catalog.yaml")]
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(catalog()))
    for name, doc in (catalogs or {}).items():
        path = tmp_path / f"catalog-{name}.yaml"
        path.write_text(yaml.safe_dump(doc))
        flags += ["--catalog", f"{name}={path}"]
    done = subprocess.run(
        [str(JOINERY), "plan", "-f", str(m), *flags, "-o", "json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout else {}, done.stderr
