"""Kill the worker with SIGKILL at random moments during NodeClaim lifecycles; restart it.

Real parts: Temporal dev server, kube-apiserver & co. with kwok, simulated kubelets, moto.
The worker runs as ``joinery worker`` in a child process. A Deployment (4 replicas, one per
node) guarded by a PodDisruptionBudget (maxUnavailable 1) makes the provisioner create
NodeClaims; then half of them are deleted, so their nodes drain through the PDB while
replacements are provisioned. Through each phase the worker is killed 3-10 s after it came
up (for at most ``KILL_WINDOW`` seconds; then the phase must finish without kills, and the
run says so).

Afterwards: every NodeClaim converged (Ready, or gone if deleted), exactly one live instance
per NodeClaim, no live instance without a NodeClaim, and the Deployment never had fewer
available pods than the PDB allows. ``JOINERY_CRASH_SEED`` / ``JOINERY_CRASH_REPLICAS``
change the run.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.ec2.clients import AWSClients
from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube, from_kubeconfig
from activities.kubernetes.errors import AlreadyExists, KubernetesError
from activities.kubernetes.resources import EC2NODECLASS, NODEPOOL
from sandbox import fleet_checks
from sandbox.cluster import Cluster
from sandbox.ec2.emulation import Emulation, install, uninstall
from sandbox.ec2.seed import seed_region
from sandbox.ec2.server import start_server
from sandbox.nodes import NodeSimulator
from sandbox.scenarios import spread_fleet as fleet
from tests.support.crash_invariants import Sampler, check_order
from tests.support.crash_stack import BIN, create_web, running, temporal_and_cluster, worker_argv
from tests.support.kube_objects import create_namespace
from tests.support.manifests import nodepool_body
from tests.support.round_history import Rounds, read_rounds
from tests.support.waiting import eventually
from tests.support.worker_chaos import WorkerChaos, at_random
from tests.support.worker_process import WorkerProcess

REGION = "us-east-1"
CLUSTER = "crash"
POOL = "crash"
SEED = int(os.environ.get("JOINERY_CRASH_SEED", str(random.randrange(1_000_000))))
REPLICAS = int(os.environ.get("JOINERY_CRASH_REPLICAS", "4"))
# Seconds a worker lives before SIGKILL. Each kill costs the survivors about 10 s (lost
# activities wait for their heartbeat / start-to-close timeouts, workflows for the dead sticky
# queue); the worker keeps the EC2 catalog in a file cache so a restart does not reload it.
KILL_EVERY = (3.0, 10.0)
# JOINERY_CRASH_KILLS=0 runs the same phases without kills (to compare).
KILLS_ON = os.environ.get("JOINERY_CRASH_KILLS") != "0"
# Seconds of kills per phase (provisioning; drains and replacements), and then how long the
# phase may take to finish without kills. Larger runs (JOINERY_CRASH_REPLICAS) scale them.
# Drains go one at a time (the PDB allows one pod down), each waiting for a replacement node,
# so the second phase grows with the replica count.
KILL_WINDOW = 120.0 + 4.0 * REPLICAS
SETTLE = 180.0 + 15.0 * REPLICAS
CATALOG_WAIT = 180.0
# The longest a run may take: the catalog, then two phases at their limits, then cleanup.
TEST_LIMIT = CATALOG_WAIT + 2 * (KILL_WINDOW + SETTLE) + 120.0


class Chaos:
    """The kill loop (``WorkerChaos``, kills at random) and the phases it fires through."""

    def __init__(
        self,
        worker: WorkerProcess,
        rng: random.Random,
        every: tuple[float, float] = KILL_EVERY,
    ) -> None:
        self.worker = worker
        self.loop = WorkerChaos(worker, at_random(rng, every), enabled=KILLS_ON)
        self.held: list[str] = []  # phases that had to finish without kills

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()

    def phase(
        self,
        done: Callable[[], Any],
        what: str,
        stack: dict[str, Any],
        window: float = KILL_WINDOW,
        settle: float = SETTLE,
        killed: bool = False,
    ) -> None:
        """Kill through a phase for up to ``window`` seconds, then hold fire until it is
        done: every kill costs the survivors ~10 s, and on a slow machine endless kills
        could starve progress; the phase must finish either way.

        With ``killed``, a phase is not over within the window before its first kill: a fast
        phase would otherwise end before any kill landed and the run would test nothing. A
        kill after the work is done still checks that a restarted worker leaves a converged
        cluster converged."""
        kills_before = self.worker.kills

        def killed_and_done() -> Any:
            if killed and KILLS_ON and self.worker.kills == kills_before:
                return None
            return done()

        self.loop.firing.set()
        try:
            eventually(
                killed_and_done, timeout=window, what=what, every=0.5, tolerate=(KubernetesError,)
            )
        except AssertionError:
            self.loop.firing.clear()
            self.held.append(what)
            try:
                eventually(done, timeout=settle, what=what, every=0.5, tolerate=(KubernetesError,))
            except AssertionError:
                print(_temporal_view(stack))
                raise
        finally:
            self.loop.firing.clear()


class AvailabilityProbe(threading.Thread):
    """Samples how many of the Deployment's pods are running (what the PDB protects)."""

    def __init__(self, admin: Kube, namespace: str) -> None:
        super().__init__(name="pdb-probe", daemon=True)
        self.admin, self.namespace = admin, namespace
        self.halt = threading.Event()
        self.armed = False
        self.lowest = REPLICAS

    def available(self) -> int:
        return running(self.admin, self.namespace)

    def run(self) -> None:
        while not self.halt.wait(0.2):
            try:
                count = self.available()
            except KubernetesError:
                continue
            if self.armed:
                self.lowest = min(self.lowest, count)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("crash")
    server = start_server()
    install(Emulation())
    clients = AWSClients.create(REGION, server.endpoint_url, server.session())
    seed_region(clients.ec2, REGION, CLUSTER)
    try:
        with temporal_and_cluster(work) as (loop, env, cluster):
            yield {
                "cluster": cluster,
                "env": env,
                "loop": loop,
                "server": server,
                "clients": clients,
                "work": work,
            }
    finally:
        uninstall()
        server.stop()


