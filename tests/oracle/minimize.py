"""Shrink a failing generated input to the fewest objects that still fail the same way:
``python -m tests.oracle.minimize plan|round SEED [--pending SHARE]`` prints the minimal
manifests (YAML) and the verdict. A tool for writing violations up, not a test."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import yaml

from tests.oracle import joinery_bridge
from tests.oracle.generate import build
from tests.oracle.judge import judge_plan, judge_round

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
Objects = list[dict[str, Any]]


def verdict(mode: str, objects: Objects, catalog: Mapping[str, Any]) -> str | None:
    try:
        if mode == "plan":
            return judge_plan(objects, catalog, joinery_bridge.plan(objects, catalog))
        managed = [
            o["metadata"]["name"]
            for o in objects
            if o.get("kind") == "Node"
            and (o["metadata"].get("labels") or {}).get("karpenter.sh/nodepool")
        ]
        out = joinery_bridge.disruption(objects, catalog, NOW)
        return judge_round(objects, catalog, managed, out)
    except Exception as exc:  # a removal that breaks the input is not a repro
        return f"error: {type(exc).__name__}"


def _rule(why: str) -> str:
    return why.split(": ")[1] if ": " in why else why


def shrink(objects: Objects, still_fails: Callable[[Objects], bool]) -> Objects:
    """Remove chunks of objects (halving their size down to one object) while the failure
    persists, until no single removal keeps it."""
    current = list(objects)
    chunk = max(1, len(current) // 2)
    while True:
        changed = False
        i = len(current)
        while i > 0:
            lo = max(0, i - chunk)
            trial = current[:lo] + current[i:]
            if still_fails(trial):
                current = trial
                changed = True
            i = lo
        if chunk == 1 and not changed:
            return current
        chunk = max(1, chunk // 2) if not changed or chunk > 1 else 1


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["plan", "round"])
    ap.add_argument("seed", type=int)
    ap.add_argument("--pending", type=float, default=None)
    args = ap.parse_args(argv)
    share = args.pending if args.pending is not None else (0.4 if args.mode == "plan" else 0.0)
    sc = build(args.seed, pending_share=share)
    first = verdict(args.mode, sc.objects, sc.catalog)
    if first is None or first.startswith("error"):
        print(f"seed {args.seed}: no violation ({first})")
        return 1
    rule = _rule(first)

    def fails(objs: Objects) -> bool:
        why = verdict(args.mode, objs, sc.catalog)
        return why is not None and not why.startswith("error") and _rule(why) == rule

    small = shrink(sc.objects, fails)
    yaml.safe_dump_all(small, sys.stdout, sort_keys=False)
    print("--- catalog\n" + yaml.safe_dump(sc.catalog, sort_keys=False))
    print(f"# verdict: {verdict(args.mode, small, sc.catalog)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
