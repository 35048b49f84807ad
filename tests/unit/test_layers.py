"""scripts/layers.py: the repository's imports point down, and an upward one is caught."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "layers.py"
FLOORS = ("models", "scheduling", "activities", "workflows", "sandbox", "worker")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def _tree(root: Path, files: dict[str, str]) -> Path:
    """Every floor as an empty package, plus the given modules."""
    for floor in FLOORS:
        (root / floor).mkdir(parents=True, exist_ok=True)
        (root / floor / "__init__.py").write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_repository_has_no_upward_import() -> None:
    done = _run()
    assert done.stderr == ""
    assert done.stdout == ""
    assert done.returncode == 0


def test_an_upward_import_is_one_line_naming_file_line_and_target(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "scheduling/solve.py": "from models import nodepool\n",
            "worker/app.py": "from workflows import calls\nimport sandbox.dev\n",
            "models/bad.py": '"""A model."""\n\n\ndef f() -> None:\n    from worker.app import x\n',
        },
    )
    done = _run("--root", str(root))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("models/bad.py:5: models imports worker.app ")


def test_a_cycle_is_caught_by_its_upward_half_type_checking_imports_too(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "workflows/flow.py": "from activities import deps\n",
            "activities/deps.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                "    from workflows.flow import Flow\n"
            ),
            "sandbox/dev.py": "from worker.cli import main\n",
            "sandbox/ec2/server.py": "from ..dev import run\nfrom . import seed\n",
        },
    )
    done = _run("--root", str(root))
    assert done.returncode == 1
    assert sorted(line.split(" (")[0] for line in done.stdout.splitlines()) == [
        "activities/deps.py:4: activities imports workflows.flow",
        "sandbox/dev.py:1: sandbox imports worker.cli",
    ]


def test_inside_worker_the_commands_sit_above_the_running_worker_and_the_plan_inputs(
    tmp_path: Path,
) -> None:
    root = _tree(
        tmp_path,
        {
            "worker/usage.py": "",
            "worker/cli/plan.py": (
                "from worker.plan_inputs import manifests\nfrom worker.running import app\n"
                "from worker.usage import UsageError\n"
            ),
            "worker/plan_inputs/manifests.py": "from worker.usage import UsageError\n",
            "worker/running/app.py": "from worker.cli.plan import main\n",
            "worker/running/health.py": "from worker import plan_inputs\nfrom . import app\n",
        },
    )
    done = _run("--root", str(root))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "worker/running/app.py:1: worker.running.app imports worker.cli.plan "
        "(worker.cli is above worker.running)",
        "worker/running/health.py:1: worker.running.health imports worker.plan_inputs "
        "(worker.plan_inputs and worker.running are side by side)",
    ]
