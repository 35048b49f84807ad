"""``models.karpenter_hash`` gives Karpenter's own ``karpenter.sh/nodepool-hash`` (v3).

The expected values were computed by Karpenter's hash library itself (hashstructure v2.0.2,
with Karpenter v1.14's ``NodePool.Hash`` options) over Go mirrors of Karpenter's template
types, from the same JSON; they are facts carried over, not output of the code under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from models.karpenter_hash import go_duration_ns, nodepool_hash

REF = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
FULL: dict[str, Any] = {
    "metadata": {"labels": {"team": "a", "tier": "web"}, "annotations": {"x/y": "z"}},
    "spec": {
        "nodeClassRef": REF,
        "requirements": [{"key": "a", "operator": "In", "values": ["b"]}],
        "taints": [
            {"key": "t", "value": "v", "effect": "NoSchedule"},
            {"key": "u", "effect": "NoExecute"},
        ],
        "startupTaints": [{"key": "s", "effect": "NoSchedule"}],
        "expireAfter": "Never",
        "terminationGracePeriod": "1h30m",
    },
}
REORDERED: dict[str, Any] = {
    "metadata": {"labels": {"tier": "web", "team": "a"}, "annotations": {"x/y": "z"}},
    "spec": {
        "nodeClassRef": REF,
        "requirements": [],
        "taints": [
            {"key": "u", "effect": "NoExecute"},
            {"key": "t", "value": "v", "effect": "NoSchedule"},
        ],
        "startupTaints": [{"key": "s", "effect": "NoSchedule"}],
        "expireAfter": "Never",
        "terminationGracePeriod": "90m",
    },
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (
            {
                "spec": {
                    "nodeClassRef": REF,
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["x"]}
                    ],
                    "expireAfter": "720h",
                }
            },
            "6821555240594823858",
        ),
        (
            {"spec": {"nodeClassRef": REF, "requirements": [], "expireAfter": "720h"}},
            "6821555240594823858",
        ),
        (FULL, "2894993198640381178"),
        # taints as a set, maps unordered, 90m == 1h30m
        (REORDERED, "2894993198640381178"),
        (
            {"spec": {"nodeClassRef": REF, "requirements": [], "expireAfter": "0s", "taints": []}},
            "17361398041204494424",
        ),
        (
            {
                "metadata": {"labels": {}},
                "spec": {
                    "nodeClassRef": REF,
                    "requirements": [],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "0s",
                },
            },
            "3852807844233477869",
        ),
        (
            {
                "metadata": {"labels": {"migration": "rolled"}},
                "spec": {"nodeClassRef": REF, "requirements": [], "expireAfter": "720h"},
            },
            "5727028803793746651",
        ),
    ],
)
def test_matches_karpenters_hash(template: dict[str, Any], expected: str) -> None:
    assert nodepool_hash(template) == expected


@pytest.mark.parametrize(
    ("text", "ns"),
    [("720h", 720 * 3600 * 10**9), ("1h30m", 5400 * 10**9), ("0", 0), ("1.5s", 1500 * 10**6)],
)
def test_go_durations(text: str, ns: int) -> None:
    assert go_duration_ns(text) == ns


def test_not_a_duration_is_an_error() -> None:
    with pytest.raises(ValueError):
        go_duration_ns("soon")
