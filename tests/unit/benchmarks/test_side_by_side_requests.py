"""The side-by-side's API request counts: each phase's audit lines split between the
autoscaler's own clients and the rest, per node, from a log written here line by line."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from benchmarks import side_by_side_requests as req
from sandbox import api_audit

KARPENTER_UA = "karpenter-kwok-3f2a/v0.0.0 (linux/amd64) kubernetes/$Format"


def _line(agent: str, verb: str, resource: str, at: float, code: int = 200) -> str:
    return json.dumps(
        {
            "stage": "ResponseComplete",
            "verb": verb,
            "userAgent": agent,
            "objectRef": {"resource": resource},
            "responseStatus": {"code": code},
            "requestReceivedTimestamp": api_audit.stamp(at),
        }
    )


def test_a_phase_counts_only_its_own_lines_and_splits_the_autoscaler_from_the_rest(
    tmp_path: Path,
) -> None:
    log = tmp_path / "audit.log"
    before = time.time() - 10
    log.write_text(_line("joinery", "list", "pods", before) + "\n")
    mark = req.AuditMark.now(log)
    at = mark.since + 0.1
    lines = [
        _line("joinery", "create", "nodeclaims", at),
        _line("joinery", "create", "nodeclaims", at),
        _line("joinery", "patch", "nodeclaims", at, code=409),
        _line("joinery", "watch", "pods", at),  # long-running: not a call
        _line("joinery-sandbox-nodes/1.0", "create", "nodes", at),
        _line("kwok/v0.8.0 (linux/amd64)", "patch", "pods", at),
        _line("kwok/v0.8.0 (linux/amd64)", "patch", "pods", at),
    ]
    with log.open("a") as f:
        f.write("\n".join(lines) + "\n")
    counts = api_audit.by_client(log, mark.offset, since=mark.since)
    out = req.summary(counts, nodes=2, own=req.joinery_client)
    assert out["autoscaler"] == 3 and out["autoscalerPerNode"] == 1.5
    assert out["rest"] == 3 and out["restPerNode"] == 1.5
    assert out["autoscalerTop"] == {"CREATE nodeclaims": 2, "PATCH nodeclaims 409": 1}
    assert out["clients"] == {"joinery": 3, "kwok": 2, "joinery-sandbox-nodes": 1}


def test_karpenters_process_is_its_binarys_user_agent() -> None:
    assert req.karpenter_client(api_audit.client_of(KARPENTER_UA))
    assert not req.karpenter_client(api_audit.client_of("kube-scheduler/v1.36.3 (linux)"))
    assert not req.joinery_client(api_audit.client_of("joinery-sandbox"))
    assert req.joinery_client(api_audit.client_of("joinery"))


def test_a_phase_that_removed_no_node_reports_its_total_per_one() -> None:
    counts: Counter[tuple[str, str, str, int]] = Counter({("joinery", "get", "nodes", 200): 4})
    out = req.summary(counts, 0, req.joinery_client)
    assert out["autoscalerPerNode"] == out["autoscaler"] == 4
