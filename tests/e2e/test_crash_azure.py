"""SIGKILL the worker mid-launch and mid-termination on the Azure path; nothing leaks, no claim
ever gets a second VM.

Real parts: the Azure emulator (in this process, over HTTPS), the Temporal dev server,
kube-apiserver & co. with kwok, simulated kubelets. The worker runs as ``joinery worker
--provider azure`` in a child process. A Deployment (one pod per node) is scaled up, then to
zero with its NodeClaims deleted, a few times over. The kills are aimed: the emulator's
request handler is observed, and each kill lands a moment after the worker made a VM or NIC
write (a PUT: mid-launch, while the create is a long-running operation; a DELETE:
mid-termination), so kills interrupt launches and terminations in flight; one with no write
for a while lands between them. Each phase takes a few kills, then finishes without, and the
cycles go on until at least 20 kills, 6 of each kind, have landed.

Counted emulator-side, from every write the emulator answered: each claim's VMs (names a
PUT created, with the claim's tag) must be one, ever; at the end no VM and no NIC is left in
the node resource group. ``JOINERY_CRASH_SEED`` changes the run; ``JOINERY_CRASH_KILLS=0``
runs it without kills.
"""

from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from activities.azure.clients import compute_client, network_client
from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube, from_kubeconfig
from activities.kubernetes.errors import KubernetesError
from activities.kubernetes.resources import AKSNODECLASS, NODEPOOL
from sandbox.azure.credential import FakeCredential
from sandbox.azure.dev_stack import AzureDevCloud
from sandbox.azure.vm_nodes import vm_node_maker
from sandbox.cluster import Cluster
from sandbox.nodes import NodeSimulator
from tests.support.azure_writes import ArmWrites
from tests.support.crash_stack import create_web, running, temporal_and_cluster, worker_argv
from tests.support.kube_objects import create_namespace
from tests.support.waiting import eventually
from tests.support.worker_chaos import Aim, WorkerChaos
from tests.support.worker_process import WorkerProcess

REGION = "eastus"
CLUSTER = "crash-azure"
POOL = "crash"
SIZE = "Standard_D2s_v3"
SEED = int(os.environ.get("JOINERY_CRASH_SEED", str(random.randrange(1_000_000))))
KILLS_ON = os.environ.get("JOINERY_CRASH_KILLS") != "0"
REPLICAS = 3
MIN_KILLS = 20
# Kills aimed at each kind of write the run must land (beside the ones between writes).
MIN_AIMED = 6
MAX_CYCLES = 5
# After a VM or NIC write, the kill lands within this many seconds (the create is still a
# long-running operation, or the delete still in flight).
KILL_DELAY = (0.0, 1.5)
# With no write for this long after a worker came up, it is killed anyway (a restart caught
# between writes: a registration, a drain).
IDLE_KILL = (15.0, 25.0)
VM_CREATE_SECONDS = 2.0
VM_DELETE_SECONDS = 1.5
# Kills each phase (a scale-up's launches, the terminations after it) may take.
KILLS_PER_PHASE = 4
PHASE_LIMIT = 240.0
CATALOG_WAIT = 180.0
TEST_LIMIT = CATALOG_WAIT + 2 * MAX_CYCLES * PHASE_LIMIT + 300.0


def aim_at_writes(writes: ArmWrites, rng: random.Random) -> Aim:
    """The moment a kill lands: a little after the worker's next VM or NIC write (the write's
    kind), or after a while without one ("idle")."""

    def aim(halt: threading.Event) -> str | None:
        seen = writes.writes
        patience = time.monotonic() + rng.uniform(*IDLE_KILL)
        while writes.writes == seen and time.monotonic() < patience:
            if halt.wait(0.05):
                return None
        kind = writes.last_kind if writes.writes != seen else "idle"
        return None if halt.wait(rng.uniform(*KILL_DELAY)) else kind

    return aim


class KillBudget:
    """The kills a phase may take (``arm``); once spent, the phase finishes without kills,
    so every launch and termination gets through however the kills fall."""

    def __init__(self) -> None:
        self.left = 0
        self._lock = threading.Lock()

    def arm(self, kills: int) -> None:
        with self._lock:
            self.left = kills

    def spend(self) -> bool:
        with self._lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("crash-azure")
    cloud = AzureDevCloud.start(REGION, CLUSTER, work, log=print)
    # Azure takes a minute or so to create a VM and tens of seconds to delete one; a few
    # seconds here keep each write in flight long enough for a kill to land inside it.
    cloud.emulator.vms.create_seconds = VM_CREATE_SECONDS
    cloud.emulator.vms.delete_seconds = VM_DELETE_SECONDS
    writes = ArmWrites()
    writes.observe(cloud.emulator)
    try:
        with temporal_and_cluster(work) as (_, env, cluster):
            yield {
                "cluster": cluster,
                "env": env,
                "cloud": cloud,
                "writes": writes,
                "work": work,
            }
    finally:
        cloud.stop()


def worker_process(stack: dict[str, Any]) -> WorkerProcess:
    cluster: Cluster = stack["cluster"]
    cloud: AzureDevCloud = stack["cloud"]
    argv = worker_argv(
        stack["env"],
        cluster,
        stack["work"],
        cluster_name=CLUSTER,
        region=REGION,
        cloud=["--provider", "azure", "--cluster-endpoint", cluster.server],
    )
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AZURE_", "JOINERY_"))
    }
    return WorkerProcess(argv, stack["work"] / "worker.log", {**inherited, **cloud.env()})


