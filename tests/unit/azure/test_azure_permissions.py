"""The Azure roles hold exactly what the worker's code calls (activities/azure/permissions.py).

The code is scanned for azure-mgmt operations (tests/support/azure_sdk_calls.py: generic, it
names no call), each found call must be in the table, each table entry must be called, and
each entry's own action must be the one ARM checks for the request the SDK sends (recorded
from the SDK itself, never sent). The role files in deploy/azure/ and the JSON in
docs/azure.md are the ones built from the table, and every action is explained there.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from activities.azure import permissions as P
from tests.support.azure_sdk_calls import (
    Site,
    arm_action,
    calls_in_source,
    properties_in_source,
    request_of,
)

REPO = Path(__file__).resolve().parents[3]
# The code the worker runs with the role: its activities, workflows and runtime. The CLI's
# operator commands (`joinery doctor`, `catalog`, `plan`) run with the operator's identity.
WORKER_CODE = ("activities", "workflows", "worker/running")
DEPLOY = REPO / "deploy" / "azure"
DOC = REPO / "docs" / "azure.md"

# Calls issue 32 names that this branch's code does not make yet (the VM and NIC lifecycle,
# node images). Tolerated only while no code makes them: once one is called, the test below
# fails until it is deleted here, so the list can only shrink.
NOT_YET_CALLED: set[str] = set()


def _talks_to_azure(path: Path, source: str) -> bool:
    """Azure code: activities/azure, or a module importing the SDK or it. Other code's
    ``images.get`` on a dict is not an SDK call."""
    if "azure" in path.relative_to(REPO).parts:
        return True
    for node in ast.walk(ast.parse(source)):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(n == "azure" or n.startswith(("azure.", "activities.azure")) for n in names):
            return True
    return False


def _azure_modules() -> list[tuple[str, str]]:
    """(path, source) of each module of the worker's Azure code."""
    out = []
    for folder in WORKER_CODE:
        for path in sorted((REPO / folder).rglob("*.py")):
            source = path.read_text()
            if _talks_to_azure(path, source):
                out.append((str(path.relative_to(REPO)), source))
    return out


def worker_calls() -> dict[str, list[Site]]:
    found: dict[str, list[Site]] = {}
    for rel, source in _azure_modules():
        for name, sites in calls_in_source(source, rel).items():
            found.setdefault(name, []).extend(sites)
    return found


def worker_links() -> dict[str, list[Site]]:
    """The request-body properties of ``permissions.LINKS`` the worker's Azure code sets (the
    table itself names them all, and is no request)."""
    table = str(Path(P.__file__).resolve().relative_to(REPO))
    found: dict[str, list[Site]] = {}
    for rel, source in _azure_modules():
        if rel == table:
            continue
        for prop, sites in properties_in_source(source, P.LINKS, rel).items():
            found.setdefault(prop, []).extend(sites)
    return found


# -- the table against the code ----------------------------------------------------------


def test_every_sdk_call_the_worker_makes_is_in_the_table() -> None:
    calls = worker_calls()
    assert "compute.resource_skus.list" in calls  # the scan sees the catalog's call
    unlisted = {name: [str(s) for s in sites] for name, sites in calls.items()}
    for name in P.BY_NAME:
        unlisted.pop(name, None)
    assert unlisted == {}, f"add {unlisted} and their actions to activities/azure/permissions.py"


def test_every_call_in_the_table_is_made_by_the_code() -> None:
    calls = worker_calls()
    unneeded = sorted(set(P.BY_NAME) - set(calls) - NOT_YET_CALLED)
    assert unneeded == [], f"no code makes {unneeded}: drop them from permissions.CALLS"
    landed = sorted(NOT_YET_CALLED & set(calls))
    assert landed == [], f"the code now calls {landed}: delete them from NOT_YET_CALLED"
    assert set(P.BY_NAME) >= NOT_YET_CALLED


