"""``joinery plan``: what Joinery would launch for these manifests, without a cluster."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from models.catalog import load_catalog
from models.errors import field_error
from models.instancetype import InstanceType
from scheduling.inputs import Document, InputError, build_problem
from scheduling.lowerbound import lower_bound
from scheduling.report import plan_to_dict, plan_to_table
from scheduling.solver import Solver
from worker.cli import UsageError


def register(sub: Any) -> None:
    p = sub.add_parser("plan", help="what-if provisioning: which nodes would be launched")
    p.add_argument("-f", "--filename", action="append", required=True, help="manifests (YAML)")
    p.add_argument("--catalog", required=True, help="instance-type catalog file (YAML or JSON)")
    p.add_argument("-o", "--output", choices=("json", "yaml", "table"), default="json")
    p.set_defaults(func=run)


def _read_yaml(path: str) -> Iterator[tuple[int, Any]]:
    try:
        text = Path(path).read_text() if path != "-" else sys.stdin.read()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from None
    try:
        yield from enumerate(yaml.safe_load_all(text), 1)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise UsageError(f"{path}{where}: malformed YAML: {problem}") from None


def load_documents(paths: list[str]) -> list[Document]:
    docs = []
    for path in paths:
        for i, body in _read_yaml(path):
            if body is None:
                continue
            if not isinstance(body, dict):
                raise UsageError(f"{path} document {i}: expected a mapping (a Kubernetes object)")
            docs.append(Document(body, f"{path} document {i}"))
    return docs


def load_instance_types(path: str) -> list[InstanceType]:
    docs = [b for _, b in _read_yaml(path) if b is not None]
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise UsageError(f"{path}: expected one catalog document with instanceTypes")
    try:
        return load_catalog(docs[0])
    except ValidationError as exc:
        raise UsageError(f"{path}: {field_error(exc)}") from None
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    instance_types = load_instance_types(args.catalog)
    documents = load_documents(args.filename)
    try:
        parsed = build_problem(documents, instance_types)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    for w in parsed.warnings:
        print(f"warning: {w}", file=sys.stderr)
    solver = Solver(parsed.problem)
    plan = solver.solve()
    doc = plan_to_dict(plan, lower_bound(solver, plan.scheduled))
    if args.output == "json":
        print(json.dumps(doc, indent=2))
    elif args.output == "yaml":
        print(yaml.safe_dump(doc, sort_keys=False), end="")
    else:
        print(plan_to_table(doc))
    return 0
