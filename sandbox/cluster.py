"""A real Kubernetes control plane on loopback, for the component tests and ``joinery dev``.

``Cluster.start()`` runs etcd, kube-apiserver, kube-scheduler, kube-controller-manager and
kwok (which plays kubelet for Nodes annotated ``kwok.x-k8s.io/node: fake``) as child
processes on free 127.0.0.1 ports, installs Joinery's CRDs and RBAC, and writes two
kubeconfigs: an admin one (``system:masters``, for fixtures) and Joinery's own, holding a
service-account token bound to ``deploy/rbac``'s ClusterRole, so a missing permission shows
up as ``Forbidden`` in tests instead of in production.

The binaries come from ``$KUBEBUILDER_ASSETS`` or from ``sandbox/k8s/build.sh``'s cache. Each
child runs in its own process group; ``stop()`` signals exactly those groups.

Run ``python -m sandbox.cluster`` to keep one up until Ctrl-C.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import utils as k8s_utils
from kubernetes.client.exceptions import ApiException

from activities.cache_root import cache_root
from sandbox import api_audit, control_plane_rates
from sandbox.processes import ChildProcess, free_ports, wait_for

REPO = Path(__file__).resolve().parent.parent
K8S_DIR = REPO / "sandbox" / "k8s"
CRD_DIR = REPO / "deploy" / "crds"
RBAC_DIR = REPO / "deploy" / "rbac"
KWOK_STAGES = K8S_DIR / "kwok-stages.yaml"

BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_NODE_ANNOTATION_VALUE = "fake"
JOINERY_NAMESPACE = "joinery"
JOINERY_SERVICE_ACCOUNT = "joinery"
SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.1/16"

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"[cluster] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# binaries


def kubernetes_version() -> str:
    """The k8s.io/kubernetes version pinned in sandbox/k8s/go.mod."""
    match = re.search(r"^\s*k8s\.io/kubernetes\s+(v\S+)", (K8S_DIR / "go.mod").read_text(), re.M)
    if not match:
        raise RuntimeError("sandbox/k8s/go.mod does not require k8s.io/kubernetes")
    return match.group(1)


def cache_dir() -> Path:
    root = os.environ.get("JOINERY_K8S_CACHE")
    return (Path(root) if root else cache_root()) / f"k8s-{kubernetes_version()}"


def _locate() -> dict[str, Path]:
    found: dict[str, Path] = {}
    dirs = [Path(os.environ["KUBEBUILDER_ASSETS"])] if os.environ.get("KUBEBUILDER_ASSETS") else []
    dirs.append(cache_dir())
    for name in BINARIES:
        for d in dirs:
            if os.access(d / name, os.X_OK):
                found[name] = d / name
                break
    return found


def binaries(*, build: bool = True, log: Log = _stderr) -> dict[str, Path]:
    """Paths of the control-plane binaries, building them first (once) when ``build``."""
    found = _locate()
    if len(found) < len(BINARIES) and build:
        log("control-plane binaries missing; running sandbox/k8s/build.sh")
        subprocess.run(["bash", str(K8S_DIR / "build.sh")], check=True)
        found = _locate()
    missing = [b for b in BINARIES if b not in found]
    if missing:
        raise FileNotFoundError(
            f"missing {', '.join(missing)}: run `make k8s-bin` or set KUBEBUILDER_ASSETS"
        )
    return found


# ---------------------------------------------------------------------------------------------
# processes


def _http_ok(url: str, *, context: ssl.SSLContext | None = None, token: str | None = None) -> bool:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=2, context=context) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ssl.SSLError):
        return False


def _insecure() -> ssl.SSLContext:
    # Scheduler and controller-manager serve health on self-signed certs made in memory.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


# ---------------------------------------------------------------------------------------------
# the cluster


def _write_kubeconfig(path: Path, *, server: str, ca_file: Path, user: str, token: str) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "joinery-sandbox",
                "cluster": {"server": server, "certificate-authority": str(ca_file)},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "joinery-sandbox", "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    path.chmod(0o600)


def _load_yaml_dir(directory: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


@dataclass
class Cluster:
    """A running control plane; use as a context manager or call ``stop()``."""

    workdir: Path
    server: str
    ca_file: Path
    kubeconfig_path: Path
    admin_kubeconfig_path: Path
    admin_token: str
    startup_seconds: float = 0.0
    # the API server's audit log (sandbox/api_audit.py), when started with one
    audit_log_path: Path | None = None
    _processes: list[ChildProcess] = field(default_factory=list, repr=False)
    _owns_workdir: bool = field(default=False, repr=False)
    _stopped: bool = field(default=False, repr=False)

    # -- lifecycle ------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        workdir: str | os.PathLike[str] | None = None,
        *,
        log: Log = _stderr,
        audit: bool | None = None,
    ) -> Cluster:
        """Start everything, wait until it serves, install CRDs and RBAC (~10 s when built).
        ``audit``: write the API server's audit log (default: as ``api_audit.ENV`` says)."""
        bins = binaries(log=log)
        began = time.monotonic()
        owns = workdir is None
        root = Path(tempfile.mkdtemp(prefix="joinery-k8s-") if workdir is None else workdir)
        root.mkdir(parents=True, exist_ok=True)
        (root / "logs").mkdir(exist_ok=True)
        etcd_port, peer_port, api_port, sched_port, cm_port, kwok_port = free_ports(6)
        server = f"https://127.0.0.1:{api_port}"
        cert_dir = root / "apiserver-certs"
        ca_file = cert_dir / "apiserver.crt"
        admin_token = secrets.token_hex(16)
        cluster = cls(
            workdir=root,
            server=server,
            ca_file=ca_file,
            kubeconfig_path=root / "joinery.kubeconfig",
            admin_kubeconfig_path=root / "admin.kubeconfig",
            admin_token=admin_token,
            _owns_workdir=owns,
        )
        audit_args: list[str] = []
        if api_audit.wanted() if audit is None else audit:
            cluster.audit_log_path, audit_args = api_audit.apiserver_args(root)
        _register_atexit(cluster)
        try:
            cluster._boot(
                bins,
                etcd_port,
                peer_port,
                api_port,
                sched_port,
                cm_port,
                kwok_port,
                log,
                audit_args,
            )
        except BaseException:
            cluster.stop()
            raise
        cluster.startup_seconds = time.monotonic() - began
        log(f"control plane up at {server} in {cluster.startup_seconds:.1f}s (workdir {root})")
        return cluster

    def _spawn(self, name: str, args: list[str]) -> ChildProcess:
        proc = ChildProcess.spawn(
            name,
            args,
            self.workdir / "logs" / f"{name}.log",
            cwd=self.workdir,
            env={**os.environ, "HOME": str(self.workdir)},  # keep kwok off ~/.kwok
        )
        self._processes.append(proc)
        return proc

    def _boot(
        self,
        bins: dict[str, Path],
        etcd_port: int,
        peer_port: int,
        api_port: int,
        sched_port: int,
        cm_port: int,
        kwok_port: int,
        log: Log,
        audit_args: list[str],
    ) -> None:
        root = self.workdir
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        etcd = self._spawn(
            "etcd",
            [
                str(bins["etcd"]),
                "--name=sandbox",
                f"--data-dir={root / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=sandbox={peer_url}",
                "--unsafe-no-fsync",  # test data: durability not wanted, speed is
                "--log-level=warn",
            ],
        )

        sa_key = root / "service-account.key"
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        sa_key.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )
        tokens = {name: secrets.token_hex(16) for name in ("scheduler", "controller", "kwok")}
        token_file = root / "tokens.csv"
        token_file.write_text(
            f'{self.admin_token},admin,admin,"system:masters"\n'
            f'{tokens["scheduler"]},system:kube-scheduler,scheduler,"system:masters"\n'
            f'{tokens["controller"]},system:kube-controller-manager,controller,"system:masters"\n'
            f'{tokens["kwok"]},kwok,kwok,"system:masters"\n'
        )
        token_file.chmod(0o600)

        wait_for("etcd", lambda: _http_ok(f"{etcd_url}/health"), timeout=30, watch=[etcd])
        apiserver = self._spawn(
            "kube-apiserver",
            [
                str(bins["kube-apiserver"]),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                f"--cert-dir={root / 'apiserver-certs'}",
                f"--token-auth-file={token_file}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={sa_key}",
                f"--service-account-signing-key-file={sa_key}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--endpoint-reconciler-type=none",  # loopback is not a valid endpoint address
                "--allow-privileged=true",
                "--enable-priority-and-fairness=false",
                "--v=0",
                *audit_args,
            ],
        )
        context = None

        def apiserver_ready() -> bool:
            nonlocal context
            if context is None:
                if not self.ca_file.exists():
                    return False
                context = ssl.create_default_context(cafile=str(self.ca_file))
            return _http_ok(f"{self.server}/readyz", context=context, token=self.admin_token)

        wait_for("kube-apiserver /readyz", apiserver_ready, timeout=60, watch=[etcd, apiserver])
        log(f"kube-apiserver ready at {self.server}")

        _write_kubeconfig(
            self.admin_kubeconfig_path,
            server=self.server,
            ca_file=self.ca_file,
            user="admin",
            token=self.admin_token,
        )
        component_configs = {}
        for name, token in tokens.items():
            path = root / f"{name}.kubeconfig"
            _write_kubeconfig(
                path, server=self.server, ca_file=self.ca_file, user=name, token=token
            )
            component_configs[name] = path

        rates = control_plane_rates.chosen()  # an emulated gap: see that module
        log(f"control-plane client rates: {rates}")
        scheduler = self._spawn(
            "kube-scheduler",
            [
                str(bins["kube-scheduler"]),
                f"--kubeconfig={component_configs['scheduler']}",
                f"--authentication-kubeconfig={component_configs['scheduler']}",
                f"--authorization-kubeconfig={component_configs['scheduler']}",
                "--bind-address=127.0.0.1",
                f"--secure-port={sched_port}",
                "--leader-elect=false",
                *control_plane_rates.scheduler_args(rates),
            ],
        )
        controller_manager = self._spawn(
            "kube-controller-manager",
            [
                str(bins["kube-controller-manager"]),
                f"--kubeconfig={component_configs['controller']}",
                f"--authentication-kubeconfig={component_configs['controller']}",
                f"--authorization-kubeconfig={component_configs['controller']}",
                "--bind-address=127.0.0.1",
                f"--secure-port={cm_port}",
                "--leader-elect=false",
                f"--service-account-private-key-file={sa_key}",
                f"--root-ca-file={self.ca_file}",
                "--cluster-name=joinery-sandbox",
                *control_plane_rates.controller_manager_args(rates),
            ],
        )
        kwok = self._spawn(
            "kwok",
            [
                str(bins["kwok"]),
                f"--kubeconfig={component_configs['kwok']}",
                f"--config={KWOK_STAGES}",
                *control_plane_rates.kwok_args(rates, root),
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={KWOK_NODE_ANNOTATION_VALUE}",
                f"--server-address=127.0.0.1:{kwok_port}",
                *control_plane_rates.kwok_lease_args(rates),
                f"--cidr={POD_CIDR}",
            ],
        )

        api = k8s_config.new_client_from_config(config_file=str(self.admin_kubeconfig_path))
        try:
            self._install_crds(api, watch=[etcd, apiserver])
            self._install_rbac(api)
            token = self._joinery_token(api)
        finally:
            api.close()
        _write_kubeconfig(
            self.kubeconfig_path,
            server=self.server,
            ca_file=self.ca_file,
            user=JOINERY_SERVICE_ACCOUNT,
            token=token,
        )
        everything = [etcd, apiserver, scheduler, controller_manager, kwok]
        insecure = _insecure()
        wait_for(
            "kube-scheduler /healthz",
            lambda: _http_ok(f"https://127.0.0.1:{sched_port}/healthz", context=insecure),
            timeout=30,
            watch=everything,
        )
        wait_for(
            "kube-controller-manager /healthz",
            lambda: _http_ok(f"https://127.0.0.1:{cm_port}/healthz", context=insecure),
            timeout=30,
            watch=everything,
        )
        wait_for(
            "kwok /healthz",
            lambda: _http_ok(f"http://127.0.0.1:{kwok_port}/healthz"),
            timeout=30,
            watch=everything,
        )

    def _install_crds(self, api: k8s.ApiClient, *, watch: list[ChildProcess]) -> None:
        ext = k8s.ApiextensionsV1Api(api)
        names = []
        for doc in _load_yaml_dir(CRD_DIR):
            names.append(doc["metadata"]["name"])
            try:
                ext.create_custom_resource_definition(doc)
            except ApiException as exc:
                if exc.status != 409:
                    raise

        def established() -> bool:
            for name in names:
                crd = ext.read_custom_resource_definition(name)
                conditions = (crd.status and crd.status.conditions) or []
                if not any(c.type == "Established" and c.status == "True" for c in conditions):
                    return False
            return True

        wait_for("CRDs Established", established, timeout=30, watch=watch)

    def _install_rbac(self, api: k8s.ApiClient) -> None:
        core = k8s.CoreV1Api(api)
        with contextlib.suppress(ApiException):
            core.create_namespace({"metadata": {"name": JOINERY_NAMESPACE}})
        for doc in _load_yaml_dir(RBAC_DIR):
            try:
                k8s_utils.create_from_dict(api, doc)
            except k8s_utils.FailToCreateError as exc:
                if any(e.status != 409 for e in exc.api_exceptions):
                    raise

    def _joinery_token(self, api: k8s.ApiClient) -> str:
        """A bound token for Joinery's service account, valid for a day."""
        core = k8s.CoreV1Api(api)
        request = {"spec": {"expirationSeconds": 86400}}
        result = core.create_namespaced_service_account_token(
            JOINERY_SERVICE_ACCOUNT, JOINERY_NAMESPACE, request
        )
        return str(result.status.token)

    def stop(self) -> None:
        """Stop the processes this cluster started (newest first) and drop a temp workdir."""
        if self._stopped:
            return
        self._stopped = True
        for proc in reversed(self._processes):
            proc.stop()
        _unregister_atexit(self)
        if self._owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- conveniences for tests and the sandbox ---------------------------------------------

    def admin_client(self) -> k8s.ApiClient:
        return k8s_config.new_client_from_config(config_file=str(self.admin_kubeconfig_path))

    def logs(self) -> dict[str, Path]:
        return {p.name: p.log_path for p in self._processes}

    def pids(self) -> dict[str, int]:
        """Each control-plane process's id, by name (for CPU accounting)."""
        return {p.name: p.popen.pid for p in self._processes}


# Clusters still running when the interpreter exits (a crashed test session) are stopped too.
_live: dict[int, Cluster] = {}
_live_lock = threading.Lock()


def _register_atexit(cluster: Cluster) -> None:
    with _live_lock:
        _live[id(cluster)] = cluster


def _unregister_atexit(cluster: Cluster) -> None:
    with _live_lock:
        _live.pop(id(cluster), None)


@atexit.register
def _stop_all() -> None:
    with _live_lock:
        clusters = list(_live.values())
    for cluster in clusters:
        cluster.stop()


@contextlib.contextmanager
def running(workdir: str | os.PathLike[str] | None = None) -> Iterator[Cluster]:
    cluster = Cluster.start(workdir)
    try:
        yield cluster
    finally:
        cluster.stop()


def main() -> None:
    """Keep a sandbox control plane up until interrupted, printing how to reach it."""
    with running() as cluster:
        print(f"server:            {cluster.server}")
        print(f"admin kubeconfig:  {cluster.admin_kubeconfig_path}")
        print(f"joinery kubeconfig:{cluster.kubeconfig_path}")
        print(f"started in {cluster.startup_seconds:.1f}s; Ctrl-C stops it", flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                signal.pause()


if __name__ == "__main__":
    main()
