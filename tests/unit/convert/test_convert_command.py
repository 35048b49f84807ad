"""``joinery convert`` as a user runs it: files in, YAML out, notes and errors on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from worker.cli import main

OLD = """\
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: default}
spec:
  providerRef: {name: default}
  ttlSecondsAfterEmpty: 30
  kubeletConfiguration: {containerRuntime: dockerd}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: keep, namespace: default}
data: {a: b}
"""


def test_converts_to_a_file_and_names_each_dropped_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "old.yaml").write_text(OLD)
    code = main(["convert", "-f", str(tmp_path / "old.yaml"), "-o", str(tmp_path / "new.yaml")])
    out, err = capsys.readouterr()
    assert code == 0 and out == ""
    assert err.splitlines() == [
        "joinery convert: Provisioner default: spec.kubeletConfiguration.containerRuntime: "
        "only containerd remains; dropped"
    ]
    docs = list(yaml.safe_load_all((tmp_path / "new.yaml").read_text()))
    assert [(d["apiVersion"], d["kind"]) for d in docs] == [
        ("karpenter.sh/v1", "NodePool"),
        ("v1", "ConfigMap"),
    ]
    assert docs[1] == yaml.safe_load(OLD.split("---\n")[1])


def test_writes_stdout_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "old.yaml").write_text(OLD)
    assert main(["convert", "-f", str(tmp_path / "old.yaml")]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs[0]["spec"]["disruption"]["consolidateAfter"] == "30s"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [b", "not YAML"),
        (
            OLD.replace("ttlSecondsAfterEmpty: 30", "ttlSecondsAfterEmpty: soon"),
            "Provisioner default: spec.ttlSecondsAfterEmpty",
        ),
        ("- just\n- a list\n", "document 1: expected a mapping"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    (tmp_path / "old.yaml").write_text(text)
    assert main(["convert", "-f", str(tmp_path / "old.yaml")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1 and expected in err, err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", "-f", str(tmp_path / "absent.yaml")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