def nodeclass() -> dict[str, Any]:
    return {
        "metadata": {"name": "default"},
        "spec": {
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": f"KarpenterNodeRole-{CLUSTER}",  # seeded by sandbox.ec2.seed
        },
    }


def setup_cluster(admin: Kube, namespace: str) -> None:
    custom_objects.create(admin, EC2NODECLASS, nodeclass())
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    custom_objects.create(admin, NODEPOOL, nodepool_body(POOL, requirements=requirements))
    create_namespace(admin, namespace)
    raw.call(
        admin.policy.create_namespaced_pod_disruption_budget,
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    create_web(admin, namespace, POOL, REPLICAS)


def worker_command(stack: dict[str, Any]) -> list[str]:
    """``joinery worker`` for the crash cluster, as an operator runs it."""
    return worker_argv(
        stack["env"],
        stack["cluster"],
        stack["work"],
        cluster_name=CLUSTER,
        region=REGION,
        cloud=["--aws-endpoint-url", stack["server"].endpoint_url],
    )


@pytest.mark.timeout(TEST_LIMIT)
def test_worker_killed_at_random_converges(stack: dict[str, Any]) -> None:
    rng = random.Random(SEED)
    cluster: Cluster = stack["cluster"]
    admin = from_kubeconfig(cluster.admin_kubeconfig_path)
    namespace = f"crash-{uuid.uuid4().hex[:6]}"
    with contextlib_suppress_exists():
        setup_cluster(admin, namespace)
    worker = WorkerProcess(worker_command(stack), stack["work"] / "worker.log")
    probe = AvailabilityProbe(admin, namespace)
    chaos = Chaos(worker, rng)
    started = time.monotonic()
    try:
        _run(admin, worker, probe, chaos, stack, started)
    finally:
        worker.stop()
        probe.halt.set()
        admin.close()


def start_killing(
    worker: WorkerProcess, probe: threading.Thread, chaos: Chaos, stack: dict[str, Any]
) -> None:
    """Start the worker and the probe; start the kills once the catalog is cached."""
    worker.start()
    probe.start()
    # The first planning round loads the instance-type catalog from the emulator (slow,
    # and slower on a busy machine); kills before it is cached would only test the
    # catalog load. Start killing once the catalog cache exists: from then on every
    # restart is quick and the kills land in launches, registrations and drains.
    cache = stack["work"] / "catalog.cache"
    eventually(
        cache.exists,
        timeout=CATALOG_WAIT,
        what="catalog cached by the first planning round",
        every=0.5,
        tolerate=(KubernetesError,),
    )
    chaos.start()


def _run(
    admin: Kube,
    worker: WorkerProcess,
    probe: AvailabilityProbe,
    chaos: Chaos,
    stack: dict[str, Any],
    started: float,
) -> None:
    with NodeSimulator(admin, interval=0.25):
        start_killing(worker, probe, chaos, stack)
        try:
            # 1. the Deployment's pods get nodes, through kills
            chaos.phase(
                lambda: probe.available() == REPLICAS, "all replicas running", stack, killed=True
            )
            provisioned = time.monotonic() - started
            first, _ = nodeclaims.list_(admin, nodepool=POOL)
            probe.armed = True
            # 2. delete half of the claims: drains through the PDB, replacements launch
            doomed = sorted(c["metadata"]["name"] for c in first)[: max(1, len(first) // 2)]
            for name in doomed:
                nodeclaims.delete(admin, name)

            def converged() -> bool:
                claims, _ = nodeclaims.list_(admin, nodepool=POOL)
                names = {c["metadata"]["name"] for c in claims}
                return (
                    not names & set(doomed)
                    and probe.available() == REPLICAS
                    and all(_ready(c) for c in claims)
                )

            chaos.phase(converged, "deleted claims gone, replacements Ready", stack, killed=True)
        finally:
            chaos.stop()
    claims, _ = nodeclaims.list_(admin, nodepool=POOL)
    names = {c["metadata"]["name"] for c in claims}
    instances = live_instances(stack, names)
    probe.halt.set()
    elapsed = time.monotonic() - started
    print(
        f"\ncrash test seed={SEED}: {worker.kills} SIGKILLs, {len(names) + len(doomed)} "
        f"lifecycles ({len(doomed)} terminated), provisioned in {provisioned:.0f}s, "
        f"converged in {elapsed:.0f}s, lowest availability {probe.lowest}/{REPLICAS}"
        + (f"; kills held to finish: {chaos.held}" if chaos.held else "")
    )
    assert all(len(ids) == 1 for ids in instances.values()), instances
    assert probe.lowest >= REPLICAS - 1, f"PDB violated: {probe.lowest}/{REPLICAS}"
    # each phase waited for at least one kill (Chaos.phase), so two phases saw two or more
    assert worker.kills >= 2 or not KILLS_ON


def live_instances(stack: dict[str, Any], names: set[str]) -> dict[str, list[str]]:
    """The live instances by claim, once they belong to exactly the claims ``names`` (a
    deleted claim's instance may take a moment to terminate)."""
    seen: list[dict[str, list[str]]] = [{}]

    def settled() -> dict[str, list[str]] | None:
        seen[0] = fleet_checks.instances(stack["clients"].ec2, live_only=True)
        return seen[0] if set(seen[0]) == names else None

    try:
        return eventually(
            settled,
            timeout=60,
            what="no instance without a claim",
            every=0.5,
            tolerate=(KubernetesError,),
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}: claims {sorted(names)}, live instances {seen[0]}") from None


def _temporal_view(stack: dict[str, Any]) -> str:
    """What the workflows say, for a failure message."""
    from models import contract
    from workflows.nodeclaim.workflow import NodeClaimWorkflow
    from workflows.provisioner import ProvisionerWorkflow

    env: WorkflowEnvironment = stack["env"]

    async def view() -> str:
        lines = [
            str(
                await env.client.get_workflow_handle(contract.provisioner_id("crash")).query(
                    ProvisionerWorkflow.status
                )
            )
        ]
        async for wf in env.client.list_workflows("WorkflowType = 'NodeClaim'"):
            try:
                status = await env.client.get_workflow_handle(wf.id).query(NodeClaimWorkflow.status)
                lines.append(str(status))
            except Exception as exc:
                lines.append(f"{wf.id}: {exc}")
        return "\n".join(lines)

    return str(stack["loop"].run_until_complete(view()))


def _ready(claim: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (claim.get("status") or {}).get("conditions") or []
    )


class contextlib_suppress_exists:
    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        return exc_type is not None and issubclass(exc_type, AlreadyExists)


# -- consolidation through kills ------------------------------------------------------------
#
# The fleet of ``sandbox.scenarios.spread_fleet``: fillers on m5.xlarge nodes, a web pod beside
# each; then fillers to 0 and web to half, so empty nodes are deleted and half-used m5.xlarge
# nodes replaced by m5.large ones, one command per round (the pool's budget is 10% of its
# nodes), with the worker SIGKILLed at random through all of it.
CONSOLIDATE_NODES = int(os.environ.get("JOINERY_CRASH_CONSOLIDATE_NODES", "2"))
KEEP = max(1, CONSOLIDATE_NODES // 2)
CONSOLIDATION_POOL = "consolidate"
# Seconds a worker lives after it is up, here: a round's decision reads the whole cluster and
# the catalog, 5-15 s on this loaded machine, and it must fit between two kills now and then
# (a decision whose attempts all die is abandoned and the round runs again later).
# ``JOINERY_CRASH_CONSOLIDATION_KILL_EVERY=LOW,HIGH`` changes it (more kills per round).
_LOW, _HIGH = os.environ.get("JOINERY_CRASH_CONSOLIDATION_KILL_EVERY", "5,25").split(",")
CONSOLIDATION_KILL_EVERY = (float(_LOW), float(_HIGH))
# Each round: debounce, compute, the 15 s validation delay, compute, launch and initialize a
# replacement, delete; about a minute with kills.
CONSOLIDATION_WINDOW = 150.0 + 45.0 * CONSOLIDATE_NODES
CONSOLIDATION_SETTLE = 180.0 + 30.0 * CONSOLIDATE_NODES
CONSOLIDATION_LIMIT = (
    CATALOG_WAIT + 2 * (KILL_WINDOW + SETTLE) + CONSOLIDATION_WINDOW + CONSOLIDATION_SETTLE + 180
)


def setup_consolidation(admin: Kube, namespace: str) -> None:
    with contextlib_suppress_exists():
        custom_objects.create(admin, EC2NODECLASS, nodeclass())
    fleet.create_nodepool(admin, CONSOLIDATION_POOL)
    create_namespace(admin, namespace)
    fleet.create_web_pdb(admin, namespace)
    fleet.create_spread(admin, namespace, CONSOLIDATION_POOL, fleet.FILLER, CONSOLIDATE_NODES)


def joinery(*args: str) -> str:
    """The ``joinery`` command as a whole process; its stdout."""
    done = subprocess.run(
        [str(BIN / "joinery"), *args], capture_output=True, text=True, check=True, timeout=300
    )
    return done.stdout


def disruption_fixpoint(stack: dict[str, Any]) -> dict[str, Any]:
    """``joinery plan --disruption`` on the live cluster, read-only, as an operator asks it:
    the catalog written by ``joinery catalog`` from the same (emulated) region."""
    catalog = stack["work"] / "catalog.json"  # JSON: the whole region parses in a second
    if not catalog.exists():
        endpoint = stack["server"].endpoint_url
        catalog.write_text(
            joinery(
                "catalog",
                "--region",
                REGION,
                "--endpoint-url",
                endpoint,
                "--cluster-name",
                CLUSTER,
                "-o",
                "json",
            )
        )
    kubeconfig = str(stack["cluster"].admin_kubeconfig_path)
    planned = joinery(
        "plan", "--disruption", "--kubeconfig", kubeconfig, "--catalog", str(catalog), "-o", "json"
    )
    return dict(json.loads(planned)["disruption"])


@pytest.mark.timeout(CONSOLIDATION_LIMIT)
def test_consolidation_rounds_survive_kills(stack: dict[str, Any]) -> None:
    rng = random.Random(SEED + 1)
    cluster: Cluster = stack["cluster"]
    admin = from_kubeconfig(cluster.admin_kubeconfig_path)
    watcher = from_kubeconfig(cluster.admin_kubeconfig_path)  # the sampler's own client
    namespace = f"consolidate-{uuid.uuid4().hex[:6]}"
    setup_consolidation(admin, namespace)
    worker = WorkerProcess(worker_command(stack), stack["work"] / "worker-consolidation.log")
    chaos = Chaos(worker, rng, CONSOLIDATION_KILL_EVERY)
    sampler = Sampler(
        watcher,
        CONSOLIDATION_POOL,
        namespace,
        fleet.WEB,
        fleet.BUDGET_PERCENT,
        max_unavailable=fleet.MAX_UNAVAILABLE,
    )
    started = time.monotonic()
    try:
        with NodeSimulator(admin, interval=0.25):
            start_killing(worker, sampler, chaos, stack)
            try:
                baseline = _consolidate(admin, namespace, chaos, sampler, stack)
            finally:
                chaos.stop()
            consolidated = time.monotonic() - started
            # the workflow's last round (no kills now) must find nothing more to do
            plan = eventually(
                lambda: (lambda d: d if not d["commands"] else None)(disruption_fixpoint(stack)),
                timeout=120,
                what="joinery plan --disruption: no command left",
                every=0.5,
                tolerate=(KubernetesError,),
            )
    finally:
        sampler.halt.set()
        worker.stop()
    log = stack["loop"].run_until_complete(read_rounds(stack["env"].client, CLUSTER))
    _check_consolidation(admin, sampler, log, baseline, stack)
    print(
        f"\ncrash consolidation seed={SEED}: {worker.kills} SIGKILLs, {log.rounds} rounds with "
        f"commands, {len(log.commands)} commands ({sum(len(c.replacements) for c in log.commands)} "
        f"replacements), {CONSOLIDATE_NODES} -> {KEEP} nodes in {consolidated:.0f}s, "
        f"{sampler.samples} samples, most disrupting at once {sampler.most_disrupting}, "
        f"lowest availability {sampler.lowest_available}/{KEEP}, "
        f"fixpoint: {len(plan['kept'])} kept, {len(plan['blocked'])} blocked"
        + (f"; kills held to finish: {chaos.held}" if chaos.held else "")
    )
    admin.close()
    watcher.close()
    assert worker.kills >= 3 or not KILLS_ON
    assert log.rounds >= 2 if CONSOLIDATE_NODES >= 2 else log.rounds >= 0


def _consolidate(
    admin: Kube, namespace: str, chaos: Chaos, sampler: Sampler, stack: dict[str, Any]
) -> set[str]:
    """Provision, scale down, consolidate; returns the pool's claims before the scale-down."""
    # 1. fillers get m5.xlarge nodes, then web pods land beside them
    chaos.phase(
        lambda: len(fleet.running(admin, namespace, fleet.FILLER)) == CONSOLIDATE_NODES,
        "fillers running",
        stack,
    )
    fleet.create_spread(admin, namespace, CONSOLIDATION_POOL, fleet.WEB, CONSOLIDATE_NODES)
    chaos.phase(
        lambda: len(fleet.running(admin, namespace, fleet.WEB)) == CONSOLIDATE_NODES,
        "web running beside the fillers",
        stack,
    )
    # 2. scale down: empty nodes go, m5.xlarge nodes holding one web pod are replaced
    before, _ = nodeclaims.list_(admin, nodepool=CONSOLIDATION_POOL)
    fleet.scale(admin, namespace, fleet.FILLER, 0)
    fleet.scale(admin, namespace, fleet.WEB, KEEP)
    eventually(
        lambda: len(fleet.running(admin, namespace, fleet.WEB)) <= KEEP,
        timeout=60,
        what="web scaled down",
        every=0.5,
        tolerate=(KubernetesError,),
    )
    sampler.desired = KEEP
    chaos.phase(
        lambda: fleet.consolidated(admin, namespace, CONSOLIDATION_POOL, KEEP),
        f"consolidated to {KEEP} m5.large",
        stack,
        window=CONSOLIDATION_WINDOW,
        settle=CONSOLIDATION_SETTLE,
    )
    return {c["metadata"]["name"] for c in before}


def _check_consolidation(
    admin: Kube, sampler: Sampler, log: Rounds, baseline: set[str], stack: dict[str, Any]
) -> None:
    problems = list(sampler.violations) + check_order(sampler, log)
    # no karpenter.sh/disrupted taint or DisruptionReason left where no command runs
    problems += fleet_checks.disruption_leftovers(admin)
    claims, _ = nodeclaims.list_(admin)
    names = {c["metadata"]["name"] for c in claims}
    # one instance per claim, ever (a relaunch would leave a second, terminated or not), and
    # every live instance belongs to a live claim
    ever = fleet_checks.instances(stack["clients"].ec2)
    problems += fleet_checks.double_launches({n: ever.get(n, []) for n in sampler.claims})
    live = live_instances(stack, names)
    problems += [f"{n}: {ids}" for n, ids in live.items() if len(ids) != 1]
    # every claim the pool gained is a replacement a command launched
    replacements = {r for c in log.commands for r in c.replacements}
    extra = set(sampler.claims) - replacements - baseline
    problems += [f"claim {n} made by neither provisioning nor a command" for n in sorted(extra)]
    assert not problems, "\n".join(problems)
