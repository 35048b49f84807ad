"""``joinery dev`` as a user runs it: a subprocess that serves until Ctrl-C.

Without the worker (``--no-worker``), so these hold whatever state the workflows are in: the
stack comes up on loopback with the search attributes registered, the printed kubeconfig
works, the default EC2NodeClass and NodePool are applied, Ctrl-C stops every process the
command started, and a restart with the same state directory keeps Temporal's history.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from activities.kubernetes.client import from_kubeconfig
from activities.kubernetes.resources import EC2NODECLASS, NODEPOOL
from sandbox import dev_env
from sandbox.dev import SEARCH_ATTRIBUTES, joinery_command, tool

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(240)


def joinery(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        joinery_command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--boot-delay", "-1"], "--boot-delay must be >= 0"),
        (["--scenario", "smoke", "--no-worker"], "--scenario needs the worker"),
        (["--temporal-port", "70000"], "--temporal-port must be a port number"),
        (["--region", "us east 1"], "is not a region name"),
        (["--provider", "azure", "--scenario", "efa"], "--scenario efa runs on aws only"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = joinery("dev", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_unknown_scenario_is_rejected() -> None:
    result = joinery("dev", "--scenario", "nope")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


class DevProcess:
    """A running ``joinery dev`` subprocess and what its banner said."""

    def __init__(self, state_dir: Path, *, worker: bool = False) -> None:
        # Never the user's own ~/.cache/joinery/dev.env: another terminal's CLI reads that.
        self.env_file = state_dir.parent / "dev.env"
        self.popen = subprocess.Popen(
            joinery_command(
                "dev",
                *(() if worker else ("--no-worker",)),
                "--temporal-port",
                "0",
                "--state-dir",
                str(state_dir),
                "--cluster-name",
                "e2e",
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO,
            env={**os.environ, dev_env.PATH_VARIABLE: str(self.env_file)},
        )
        self.output: list[str] = []
        deadline = time.monotonic() + 150
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.output.append(line)
            if "Ctrl-C stops everything" in line or time.monotonic() > deadline:
                break
        text = "".join(self.output)
        assert "Ctrl-C stops everything" in text, text
        ui = re.search(r"Temporal UI:\s+(http://127\.0\.0\.1:\d+)\S*", text)
        address = re.search(r"Temporal:\s+(127\.0\.0\.1:\d+)", text)
        kubeconfig = re.search(r"kubeconfig:\s+(\S+)", text)
        assert ui and address and kubeconfig, text
        self.ui = ui.group(1)
        self.address = address.group(1)
        self.kubeconfig = Path(kubeconfig.group(1))

    def children(self) -> set[int]:
        """Direct children of the dev process (each leads its own process group)."""
        found = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.popen.pid:
                found.add(int(entry.name))
        return found

    def interrupt(self) -> int:
        self.popen.send_signal(signal.SIGINT)  # what Ctrl-C delivers
        assert self.popen.stdout is not None
        rest = self.popen.stdout.read()
        self.output.append(rest)
        return self.popen.wait(timeout=60)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def dev(state_dir: Path) -> Iterator[DevProcess]:
    process = DevProcess(state_dir)
    yield process
    process.kill()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent has not reaped it yet).
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return False


async def _start_parked_workflow(address: str, workflow_id: str) -> None:
    client = await Client.connect(address)
    # No worker polls this queue: the workflow stays Running, as one would in a crash.
    await client.start_workflow("Parked", id=workflow_id, task_queue=f"nobody-{workflow_id}")


async def _status(address: str, workflow_id: str) -> WorkflowExecutionStatus | None:
    client = await Client.connect(address)
    return (await client.get_workflow_handle(workflow_id).describe()).status


def test_stack_serves_until_ctrl_c_and_keeps_history(dev: DevProcess, state_dir: Path) -> None:
    # The UI answers, the search attributes exist.
    with urllib.request.urlopen(dev.ui, timeout=10) as response:
        assert response.status == 200
    listed = subprocess.run(
        [str(tool("temporal")), "operator", "search-attribute", "list", "--address", dev.address],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for key in SEARCH_ATTRIBUTES:
        assert re.search(rf"\b{key}\s+Keyword\b", listed), listed

    # The printed kubeconfig works and the defaults are applied.
    assert dev.kubeconfig.is_relative_to(state_dir)
    kube = from_kubeconfig(dev.kubeconfig)
    try:
        pool = kube.custom.get_cluster_custom_object(
            NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, "default"
        )
        assert pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "default"
        nodeclass = kube.custom.get_cluster_custom_object(
            EC2NODECLASS.group, EC2NODECLASS.version, EC2NODECLASS.plural, "default"
        )
        selector = nodeclass["spec"]["subnetSelectorTerms"][0]["tags"]
        assert selector == {"karpenter.sh/discovery": "e2e"}
    finally:
        kube.close()

    workflow_id = f"parked-{uuid.uuid4().hex[:6]}"
    asyncio.run(_start_parked_workflow(dev.address, workflow_id))

    # Ctrl-C: exit cleanly, and every process it started is gone.
    children = dev.children()
    assert len(children) >= 6, children  # temporal, etcd, apiserver, scheduler, cm, kwok
    assert dev.interrupt() in (0, 130), "".join(dev.output)
    assert not [pid for pid in children if _alive(pid)]
    assert "stopped" in dev.output[-1] or "stopped" in "".join(dev.output[-3:])

    # A restart with the same state directory still has the workflow, now terminated (its
    # cluster and instances died with the previous run).
    again = DevProcess(state_dir)
    try:
        status = asyncio.run(_status(again.address, workflow_id))
        assert status == WorkflowExecutionStatus.TERMINATED
        assert "terminated 1 workflow" in "".join(again.output)
        assert again.interrupt() in (0, 130)
    finally:
        again.kill()


def operator_command(env_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command typed in another terminal: none of the stack's variables, no flags."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "JOINERY_", "TEMPORAL_", "KUBECONFIG"))
    }
    return subprocess.run(
        joinery_command(*args),
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
        check=False,
        env={**clean, "HOME": str(env_file.parent), dev_env.PATH_VARIABLE: str(env_file)},
    )


def test_operator_commands_work_in_another_terminal_with_no_flags(tmp_path: Path) -> None:
    dev = DevProcess(tmp_path / "state", worker=True)
    try:
        banner = "".join(dev.output)
        assert "joinery status" in banner and "joinery explain NODE" in banner
        assert str(dev.env_file) in banner
        assert "delete the empty NodeClaims" not in banner
        written = dev_env.read(dev.env_file)
        assert written["JOINERY_CLUSTER"] == "e2e" and written["TEMPORAL_ADDRESS"] == dev.address

        status = operator_command(dev.env_file, "status")
        assert status.returncode == 0, status.stderr
        assert "e2e" in status.stdout and "no workflow" not in status.stdout
        paused = operator_command(dev.env_file, "pause")
        assert paused.returncode == 0, paused.stderr
        resumed = operator_command(dev.env_file, "resume")
        assert resumed.returncode == 0, resumed.stderr
        # explain reaches the cluster, EC2's emulator and Temporal without --region, --cluster
        # or an endpoint: an unknown node is the only thing wrong with this question
        explain = operator_command(dev.env_file, "explain", "no-such-node")
        assert explain.returncode == 2
        assert "--region" not in explain.stderr and "no-such-node" in explain.stderr
        # a flag still wins over the file
        other = operator_command(dev.env_file, "status", "--cluster", "other")
        assert "e2e" not in other.stdout

        assert dev.interrupt() in (0, 130)
        output = "".join(dev.output)
        assert "Traceback" not in output, output[-3000:]
        assert "Fatal Python error" not in output, output[-3000:]
        assert not dev.env_file.exists()  # removed with the stack
    finally:
        dev.kill()
