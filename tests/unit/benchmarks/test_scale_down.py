"""The scale-down's counting (``benchmarks.scale_down.ScaleDownWatch``) on samples written
by hand: what is a disruption, an eviction, a PDB dip, and when the run is quiet."""

from __future__ import annotations

from benchmarks import side_by_side_burst as sbs
from benchmarks.scale_down import FIRST_WAIT, PodSample, ScaleDownWatch, pod_sample, remaining


def _pods(ready: int, *, pending: int = 0, deleting: int = 0, new: str = "") -> list[PodSample]:
    """``ready`` Ready pods p0.., plus pending ones and deleting ones (uids with ``new``)."""
    out = [PodSample(f"p{i}", True, False, False) for i in range(ready)]
    out += [PodSample(f"{new}n{i}", False, False, True) for i in range(pending)]
    out += [PodSample(f"d{i}", True, True, False) for i in range(deleting)]
    return out


def _watch() -> ScaleDownWatch:
    start = {f"p{i}" for i in range(10)} | {f"d{i}" for i in range(90)}
    return ScaleDownWatch(0.0, 10, {"c1": False, "c2": False, "c3": False}, start)


def test_a_claim_marked_then_gone_is_one_disruption_and_one_deletion() -> None:
    w = _watch()
    w.observe(1.0, {"c1": False, "c2": False, "c3": False}, _pods(10, deleting=90))
    w.observe(5.0, {"c1": False, "c2": False, "c3": True}, _pods(10))
    w.observe(9.0, {"c1": False, "c2": False}, _pods(10))
    f = w.figures()
    assert (f["lastDisruptionSeconds"], f["lastClaimGoneSeconds"]) == (5.0, 9.0)
    assert (f["claimsCreated"], f["claimsDeleted"], f["podsEvicted"]) == (0, 1, 0)
    assert w.quiet(20.0) == 11.0
    assert f["pdb"] == {"floor": 9, "minHealthy": 10, "violations": 0, "samples": 3}


def test_quiet_counts_from_when_the_scale_downs_own_deletions_are_done() -> None:
    """No node is empty while the ReplicaSet's pods are still going: that minute is not
    quiet, however long it lasts (a run once ended there, before Karpenter's first move)."""
    w = _watch()
    w.observe(30.0, {"c1": False, "c2": False, "c3": False}, _pods(10, deleting=90))
    assert w.quiet(70.0) == 0.0
    w.observe(75.0, {"c1": False, "c2": False, "c3": False}, _pods(10))
    assert w.quiet(80.0) == 5.0
    # no disruption yet: not over after a quiet minute, only after FIRST_WAIT
    assert not w.over(75.0 + 60.0, 60.0) and w.over(75.0 + FIRST_WAIT, 60.0)
    w.observe(90.0, {"c1": False, "c2": False, "c3": True}, _pods(10))
    assert w.quiet(100.0) == 10.0
    assert w.over(150.0, 60.0)  # once a side has acted, a quiet minute ends it


def test_a_replacement_counts_as_a_disruption_and_each_new_pod_as_an_eviction() -> None:
    w = _watch()
    w.observe(1.0, {"c1": False, "c2": False, "c3": False}, _pods(10))
    w.observe(4.0, {"c1": False, "c2": True, "c3": True, "c4": False}, _pods(10))
    # one pod evicted: its replacement waits (9 healthy is what the PDB allows)
    w.observe(6.0, {"c1": False, "c2": True, "c3": True, "c4": False}, _pods(9, pending=1))
    assert w.pending == 1
    w.observe(7.0, {"c1": False, "c4": False}, _pods(9, pending=1, new="x"))
    f = w.figures()
    assert f["claimsCreated"] == 1 and f["claimsDeleted"] == 2
    assert f["podsEvicted"] == 2  # n0 and xn0: two pods the ReplicaSet had to make
    assert f["lastDisruptionSeconds"] == 4.0 and f["lastClaimGoneSeconds"] == 7.0
    assert f["pdb"]["violations"] == 0 and f["pdb"]["minHealthy"] == 9


def test_two_pods_down_at_once_is_below_the_pdb() -> None:
    w = _watch()
    w.observe(1.0, {"c1": False}, _pods(10))
    w.observe(2.0, {"c1": False}, _pods(8, pending=2))
    assert w.figures()["pdb"] == {"floor": 9, "minHealthy": 8, "violations": 1, "samples": 2}


def test_the_pdb_is_judged_once_the_scale_down_itself_is_done() -> None:
    w = _watch()
    # the ReplicaSet's own deletions and not-yet-ready pods are not the autoscaler's doing
    w.observe(1.0, {"c1": False}, _pods(5, pending=5, deleting=90))
    assert w.pdb_from is None and w.figures()["pdb"]["samples"] == 0
    w.observe(2.0, {"c1": False}, _pods(10, deleting=3))
    assert w.pdb_from == 2.0


def test_a_pod_body_reads_ready_deleting_and_pending() -> None:
    body = {
        "metadata": {"uid": "u1", "deletionTimestamp": "2026-11-28T12:00:00Z"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert pod_sample(body) == PodSample("u1", True, True, False)
    assert pod_sample({"metadata": {"uid": "u2"}, "status": {"phase": "Pending"}}) == PodSample(
        "u2", False, False, True
    )


def test_a_tenth_remains_and_the_flag_parses() -> None:
    assert (remaining(100), remaining(250), remaining(5)) == (10, 25, 1)
    args = sbs.parse_args(["--shape", "two-cpu", "--pods", "100", "--scale-down"])
    assert args.scale_down and args.quiet == 60.0
    assert not sbs.parse_args(["--shape", "packed", "--pods", "1"]).scale_down


def test_the_scale_down_ratio_is_joinery_over_karpenter() -> None:
    k = {"lastDisruptionSeconds": 200.0, "dollarsPerHour": 2.0, "podsEvicted": 0}
    j = {"lastDisruptionSeconds": 100.0, "dollarsPerHour": 2.0, "podsEvicted": 0}
    assert sbs.down_ratios(k, j) == {
        "lastDisruptionSeconds": 0.5,
        "dollarsPerHour": 1.0,
        "podsEvicted": None,
    }
