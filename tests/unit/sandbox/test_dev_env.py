"""The environment file ``joinery dev`` leaves for the operator commands of other terminals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sandbox import dev_env


def test_round_trip_below_the_environment(tmp_path: Path) -> None:
    where = tmp_path / "dev.env"
    dev_env.write({"JOINERY_CLUSTER": "joinery-dev", "KUBECONFIG": "/a b/c's"}, where)
    assert dev_env.read(where) == {"JOINERY_CLUSTER": "joinery-dev", "KUBECONFIG": "/a b/c's"}
    environ = {"JOINERY_CLUSTER": "mine"}
    assert dev_env.export_defaults(environ, where) == ["KUBECONFIG"]
    assert environ == {"JOINERY_CLUSTER": "mine", "KUBECONFIG": "/a b/c's"}
    # a shell can source it too
    shell = subprocess.run(
        ["sh", "-c", f'. "{where}"; printf %s "$KUBECONFIG"'], capture_output=True, text=True
    )
    assert shell.stdout == "/a b/c's"


def test_a_file_whose_stack_is_gone_is_ignored_and_only_its_writer_removes_it(
    tmp_path: Path,
) -> None:
    where = tmp_path / "dev.env"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dev_env.write({"JOINERY_CLUSTER": "old"}, where, pid=int(gone.stdout))
    assert dev_env.read(where) == {}
    dev_env.remove(where)  # not this process's file: it stays
    assert where.exists()
    dev_env.write({"JOINERY_CLUSTER": "new"}, where)
    dev_env.remove(where)
    assert not where.exists()
    assert dev_env.read(where) == {}
