"""One line naming the field a pydantic validation failed on.

Bad input is reported the same way everywhere (``joinery plan``'s stderr, a NodePool's
``ValidationSucceeded`` condition, the planner's skipped list): ``spec.a.b[0].key: why``.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

# A validator that checks a list names the element itself: "[2].key: why".
_INNER_PATH = re.compile(r"^((?:\[\d+\])(?:\.?[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*): (.*)$", re.S)


def field_error(exc: ValidationError) -> str:
    """``path.to.field[2]: message`` for the first error (the one a user fixes first)."""
    err = exc.errors()[0]
    loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"])
    loc = loc.replace(".[", "[")
    msg = str(err["msg"]).removeprefix("Value error, ")
    inner = _INNER_PATH.match(msg)
    if inner and loc:
        return f"{loc}{inner.group(1)}: {inner.group(2)}"
    return f"{loc}: {msg}" if loc else msg