def test_every_link_a_request_body_makes_is_granted() -> None:
    """A body naming a subnet, a NIC, an identity, a load balancer pool, a security group ...
    needs that link's action: each one the code sets is granted with some call."""
    granted = {g for c in P.CALLS for g in c.grants[1:]}
    ungranted = {
        prop: [str(s) for s in sites]
        for prop, sites in worker_links().items()
        if P.LINKS[prop] not in granted
    }
    assert ungranted == {}, (
        f"grant each link's action with the call whose body sets it: {ungranted}"
    )


def test_every_linked_action_granted_is_set_by_the_code() -> None:
    """Each action a call holds beyond its own is a link's, and the code sets that link
    (unless the call itself is not made yet)."""
    by_grant = {g: prop for prop, g in P.LINKS.items()}
    links = worker_links()
    unset = []
    for call in P.CALLS:
        for grant in call.grants[1:]:
            assert grant in by_grant, f"{call.name}: {grant.action} is no link's action"
            if by_grant[grant] not in links and call.name not in NOT_YET_CALLED:
                unset.append(f"{call.name}: {grant.action} ({by_grant[grant]})")
    assert unset == [], f"no code sets these links: drop their actions: {unset}"


@pytest.mark.parametrize("call", P.CALLS, ids=lambda c: c.name)
def test_each_calls_own_action_is_the_one_its_request_needs(call: P.Call) -> None:
    """The SDK's own request for the call (method and URL, recorded, never sent) maps to the
    first action listed, and a URL naming no resource group is granted at the subscription."""
    method, path = request_of(call.sdk, call.group, call.method)
    action, subscription_wide = arm_action(method, path)
    own = call.grants[0]
    assert own.action.lower() == action.lower(), (method, path)
    assert (own.scope == P.SUBSCRIPTION) == subscription_wide, (own.scope, path)
    # what the body links to is in a resource group, never the subscription
    assert all(g.scope != P.SUBSCRIPTION for g in call.grants[1:])


def test_the_issues_calls_are_all_granted() -> None:
    """Issue 32's lifecycle: VMs and NICs created, read, listed and deleted, OS disks deleted,
    Resource SKUs listed, community gallery image versions read, the subnet read and joined,
    the kubelet identity assigned."""
    granted = set(P.actions())
    for action in (
        *(f"Microsoft.Compute/virtualMachines/{v}" for v in ("write", "read", "delete")),
        *(f"Microsoft.Network/networkInterfaces/{v}" for v in ("write", "read", "delete")),
        "Microsoft.Network/networkInterfaces/join/action",
        "Microsoft.Compute/disks/delete",
        "Microsoft.Compute/skus/read",
        "Microsoft.Compute/locations/communityGalleries/images/versions/read",
        "Microsoft.Network/virtualNetworks/subnets/read",
        "Microsoft.Network/virtualNetworks/subnets/join/action",
        "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action",
    ):
        assert action in granted, action


# -- the roles as shipped and documented ----------------------------------------------------


def test_each_scope_has_one_role_with_its_actions() -> None:
    every: set[str] = set()
    for scope in P.SCOPES:
        role = P.role_definition(scope)
        assert role["Actions"] == sorted(set(role["Actions"])) and role["Actions"]
        assert not every & set(role["Actions"]), "an action granted at two scopes"
        every |= set(role["Actions"])
        assert role["AssignableScopes"] == ["/subscriptions/<subscription-id>"]
    assert every == set(P.actions())
    # no wildcard and nothing beyond what a call needs
    assert not any("*" in a for a in every)


def test_the_deploy_files_are_the_generated_roles() -> None:
    assert sorted(p.name for p in DEPLOY.glob("*.json")) == sorted(P.ROLE_FILES.values())
    for scope, name in P.ROLE_FILES.items():
        regenerate = "python -m activities.azure.permissions deploy/azure"
        assert (DEPLOY / name).read_text() == P.role_json(scope), regenerate


def _documented_roles(text: str) -> dict[str, object]:
    marker = "<!-- roles: generated by activities/azure/permissions.role_definition() -->"
    assert marker in text, "no role marker in docs/azure.md"
    after = text.split(marker, 1)[1]
    blocks = re.findall(r"```json\n(.*?)\n\s*```", after, re.S)
    out = {}
    for block in blocks[: len(P.SCOPES)]:
        role = json.loads(textwrap.dedent(block))
        out[role["Name"]] = role
    return out


