"""``joinery explain``'s logic and output, on manifests (no cluster, no Temporal): the engine's
verdict per node, the last round's outcome as the workflow reports it, the budget state, the
NodeClaim's conditions, and the one-line errors of the command itself."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.disruption.types import VERDICT_CHARS, CommandSpec, Decision, clip
from models.catalog import load_catalog
from scheduling.disruption.round import RoundResult, run_round
from scheduling.inputs import Document
from tests.support.catalogs import catalog
from tests.support.disruption import DO_NOT_DISRUPT, NOW, OD_AMD, bound, node_and_claim, pool
from worker.cli import explain as X
from worker.cli import main
from worker.cli.explain_command import LiveCluster, WorkflowFacts, explain
from workflows.disruption import outcomes
from workflows.disruption.state import (
    BLOCKED,
    DISRUPTED,
    HELD,
    IN_FLIGHT,
    INVALIDATED,
    KEPT,
    UNDONE,
    CommandResult,
    DisruptionStatus,
    NodeOutcome,
)


def _cluster(budget: str = "2") -> list[dict[str, Any]]:
    """``empty`` holds nothing; ``busy`` is the cheapest type, its pod fits on no other node;
    ``pinned`` (nearly full) says do-not-disrupt."""
    return [
        pool(requirements=OD_AMD, budgets=[{"nodes": budget}]),
        *node_and_claim("empty"),
        *node_and_claim("busy", "c5.large"),
        bound("b", "busy", "1500m", "2Gi"),
        *node_and_claim("pinned", annotations={DO_NOT_DISRUPT: "true"}),
        bound("p", "pinned", "3", "2Gi"),
    ]


def _live(docs: Sequence[Mapping[str, Any]]) -> tuple[LiveCluster, RoundResult]:
    documents = [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)]
    claims = [copy.deepcopy(dict(d)) for d in docs if d.get("kind") == "NodeClaim"]
    result = run_round(documents, load_catalog(catalog()), NOW)
    return LiveCluster(documents, claims), result


def _status(*found: NodeOutcome, in_flight: Sequence[str] = ()) -> DisruptionStatus:
    return DisruptionStatus(
        cluster="c",
        phase="Idle",
        rounds=7,
        commands_done=1,
        commands_failed=0,
        last_summary="",
        last_action="",
        in_flight=list(in_flight),
        last_round_at="2026-11-23T11:58:00+00:00",
        last_outcomes=list(found),
    )


NO_WORKFLOW = WorkflowFacts(None, False, [], "cannot reach Temporal at localhost:1")


def test_each_verdict_with_the_engine_reason_and_the_budget() -> None:
    cluster, result = _live(_cluster())
    facts = WorkflowFacts(_status(NodeOutcome("busy", KEPT, "fits nowhere cheaper")), False, [])
    empty = explain("empty", cluster, result, facts)
    assert empty.now.verdict == X.DISRUPT and empty.now.method == "Empty"
    assert empty.now.reason.startswith("delete 1 empty node")
    assert empty.nodeclaim == "empty-claim" and empty.nodepool == "default"
    assert empty.budget is not None
    assert empty.budget.allowed == {"Empty": 2, "Underutilized": 2, "Drifted": 2}
    assert empty.budget.nodes == 3 and empty.budget.disrupting == 0 and empty.budget.taken == 1
    # the workflow's last round did not name it
    assert empty.last_round.available and not empty.last_round.outcome

    pinned = explain("pinned", cluster, result, facts)
    assert pinned.now.verdict == X.BLOCKED and DO_NOT_DISRUPT in pinned.now.reason

    busy = explain("busy", cluster, result, facts)
    assert busy.now.verdict == X.KEPT and busy.now.reason
    assert busy.last_round.outcome == KEPT and busy.last_round.round == 7

    text = X.to_text(busy)
    assert text.splitlines()[0] == "Node busy (NodeClaim busy-claim, NodePool default)"
    assert "round 7 at 2026-11-23T11:58:00+00:00: kept: fits nowhere cheaper" in text
    assert "allowed now Empty 2, Underutilized 2, Drifted 2" in text
    assert "0 of 3 initialized node(s) already disrupting; this round takes 1" in text


def test_a_used_up_budget_blocks_and_says_so() -> None:
    cluster, result = _live(_cluster(budget="1"))
    busy = explain("busy", cluster, result, NO_WORKFLOW)
    assert busy.now.verdict == X.BLOCKED and "budget" in busy.now.reason
    assert busy.budget is not None and busy.budget.taken == 1


def test_json_is_one_object_for_machines() -> None:
    cluster, result = _live(_cluster())
    doc = X.to_dict(explain("empty", cluster, result, NO_WORKFLOW))
    json.dumps(doc)
    assert doc["node"] == "empty" and doc["nodeClaim"] == "empty-claim"
    assert doc["now"]["verdict"] == "disrupt" and doc["now"]["method"] == "Empty"
    assert doc["now"]["nodes"] == ["empty"] and doc["now"]["heldBy"] is None
    assert doc["lastRound"] == {"available": False, "error": NO_WORKFLOW.error}
    assert doc["budget"]["allowed"]["Empty"] == 2 and doc["budget"]["takenThisRound"] == 1
    pinned = X.to_dict(explain("pinned", cluster, result, NO_WORKFLOW))
    assert set(pinned["now"]) == {"verdict", "reason"}


def test_an_unreachable_workflow_still_gives_the_engine_answer() -> None:
    cluster, result = _live(_cluster())
    text = X.to_text(explain("pinned", cluster, result, NO_WORKFLOW))
    assert "now:         blocked: node has karpenter.sh/do-not-disrupt" in text
    assert "last round:  unavailable (cannot reach Temporal at localhost:1)" in text


def test_a_pause_holds_what_the_engine_would_do() -> None:
    cluster, result = _live(_cluster())
    held = explain("empty", cluster, result, WorkflowFacts(_status(), False, ["default"]))
    assert held.now.held_by == "NodePool default is paused"
    assert "; held: NodePool default is paused" in X.to_text(held)
    every = explain("empty", cluster, result, WorkflowFacts(_status(), True, []))
    assert every.now.held_by == "disruption is paused for every NodePool"


def test_a_nodeclaim_name_finds_its_node_and_its_conditions() -> None:
    docs = _cluster()
    claim = next(d for d in docs if d["metadata"]["name"] == "pinned-claim")
    claim["status"]["conditions"] = [
        {"type": "Initialized", "status": "True"},
        {
            "type": "Consolidatable",
            "status": "True",
            "reason": "Consolidatable",
            "lastTransitionTime": "2026-11-23T10:00:00Z",
        },
    ]
    cluster, result = _live(docs)
    e = explain("pinned-claim", cluster, result, NO_WORKFLOW)
    assert e.node == "pinned" and e.nodeclaim == "pinned-claim"
    assert [c["type"] for c in e.conditions] == ["Consolidatable"]
    assert (
        "conditions:  Consolidatable=True (Consolidatable), since 2026-11-23T10:00:00Z"
        in X.to_text(e)
    )


def test_a_node_already_gone_is_told_by_the_last_round() -> None:
    cluster, result = _live(_cluster())
    gone = NodeOutcome("old-node", DISRUPTED, "Underutilized: replace 2 nodes by 1 m5.large")
    e = explain("old-node", cluster, result, WorkflowFacts(_status(gone), False, []))
    assert e.now.verdict == X.ABSENT and e.budget is None
    text = X.to_text(e)
    assert "now:         absent: not in the cluster (no such Node)" in text
    assert "disrupted: Underutilized: replace 2 nodes by 1 m5.large" in text


def test_an_unmanaged_node_says_so() -> None:
    docs = _cluster()
    docs[1]["metadata"]["labels"].pop("karpenter.sh/nodepool")
    docs = [d for d in docs if d["metadata"]["name"] != "empty-claim"]
    cluster, result = _live(docs)
    e = explain("empty", cluster, result, NO_WORKFLOW)
    assert e.now.verdict == X.UNMANAGED and "not managed by Joinery" in e.now.reason


# -- the workflow's per-node outcomes ------------------------------------------------------


def _cmd(nodes: list[str], reason: str = "Underutilized") -> CommandSpec:
    return CommandSpec(reason, nodes, [f"{n}-c" for n in nodes], ["p"], summary=f"s-{nodes[0]}")


def test_outcomes_name_every_node_once_and_follow_the_commands() -> None:
    run, dropped = _cmd(["a", "b"]), _cmd(["c"], "Empty")
    first = Decision(commands=[run, dropped], kept_nodes={"d": "too full"})
    latest = Decision(
        commands=[run],
        blocked_nodes={"c": "nominated for pending pod x/y"},
        kept_nodes={"d": "too full", "a": "engine noise"},
        held_nodes={"e": "delete 1 empty node (NodePool p paused)"},
    )
    got = {o.node: (o.outcome, o.reason) for o in outcomes.decided(first, latest, [run])}
    assert got["a"] == (IN_FLIGHT, "Underutilized: s-a") and got["b"][0] == IN_FLIGHT
    assert got["c"][0] == INVALIDATED
    assert got["c"][1].endswith(
        "no longer valid after the validation delay; now: nominated for pending pod x/y"
    )
    assert got["d"] == (KEPT, "too full") and got["e"][0] == HELD
    assert len(got) == 5

    blocked_only = outcomes.decided(latest, latest, [])
    assert {o.node: o.outcome for o in blocked_only}["c"] == BLOCKED

    done = outcomes.finished(
        outcomes.decided(first, latest, [run]),
        [run],
        [CommandResult("s-a", done=False, why="replacement r: not initialized")],
    )
    assert {o.node: o.outcome for o in done} == {
        "a": UNDONE,
        "b": UNDONE,
        "c": INVALIDATED,
        "d": KEPT,
        "e": HELD,
    }
    assert next(o for o in done if o.node == "a").reason.endswith("not initialized")
    ok = outcomes.finished(outcomes.decided(first, first, [run]), [run], [CommandResult("", True)])
    assert next(o for o in ok if o.node == "b").outcome == DISRUPTED


def test_verdicts_are_one_bounded_line() -> None:
    long = "why " * 100 + "\nsecond line"
    assert "\n" not in clip(long) and len(clip(long)) == VERDICT_CHARS
    assert clip("short") == "short"


# -- the command's one-line errors ----------------------------------------------------------


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    good = tmp_path / "catalog.yaml"
    good.write_text(yaml.safe_dump(catalog(["m5.large"])))
    cases = [
        (["explain", "n", "--catalog", str(tmp_path / "missing.yaml")], "missing.yaml"),
        (["explain", "n", "--catalog", str(good)], "--kubeconfig: no kubeconfig given"),
        (
            ["explain", "n", "--catalog", str(good), "--kubeconfig", str(tmp_path / "nope")],
            "--kubeconfig",
        ),
    ]
    for argv, what in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("joinery explain: ") and what in err


def test_nodes_an_earlier_round_disrupted_are_still_told_with_their_round() -> None:
    earlier = [
        NodeOutcome("gone", DISRUPTED, "Empty: delete 1 empty node", 3),
        NodeOutcome("failed", UNDONE, "Underutilized: s: not initialized", 3),
        NodeOutcome("still", KEPT, "too full", 3),
        NodeOutcome("d", DISRUPTED, "named again now", 3),
    ]
    now = Decision(kept_nodes={"d": "too full"})
    got = {o.node: (o.outcome, o.round) for o in outcomes.decided(now, now, [], 4, earlier)}
    assert got == {"d": (KEPT, 4), "gone": (DISRUPTED, 3), "failed": (UNDONE, 3)}

    cluster, result = _live(_cluster())
    status = _status(*outcomes.decided(now, now, [], 7, earlier))
    e = explain("gone", cluster, result, WorkflowFacts(status, False, []))
    assert (e.last_round.round, e.last_round.at) == (3, "")
    assert "last round:  round 3: disrupted: Empty: delete 1 empty node" in X.to_text(e)


def test_a_large_command_names_a_few_of_its_nodes_in_text_and_all_in_json() -> None:
    docs = [pool(requirements=OD_AMD, budgets=[{"nodes": "100%"}])]
    for i in range(8):
        docs += node_and_claim(f"e{i}")
    cluster, result = _live(docs)
    e = explain("e3", cluster, result, NO_WORKFLOW)
    assert len(e.now.nodes) == 8 and len(X.to_dict(e)["now"]["nodes"]) == 8
    assert X.to_text(e).splitlines()[1].endswith("[e0, e1, e2, e3, e4, +3 more]")
