"""``joinery plan`` on objects asking for fields Joinery does not implement, as users run it
(the installed command, files on disk): one stderr line per object and field, and the plan
the worker would make, which never uses them: a static pool (``replicas``) is left out, a
pool of a refused EC2NodeClass can launch nothing. The plan is still computed (exit 0)."""

from __future__ import annotations

from pathlib import Path

from tests.support.catalogs import ZA
from tests.support.disruption import ALL, NOW, OD_AMD, bound, node_and_claim, pool
from tests.support.labels import NODEPOOL
from tests.support.manifests import nodepool, pod
from tests.support.plan_cli import nodeclass, on_class, run


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def test_plan_leaves_a_static_nodepool_out_and_says_so(tmp_path: Path) -> None:
    static = nodepool("static", OD_AMD, weight=90)
    del static["spec"]["weight"]  # the CRD admits no weight on a static pool
    static["spec"]["replicas"] = 2
    docs = [static, nodepool("dynamic", OD_AMD), pod("web", "1", "1Gi")]
    code, out, err = run(tmp_path, docs)
    assert code == 0, err
    [line] = _warnings(err)
    assert "(NodePool static): spec.replicas: static NodePools" in line
    assert line.endswith("the pool is not planned on")
    assert [c["nodePool"] for c in out["nodeClaims"]] == ["dynamic"]

    # A pod only the static pool admits: unschedulable, not a claim of a pool never used.
    code, out, err = run(
        tmp_path, [static, pod("pinned", "1", "1Gi", node_selector={NODEPOOL: "static"})]
    )
    assert code == 0, err
    assert out["nodeClaims"] == []
    assert [u["pod"] for u in out["unschedulable"]] == ["default/pinned"]


def test_plan_names_each_refused_nodeclass_field_and_launches_nothing_there(
    tmp_path: Path,
) -> None:
    efa = nodeclass("efa", [ZA])
    efa["spec"]["networkInterfaces"] = [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
    ]
    docs = [
        efa,
        nodeclass("plain", [ZA]),
        on_class(nodepool("gpu", OD_AMD, weight=50), "efa"),
        on_class(nodepool("general", OD_AMD), "plain"),
        pod("trainer", "1", "1Gi", node_selector={NODEPOOL: "gpu"}),
        pod("web", "1", "1Gi"),
    ]
    code, out, err = run(tmp_path, docs)
    assert code == 0, err
    lines = _warnings(err)
    assert len(lines) == 1, err  # one per field
    assert "(EC2NodeClass efa): spec.networkInterfaces: " in lines[0]
    assert all(line.endswith("NodePools that can launch nothing: gpu") for line in lines)
    # The heavier pool cannot launch, so the plain pod goes to the other; the pod that
    # only the refused pool admits is unschedulable.
    assert [(c["nodePool"], c["pods"]) for c in out["nodeClaims"]] == [("general", ["default/web"])]
    assert [u["pod"] for u in out["unschedulable"]] == ["default/trainer"]


def test_disruption_leaves_the_nodes_of_a_static_pool_alone(tmp_path: Path) -> None:
    """An empty node of a refused static pool is not managed by the round (neither deleted
    nor listed), while the same node of a dynamic pool is deleted as Empty."""
    static = pool("static", requirements=OD_AMD, budgets=ALL)
    static["spec"]["replicas"] = 1
    dynamic = pool("dynamic", requirements=OD_AMD, budgets=ALL)
    docs = [
        static,
        dynamic,
        *node_and_claim("s", "m5.large", nodepool_name="static"),
        *node_and_claim("d", "m5.large", nodepool_name="dynamic"),
        bound("keep", "d", "100m", "128Mi", owner_kind="DaemonSet"),
    ]
    code, out, err = run(tmp_path, docs, "--disruption", "--now", NOW.isoformat())
    assert code == 0, err
    assert any("(NodePool static): spec.replicas" in line for line in _warnings(err))
    d = out["disruption"]
    named = [n for c in d["commands"] for n in c["nodes"]]
    named += [b["node"] for b in d["blocked"]] + [k["node"] for k in d["kept"]]
    assert "s" not in named
    assert [(c["reason"], c["nodes"]) for c in d["commands"]] == [("Empty", ["d"])]


def test_disruption_does_not_take_a_refused_classes_nodes_for_drifted(tmp_path: Path) -> None:
    """As the worker's round: the nodes of a pool whose EC2NodeClass is refused are priced
    from a catalog, so they are not drifted (InstanceTypeNotFound) for want of one."""
    refused_class = nodeclass("prefixes", [ZA])
    refused_class["spec"]["networkInterfaces"] = [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    ]
    docs = [
        refused_class,
        on_class(pool("dense", requirements=OD_AMD, budgets=ALL), "prefixes"),
        *node_and_claim("n", "m5.xlarge", nodepool_name="dense"),
        bound("busy", "n", "3", "10Gi"),
    ]
    code, out, err = run(tmp_path, docs, "--disruption", "--now", NOW.isoformat())
    assert code == 0, err
    assert any("(EC2NodeClass prefixes): spec.networkInterfaces" in w for w in _warnings(err))
    d = out["disruption"]
    assert d["commands"] == []
    assert "InstanceTypeNotFound" not in str(d)
    assert d["costPerHour"]["before"] > 0