def setup_cluster(admin: Kube, cloud: AzureDevCloud, namespace: str) -> None:
    custom_objects.create(
        admin,
        AKSNODECLASS,
        {
            "metadata": {"name": "default"},
            "spec": {"imageFamily": "Ubuntu2204", "vnetSubnetID": cloud.subnet_id},
        },
    )
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [SIZE]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    custom_objects.create(
        admin,
        NODEPOOL,
        {
            "metadata": {"name": POOL},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {
                            "group": AKSNODECLASS.group,
                            "kind": AKSNODECLASS.kind,
                            "name": "default",
                        },
                        "requirements": requirements,
                    }
                },
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
            },
        },
    )
    create_namespace(admin, namespace)
    create_web(admin, namespace, POOL, replicas=0)


def _scale(admin: Kube, namespace: str, replicas: int) -> None:
    raw.call(
        k8s.AppsV1Api(admin.api_client).patch_namespaced_deployment_scale,
        "web",
        namespace,
        {"spec": {"replicas": replicas}},
    )


def _wait(what: str, done: Callable[[], Any]) -> None:
    eventually(done, timeout=PHASE_LIMIT, what=what, every=0.5, tolerate=(KubernetesError,))


def leftovers(cloud: AzureDevCloud) -> tuple[list[str], list[str]]:
    """The VMs and NICs in the node resource group, read through ARM."""
    credential = FakeCredential()
    compute = compute_client(
        cloud.subscription, endpoint=cloud.endpoint, credential=credential, ca_file=cloud.ca_file
    )
    network = network_client(
        cloud.subscription, endpoint=cloud.endpoint, credential=credential, ca_file=cloud.ca_file
    )
    group = cloud.resource_group
    return (
        sorted(str(v.name) for v in compute.virtual_machines.list(group)),
        sorted(str(n.name) for n in network.network_interfaces.list(group)),
    )


def _enough(chaos: WorkerChaos, worker: WorkerProcess) -> bool:
    """Enough kills landed, and enough of them mid-launch and mid-termination."""
    aimed = min(chaos.kinds.get("launch", 0), chaos.kinds.get("termination", 0))
    return worker.kills >= MIN_KILLS and aimed >= MIN_AIMED


@pytest.mark.timeout(TEST_LIMIT)
def test_azure_worker_killed_mid_launch_and_termination(stack: dict[str, Any]) -> None:
    rng = random.Random(SEED)
    cluster: Cluster = stack["cluster"]
    cloud: AzureDevCloud = stack["cloud"]
    writes: ArmWrites = stack["writes"]
    admin = from_kubeconfig(cluster.admin_kubeconfig_path)
    namespace = f"crash-{uuid.uuid4().hex[:6]}"
    setup_cluster(admin, cloud, namespace)
    worker = worker_process(stack)
    budget = KillBudget()
    chaos = WorkerChaos(
        worker,
        aim_at_writes(writes, rng),
        may_kill=budget.spend,
        enabled=KILLS_ON,
        name="aimed-chaos",
    )
    started = time.monotonic()
    cycles = 0
    try:
        with NodeSimulator(admin, interval=0.25, make_node=vm_node_maker(cloud.emulator)):
            worker.start()
            _scale(admin, namespace, REPLICAS)
            # the first launch loads the catalog; kills start once it is cached
            eventually(
                (stack["work"] / "catalog.cache").exists,
                timeout=CATALOG_WAIT,
                what="catalog cached by the first planning round",
                every=0.5,
            )
            chaos.start()
            chaos.firing.set()
            while cycles < MAX_CYCLES and (cycles < 2 or not _enough(chaos, worker)):
                cycles += 1
                budget.arm(KILLS_PER_PHASE)
                _scale(admin, namespace, REPLICAS)
                _wait(
                    f"cycle {cycles}: {REPLICAS} pods Running",
                    lambda: running(admin, namespace) == REPLICAS,
                )
                budget.arm(KILLS_PER_PHASE)
                _scale(admin, namespace, 0)
                claims, _ = nodeclaims.list_(admin, nodepool=POOL)
                for claim in claims:
                    nodeclaims.delete(admin, claim["metadata"]["name"])
                _wait(
                    f"cycle {cycles}: every NodeClaim gone",
                    lambda: not nodeclaims.list_(admin, nodepool=POOL)[0],
                )
            chaos.firing.clear()
            chaos.stop()
            left: list[tuple[list[str], list[str]]] = [([], [])]

            def nothing_left() -> bool:
                left[0] = leftovers(cloud)
                return not left[0][0] and not left[0][1]

            try:
                eventually(nothing_left, timeout=150, what="no VM or NIC left", every=1.0)
            except AssertionError:
                raise AssertionError(f"VMs, NICs left: {left[0]}") from None
    finally:
        chaos.halt.set()
        worker.stop()
        admin.close()
    print(
        f"\nazure crash test seed={SEED}: {worker.kills} SIGKILLs {chaos.kinds} over {cycles} "
        f"cycles of {REPLICAS} launches and terminations, {len(writes.vms_by_claim)} claims, "
        f"{writes.writes} VM/NIC writes, in {time.monotonic() - started:.0f}s"
    )
    assert not writes.doubles(), f"claims with more than one VM: {writes.doubles()}"
    assert len(writes.vms_by_claim) >= cycles * REPLICAS
    if KILLS_ON:
        assert worker.kills >= MIN_KILLS, chaos.kinds
        assert _enough(chaos, worker), chaos.kinds
