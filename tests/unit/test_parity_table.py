"""docs/parity.md covers every field of our CRDs and every Karpenter v1.14 setting, says for
each what Joinery does (acted on or refused, never "ignored"), and every test it names exists.

The field paths come from the CRDs' own schemas (``deploy/crds/``), walked independently of
the table; the settings from our list of Karpenter v1.14.1's options below (core
``pkg/operator/options`` and the AWS provider's), written for this test."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "parity.md"
CRDS = {
    "NodePool": "karpenter.sh_nodepools.yaml",
    "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.yaml",
    "NodeClaim": "karpenter.sh_nodeclaims.yaml",
}
SETTINGS_SECTION = "Karpenter settings"
SETTINGS = (
    # kubernetes-sigs/karpenter v1.14.1, pkg/operator/options
    "KARPENTER_SERVICE",
    "METRICS_PORT",
    "HEALTH_PROBE_PORT",
    "KUBE_CLIENT_QPS",
    "KUBE_CLIENT_BURST",
    "ENABLE_PROFILING",
    "DISABLE_CONTROLLER_WARMUP",
    "DISABLE_LEADER_ELECTION",
    "DISABLE_CLUSTER_STATE_OBSERVABILITY",
    "LEADER_ELECTION_NAME",
    "LEADER_ELECTION_NAMESPACE",
    "MEMORY_LIMIT",
    "CPU_REQUESTS",
    "LOG_LEVEL",
    "LOG_OUTPUT_PATHS",
    "LOG_ERROR_OUTPUT_PATHS",
    "BATCH_MAX_DURATION",
    "BATCH_IDLE_DURATION",
    "PREFERENCE_POLICY",
    "MIN_VALUES_POLICY",
    "IGNORE_DRA_REQUESTS",
    "FEATURE_GATES",
    "SCHEDULER_CONFIG",
    *(
        f"FEATURE_GATES: {gate}"
        for gate in (
            "NodeRepair",
            "ReservedCapacity",
            "SpotToSpotConsolidation",
            "NodeOverlay",
            "StaticCapacity",
            "CapacityBuffer",
        )
    ),
    # aws/karpenter-provider-aws v1.14.1, pkg/operator/options
    "CLUSTER_CA_BUNDLE",
    "CLUSTER_NAME",
    "CLUSTER_ENDPOINT",
    "ISOLATED_VPC",
    "EKS_CONTROL_PLANE",
    "VM_MEMORY_OVERHEAD_PERCENT",
    "INTERRUPTION_QUEUE",
    "RESERVED_ENIS",
    "DISABLE_DRY_RUN",
    "ENABLE_ZONAL_SHIFT",
    "AMI_REFRESH_INTERVAL",
    "SUBNET_REFRESH_INTERVAL",
    "AWS_FEATURE_GATES",
)
# What a row's "Joinery" cell may begin with: every field and setting is acted on or refused.
VERDICTS = ("Acted on", "Refused")
NODE_ID = re.compile(r"`(tests/[\w/]+\.py)::([\w:]+)`")


def schema_paths(schema: Mapping[str, Any], prefix: str) -> Iterator[str]:
    """Every field path under ``schema``: objects' properties, and list items' fields as
    ``name[].field`` (maps with free keys stop at the map)."""
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}"
        yield path
        yield from schema_paths(sub, path)
        if sub.get("type") == "array" and isinstance(sub.get("items"), Mapping):
            yield from schema_paths(sub["items"], f"{path}[]")


def crd_paths(file: str) -> set[str]:
    doc = yaml.safe_load((ROOT / "deploy" / "crds" / file).read_text())
    out: set[str] = set()
    for version in doc["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        out.update(schema_paths(spec, "spec"))
    return out


@cache
def tables() -> dict[str, list[tuple[str, str, str]]]:
    """The doc's tables by the heading above them: (first cell without backticks, verdict,
    test cell) per row."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    heading = ""
    for line in DOC.read_text().splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            continue
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"{heading}: a row needs three cells: {line}"
        if cells[0] in ("field", "setting"):
            continue
        out.setdefault(heading, []).append((cells[0].strip("`"), cells[1], cells[2]))
    return out


def section(name: str) -> list[tuple[str, str, str]]:
    [title] = [t for t in tables() if t.startswith(name)]
    return tables()[title]


def test_every_crd_field_has_one_row_and_every_row_a_field() -> None:
    for kind, file in CRDS.items():
        fields = crd_paths(file)
        rows = [r[0] for r in section(kind)]
        assert len(fields) > 20  # the walk found the schema
        missing = sorted(fields - set(rows))
        assert not missing, f"{kind}: fields without a row in docs/parity.md: {missing}"
        stale = sorted(set(rows) - fields)
        assert not stale, f"{kind}: rows for fields the CRD does not have: {stale}"
        assert len(rows) == len(set(rows)), f"{kind}: a field has two rows"


def test_every_karpenter_setting_has_a_row() -> None:
    rows = [r[0] for r in section(SETTINGS_SECTION)]
    assert sorted(set(SETTINGS) - set(rows)) == []
    assert sorted(set(rows) - set(SETTINGS)) == []


def test_no_row_says_ignored_and_each_says_acted_on_or_refused() -> None:
    for title, rows in tables().items():
        for field, verdict, _ in rows:
            assert "ignored" not in verdict.lower(), f"{title} {field}: {verdict}"
            assert verdict.startswith(VERDICTS), f"{title} {field}: {verdict}"


@cache
def _module(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _defined(path: Path, name: str) -> bool:
    """Whether ``path`` defines the test ``name`` (``Class::test`` for a method), read by AST."""
    tree = _module(path)
    *classes, func = name.split("::")
    scope: list[ast.stmt] = tree.body
    for cls in classes:
        found = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls]
        if not found:
            return False
        scope = found[0].body
    return any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == func for n in scope
    )


def test_every_named_test_exists() -> None:
    named = 0
    for title, rows in tables().items():
        for field, _, cell in rows:
            ids = NODE_ID.findall(cell)
            assert ids, f"{title} {field}: names no test ({cell})"
            for file, name in ids:
                path = ROOT / file
                assert path.is_file(), f"{title} {field}: no file {file}"
                assert name.startswith("test_") or "::test_" in name, f"{file}::{name}"
                assert _defined(path, name), f"{title} {field}: {file} defines no {name}"
                named += 1
    assert named > 100


def test_the_walk_sees_list_items_and_nested_objects() -> None:
    """The schema walk itself, on a schema written here."""
    schema = {
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "l": {
                "type": "array",
                "items": {"type": "object", "properties": {"x": {"type": "integer"}}},
            },
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
        }
    }
    assert sorted(schema_paths(schema, "spec")) == [
        "spec.a",
        "spec.a.b",
        "spec.l",
        "spec.l[].x",
        "spec.m",
    ]
