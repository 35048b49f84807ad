"""``joinery worker``'s flags become Settings; a bad value is a one-line usage error (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from worker.cli import main, worker_command
from worker.cli.command import build_parser
from worker.running.settings import Settings
from worker.usage import UsageError

JOINERY = [sys.executable, "-m", "worker.cli"]
ROOT = Path(__file__).resolve().parents[3]


def _settings(*argv: str) -> Settings:
    args = build_parser(["worker"]).parse_args(["worker", *argv])
    return worker_command.settings_from(args)


def test_the_validation_delay_is_karpenters_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOINERY_DISRUPTION_VALIDATION_DELAY", raising=False)
    assert _settings().disruption_validation_delay == 15.0
    assert _settings("--disruption-validation-delay", "2.5").disruption_validation_delay == 2.5


def test_a_validation_delay_out_of_range_is_a_usage_error() -> None:
    for value in ("-1", "nan", "7200"):
        with pytest.raises(UsageError, match="--disruption-validation-delay"):
            _settings("--disruption-validation-delay", value)
    # the command says so in one line and exits 2 before it connects to anything
    assert main(["worker", "--disruption-validation-delay", "-1"]) == 2


def test_a_garbage_validation_delay_exits_2_in_one_line() -> None:
    done = subprocess.run(
        [*JOINERY, "worker", "--disruption-validation-delay", "soon"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--disruption-validation-delay" in done.stderr
    assert "Traceback" not in done.stderr


def test_workflow_code_runs_unsandboxed_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from temporalio.worker import UnsandboxedWorkflowRunner
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

    from worker.running import tuning

    monkeypatch.delenv("JOINERY_WORKFLOW_SANDBOX", raising=False)
    assert _settings().workflow_sandbox is False
    assert _settings("--workflow-sandbox").workflow_sandbox is True
    monkeypatch.setenv("JOINERY_WORKFLOW_SANDBOX", "on")
    assert _settings().workflow_sandbox is True

    assert isinstance(tuning.worker_options()["workflow_runner"], UnsandboxedWorkflowRunner)
    sandboxed = tuning.worker_options(sandboxed=True)["workflow_runner"]
    assert isinstance(sandboxed, SandboxedWorkflowRunner)
