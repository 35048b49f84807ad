"""The worker exports every ``karpenter_*`` metric of Karpenter v1.14 under the same name,
type and label names (the list is ours: tests/unit/worker/karpenter_metrics.py), except
those listed there with the reason their meaning does not hold; pre-v1 names are gone."""

from __future__ import annotations

import re
from typing import Any

from tests.unit.worker.karpenter_metrics import NOT_EXPORTED, RENAMED, V1_14
from worker.running import metrics

TYPE_LINE = re.compile(r"^# TYPE (\S+) (\S+)$", re.M)


def test_the_reference_list_has_karpenters_71_metrics() -> None:
    assert len(V1_14) == 71
    assert all(name.startswith("karpenter_") for name in V1_14)
    assert set(NOT_EXPORTED) <= set(V1_14)


def test_every_v1_14_metric_is_declared_with_its_type_and_labels() -> None:
    declared = metrics.declared()
    wrong: list[str] = []
    for name, (kind, labels) in sorted(V1_14.items()):
        if name in NOT_EXPORTED:
            assert name not in declared, f"{name} is exported but listed as not exported"
            continue
        if name not in declared:
            wrong.append(f"{name}: missing")
            continue
        got_kind, got_labels = declared[name]
        if got_kind != kind:
            wrong.append(f"{name}: type {got_kind}, Karpenter's is {kind}")
        if set(got_labels) != labels:
            extra, lacking = set(got_labels) - labels, labels - set(got_labels)
            wrong.append(f"{name}: labels +{sorted(extra)} -{sorted(lacking)}")
    assert not wrong, "\n".join(wrong)


def test_every_v1_14_metric_is_on_the_scrape_with_its_type(metrics_url: str, scrape: Any) -> None:
    types = dict(TYPE_LINE.findall(scrape(metrics_url).text))
    for name, (kind, _labels) in V1_14.items():
        if name not in NOT_EXPORTED:
            assert types.get(name) == kind, (name, types.get(name), kind)


def test_no_pre_v1_name_is_exported(metrics_url: str, scrape: Any) -> None:
    text = scrape(metrics_url).text
    for old, new in RENAMED.items():
        assert not re.search(rf"^(# TYPE )?{old}\b", text, re.M), f"{old} is now {new}"
        assert new in metrics.declared()


def test_a_karpenter_metric_the_worker_adds_is_only_a_documented_extra() -> None:
    """A ``karpenter_*`` family not in v1.14 is a misspelling unless it is a known extra."""
    extras = {"karpenter_interruption_actions_performed_total"}  # pre-v1.14, kept
    ours = {n for n in metrics.declared() if n.startswith("karpenter_")}
    assert ours - set(V1_14) == extras
