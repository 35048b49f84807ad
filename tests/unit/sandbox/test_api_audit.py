"""The audit log's reading by client: what the scale benchmark's per-client table rests on."""

from __future__ import annotations

import json
from pathlib import Path

from activities.kubernetes import client
from sandbox import api_audit, nodes

SCHEDULER = "kube-scheduler/v1.31.0 (linux/amd64) kubernetes/abc123/scheduler"
NODE_CONTROLLER = "kube-controller-manager/v1.31.0 (linux/amd64) kubernetes/abc123/node-controller"


def _line(agent: str, verb: str, resource: str, code: int, at: str, **ref: str) -> str:
    event = {
        "verb": verb,
        "userAgent": agent,
        "objectRef": {"resource": resource, **ref},
        "responseStatus": {"code": code},
        "requestReceivedTimestamp": at,
    }
    return json.dumps(event) + "\n"


def test_requests_are_grouped_by_client_verb_resource_and_code(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text(_line("joinery/0.1.0", "get", "nodes", 200, "2026-01-01T00:00:00.000000Z"))
    offset = api_audit.size(log)
    t = "2026-01-01T00:00:05.000000Z"
    with log.open("a") as f:
        f.write(_line("joinery/0.1.0", "patch", "nodes", 200, t))
        f.write(_line("joinery/0.1.0", "patch", "nodes", 409, t))
        f.write(_line("joinery/0.1.0", "patch", "nodeclaims", 200, t, subresource="status"))
        f.write(_line("joinery/0.1.0", "watch", "nodes", 200, t))  # long-running: left out
        f.write(_line(SCHEDULER, "create", "events", 201, t))
        f.write(_line(NODE_CONTROLLER, "patch", "nodes", 200, t))
        f.write(_line("joinery-sandbox-nodes/0.1.0", "create", "nodes", 201, t))
        f.write(_line("kwok/v0.6.0", "update", "leases", 200, "2026-01-01T00:01:00.000000Z"))
        f.write('{"verb": "get", "userAg')  # a line still being written
    until = 1767225630.0  # 2026-01-01T00:00:30Z: the kwok line is after the burst
    counted = api_audit.by_client(log, offset, until=until)
    assert counted == {
        ("joinery", "patch", "nodes", 200): 1,
        ("joinery", "patch", "nodes", 409): 1,
        ("joinery", "patch", "nodeclaims/status", 200): 1,
        ("kube-scheduler/scheduler", "create", "events", 201): 1,
        ("kube-controller-manager/node-controller", "patch", "nodes", 200): 1,
        ("joinery-sandbox-nodes", "create", "nodes", 201): 1,
    }
    table = api_audit.table(counted, nodes=2)
    assert next(iter(table)) == "joinery"
    assert table["joinery"] == {
        "total": 3,
        "perNode": 1.5,
        "requests": {"PATCH nodes": 1, "PATCH nodes 409": 1, "PATCH nodeclaims/status": 1},
    }


def test_the_apiserver_flags_name_the_policy_and_one_unrotated_log(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    log, args = api_audit.apiserver_args(tmp_path)
    assert f"--audit-log-path={log}" in args and "--audit-log-maxsize=0" in args
    policy = tmp_path / "audit-policy.yaml"
    assert f"--audit-policy-file={policy}" in args and "level: Metadata" in policy.read_text()


def test_joinery_and_the_node_simulator_name_themselves_apart(tmp_path: Path) -> None:
    """The audit log tells clients apart by user agent: the Python client's default is every
    Python program's, so Joinery's and the sandbox's node simulator's each send their own."""
    config = tmp_path / "kubeconfig"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    worker = client.from_kubeconfig(config)
    simulator = client.from_kubeconfig(config, user_agent=nodes.USER_AGENT)
    try:
        agents = {worker.api_client.user_agent, simulator.api_client.user_agent}
        assert {api_audit.client_of(a) for a in agents} == {"joinery", "joinery-sandbox-nodes"}
    finally:
        worker.close()
        simulator.close()
