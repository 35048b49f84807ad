"""``joinery plan --disruption`` on files, as users run it (the installed ``joinery``): a node
whose EC2NodeClass's ``status.amis`` moved on since its launch is rolled as drifted, and the
reason names the AMIs; a malformed ``status.amis`` is one line naming the object and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.catalogs import ZA, ZB
from tests.support.disruption import ALL, OD_AMD, bound, claim_for, managed, pool
from tests.support.labels import ARCH, NODEPOOL, ZONE
from tests.support.manifests import req
from tests.support.plan_cli import nodeclass, on_class, run

NOW = "2026-11-23T12:00:00Z"


def launched(name: str, image: str, zone: str = ZA) -> list[dict[str, Any]]:
    """A managed m5.xlarge of pool ``p`` and its claim, launched from ``image``."""
    body = managed(name, "m5.xlarge", nodepool_name="p", zone=zone)
    claim = claim_for(body)
    claim["status"]["imageID"] = image
    return [body, claim]


def cluster(first_ami: str, *, zones: list[str] | None = None) -> list[Any]:
    """Pool ``p`` on EC2NodeClass ``linux``, whose ``status.amis`` lists ``first_ami`` first
    (then ami-1, the image node ``n`` was launched from); a pod on ``n``."""
    linux = nodeclass("linux", zones or [ZA, ZB])
    linux["status"]["amis"] = [
        {"id": first_ami, "name": "newest", "requirements": [req(ARCH, "In", "amd64")]},
        {"id": "ami-1", "name": "older", "requirements": [req(ARCH, "In", "amd64")]},
    ]
    return [
        linux,
        on_class(pool("p", requirements=OD_AMD, budgets=ALL, policy="WhenEmpty"), "linux"),
        *launched("n", "ami-1"),
        bound("web-0", "n", "1", "2Gi", node_selector={NODEPOOL: "p"}),
    ]


def test_a_node_whose_nodeclass_amis_moved_on_is_rolled_as_drifted(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, cluster("ami-1"), "--disruption", "--now", NOW)
    assert code == 0, err
    assert out["disruption"]["commands"] == []  # its AMI is still the class's newest
    assert [k["node"] for k in out["disruption"]["kept"]] == ["n"]

    code, out, err = run(tmp_path, cluster("ami-2"), "--disruption", "--now", NOW)
    assert code == 0, err
    (cmd,) = out["disruption"]["commands"]
    assert cmd["reason"] == "Drifted" and cmd["nodes"] == ["n"]
    assert cmd["pods"] == {"default/web-0": "replacement-0"}
    assert cmd["replacements"][0]["nodePool"] == "p"


def test_a_drifted_node_whose_pod_fits_nowhere_says_which_ami_it_should_run(
    tmp_path: Path,
) -> None:
    """The class now has subnets in zone b only, and the pod must stay in zone a: the node is
    kept, and the reason names the drift."""
    docs = cluster("ami-2", zones=[ZB])
    docs[-1] = bound("web-0", "n", "1", "2Gi", node_selector={NODEPOOL: "p", ZONE: ZA})
    code, out, err = run(tmp_path, docs, "--disruption", "--now", NOW)
    assert code == 0, err
    assert out["disruption"]["commands"] == []
    (kept,) = out["disruption"]["kept"]
    assert kept["node"] == "n"
    assert "AMIDrift: ami-1 -> ami-2 (EC2NodeClass linux's AMI for m5.xlarge)" in kept["reason"]


def test_a_malformed_status_amis_is_one_line_naming_the_class_and_field(tmp_path: Path) -> None:
    docs = cluster("ami-2")
    docs[0]["status"]["amis"][1]["requirements"] = [{"key": ARCH, "operator": "Near"}]
    code, out, err = run(tmp_path, docs, "--disruption", "--now", NOW)
    assert code == 2 and out == {}
    (line,) = err.strip().splitlines()
    assert "EC2NodeClass linux" in line and "status.amis[1].requirements" in line
