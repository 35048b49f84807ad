"""Go-style durations (``720h``, ``1h30m``, ``30s``) as Karpenter's manifests write them."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
NEVER = "Never"


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string; raises ValueError for anything else."""
    s = text.strip()
    if s in ("0", ""):
        if s == "":
            raise ValueError("empty duration")
        return 0.0
    pos = 0
    total = 0.0
    for m in _PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise ValueError(f"{text!r} is not a duration like 720h, 1h30m or 30s")
    return total


def parse_optional_duration(text: str) -> float | None:
    """Seconds, or None for ``Never``."""
    return None if text == NEVER else parse_duration(text)