def test_the_docs_show_the_roles_and_explain_every_action() -> None:
    text = DOC.read_text()
    documented = _documented_roles(text)
    assert documented == {P.ROLE_NAMES[s]: P.role_definition(s) for s in P.SCOPES}
    table = text.split("Why each action", 1)[1].split("\n## ", 1)[0]
    for call in P.CALLS:
        row = next((line for line in table.splitlines() if f"`{call.name}`" in line), "")
        assert row, f"{call.name} has no row in docs/azure.md's call table"
        for grant in call.grants:
            assert f"`{grant.action}`" in row, (call.name, grant.action)


# -- the oracles themselves -----------------------------------------------------------------


def test_the_scan_finds_calls_through_names_bound_to_operation_groups() -> None:
    source = textwrap.dedent(
        """
        class P:
            def __init__(self, compute, network):
                self._vms = compute.virtual_machines
                nics: object = network.network_interfaces
                self.cache = {}

            def go(self, compute):
                compute.resource_skus.list(filter="location eq 'eastus'")
                self._vms.begin_delete("rg", "vm").result()
                nics.get("rg", "nic")
                self.cache.get("x")              # not an operations group
                compute.virtual_machines.frobnicate()  # no such operation
                self.images.get("x")             # an SDK group name: counted
                retry(compute.disks.begin_delete, "rg", "disk")  # handed on uncalled
        """
    )
    found = calls_in_source(source, "p.py")
    assert sorted(found) == [
        "compute.disks.begin_delete",
        "compute.images.get",
        "compute.resource_skus.list",
        "compute.virtual_machines.begin_delete",
        "network.network_interfaces.get",
    ]
    assert [s.line for s in found["compute.virtual_machines.begin_delete"]] == [10]


def test_the_scan_finds_links_as_model_keywords_and_json_keys() -> None:
    source = textwrap.dedent(
        """
        ip = NetworkInterfaceIPConfiguration(
            name="ipconfig1",
            subnet=Subnet(id=subnet_id),
            load_balancer_backend_address_pools=pools,
        )
        vm = {"identity": {"type": "UserAssigned", "userAssignedIdentities": {i: {} for i in ids}}}
        nsg = settings.network_security_group       # an attribute read is not a body
        """
    )
    found = properties_in_source(source, P.LINKS, "p.py")
    assert sorted(found) == ["loadBalancerBackendAddressPools", "subnet", "userAssignedIdentities"]
    assert [s.line for s in found["userAssignedIdentities"]] == [7]


def test_the_ec2_code_is_not_read_as_azure_calls() -> None:
    """activities/ec2 calls ``images.get`` on a dict of AMIs: not Azure code, not scanned."""
    fleet = REPO / "activities" / "ec2" / "fleet.py"
    assert "compute.images.get" in calls_in_source(fleet.read_text())
    assert not _talks_to_azure(fleet, fleet.read_text())
    assert "compute.images.get" not in worker_calls()


@pytest.mark.parametrize(
    ("method", "path", "action", "subscription_wide"),
    [
        (
            "GET",
            "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/v/instanceView",
            "Microsoft.Compute/virtualMachines/instanceView/read",
            False,
        ),
        (
            "POST",
            "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/v/deallocate",
            "Microsoft.Compute/virtualMachines/deallocate/action",
            False,
        ),
        (
            "PUT",
            "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/n/subnets/s",
            "Microsoft.Network/virtualNetworks/subnets/write",
            False,
        ),
        (
            "GET",
            "/subscriptions/s/resourcegroups/g",
            "Microsoft.Resources/subscriptions/resourcegroups/read",
            False,
        ),
        (
            "GET",
            "/subscriptions/s/providers/Microsoft.Compute/skus",
            "Microsoft.Compute/skus/read",
            True,
        ),
    ],
)  # fmt: skip
def test_arm_actions_from_request_urls(
    method: str, path: str, action: str, subscription_wide: bool
) -> None:
    assert arm_action(method, path) == (action, subscription_wide)
