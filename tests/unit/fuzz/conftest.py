"""The fuzz tests mutate the scheduling and disruption scenarios' valid manifests."""

import sys
from pathlib import Path

_UNIT = Path(__file__).resolve().parent.parent
for _sub in ("scheduling", "disruption"):
    if str(_UNIT / _sub) not in sys.path:
        sys.path.insert(0, str(_UNIT / _sub))
