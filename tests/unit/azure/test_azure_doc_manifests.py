"""docs/azure.md's AKSNodeClass and NodePool are accepted as they are: each parses with the
worker's own models, the class uses no field Joinery refuses (so it can be Ready), and the
pool none Joinery does not implement and points at the class."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import yaml

from models import unimplemented
from models.aksnodeclass import AKSNodeClass, unimplemented_fields
from models.nodepool import NodePool

DOC = Path(__file__).resolve().parents[3] / "docs" / "azure.md"


def _manifests() -> list[dict[str, Any]]:
    step = DOC.read_text().split("**An AKSNodeClass and a NodePool.**", 1)[1]
    block = re.search(r"```yaml\n(.*?)\n\s*```", step, re.S)
    assert block is not None, "no yaml block in step 10"
    return [d for d in yaml.safe_load_all(textwrap.dedent(block.group(1))) if d]


def test_the_documented_manifests_are_accepted() -> None:
    nodeclass_body, pool_body = _manifests()
    nodeclass = AKSNodeClass.model_validate(nodeclass_body)
    assert unimplemented_fields(nodeclass.spec) == []
    pool = NodePool.model_validate(pool_body)
    assert unimplemented.nodepool_fields(pool_body) == []
    ref = pool_body["spec"]["template"]["spec"]["nodeClassRef"]
    assert ref == {
        "group": "karpenter.azure.com",
        "kind": "AKSNodeClass",
        "name": nodeclass.metadata.name,
    }
    assert pool.metadata.name == "general-purpose"
