"""The environment file ``joinery dev`` leaves for the operator commands of other terminals.

After ``make dev`` a new user types ``joinery status`` or ``joinery explain NODE`` in another
terminal; without this file those commands know neither the dev cluster's name, nor its
kubeconfig, Temporal address, region or EC2 emulator. The interactive dev stack writes them
here (``KEY=value`` lines a shell can also source) and removes the file when it stops; the CLI
reads it for its operator commands, below the environment and the flags. A file whose stack is
gone (killed before it could clean up) is ignored: it names the stack's process id.

Where: ``$JOINERY_DEV_ENV``, else ``~/.cache/joinery/dev.env``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, MutableMapping
from pathlib import Path

PATH_VARIABLE = "JOINERY_DEV_ENV"
PID = "JOINERY_DEV_PID"  # the dev stack's process; the file is stale once it is gone


def path() -> Path:
    given = os.environ.get(PATH_VARIABLE)
    return Path(given) if given else Path.home() / ".cache" / "joinery" / "dev.env"


def write(env: Mapping[str, str], where: Path | None = None, pid: int | None = None) -> Path:
    target = where or path()
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{k}={shlex.quote(v)}" for k, v in sorted({**env, PID: str(pid or os.getpid())}.items())
    ]
    temporary = target.with_suffix(".tmp")
    temporary.write_text(
        "# written by joinery dev; removed when it stops\n" + "\n".join(lines) + "\n"
    )
    temporary.replace(target)
    return target


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def read(where: Path | None = None) -> dict[str, str]:
    """The file's variables, or nothing when there is no file or its stack is gone."""
    source = where or path()
    try:
        text = source.read_text()
    except OSError:
        return {}
    env: dict[str, str] = {}
    for line in text.splitlines():
        if "=" not in line or line.lstrip().startswith("#"):
            continue
        key, _, value = line.partition("=")
        words = shlex.split(value)
        env[key.strip()] = words[0] if words else ""
    if not _alive(env.pop(PID, "")):
        return {}
    return env


def remove(where: Path | None = None, pid: int | None = None) -> None:
    """Remove the file if this process (or ``pid``) wrote it: another stack's stays."""
    target = where or path()
    try:
        mine = f"{PID}={pid or os.getpid()}" in target.read_text().splitlines()
    except OSError:
        return
    if mine:
        target.unlink(missing_ok=True)


def export_defaults(environ: MutableMapping[str, str], where: Path | None = None) -> list[str]:
    """Put the file's variables into ``environ`` where it has none of its own (flags, read
    from the command line, still win); returns the names set."""
    file_env = read(where)
    added = [k for k in file_env if k not in environ]
    for key in added:
        environ[key] = file_env[key]
    return added
