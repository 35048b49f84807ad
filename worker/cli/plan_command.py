"""``joinery plan``: what Joinery would launch for these manifests, without a cluster."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from worker.cli.plan_json import dumps_indented
from worker.plan_inputs import (
    catalog_file_cache,
    manifest_sections,
    manifest_yaml,
    plan_catalogs,
    refused,
)
from worker.usage import UsageError, one_line


def register(sub: Any) -> None:
    p = sub.add_parser("plan", help="what-if provisioning: which nodes would be launched")
    p.add_argument("-f", "--filename", action="append", help="manifests (YAML)")
    p.add_argument(
        "--kubeconfig", help="read the inputs from this live cluster instead (read-only)"
    )
    p.add_argument(
        "--catalog",
        required=True,
        action="append",
        metavar="[NODECLASS=]FILE",
        help="instance-type catalog file (YAML or JSON) for every pool; NODECLASS=FILE gives "
        "the EC2NodeClass of that name its own (as `joinery catalog --nodeclass` writes it)",
    )
    p.add_argument("-o", "--output", choices=("json", "yaml", "table"), default="json")
    p.add_argument(
        "--disruption",
        action="store_true",
        help="also say what one disruption round would do now, and why not more",
    )
    p.add_argument("--now", help="with --disruption: the RFC 3339 time to evaluate at")
    p.set_defaults(func=run, own_process=False)


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes() if path != "-" else sys.stdin.buffer.read()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from None


def _decode(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _read_yaml(path: str) -> Iterator[tuple[int, Any]]:
    """The documents of a YAML (or JSON) file of manifests, numbered from 1. Manifests repeat
    themselves (the Pods of one Deployment), so each distinct piece is parsed once."""
    return _documents(path, _decode(path, _read_bytes(path)), manifest_sections.load_all)


def _documents(
    path: str, text: str, load_all: Callable[[str], Iterator[Any]] = manifest_yaml.load_all
) -> Iterator[tuple[int, Any]]:
    """The documents of ``text`` (the file ``path``), numbered from 1."""
    if text.lstrip()[:1] in ("{", "["):
        # JSON is YAML too, but the json module reads it far faster; anything it rejects
        # falls through to the YAML parser, which gives the usual error.
        try:
            yield 1, json.loads(text, parse_constant=_no_constant)
            return
        except (ValueError, RecursionError):
            pass
    try:
        yield from enumerate(load_all(text), 1)
    except RecursionError:
        raise UsageError(f"{path}: malformed YAML: nested too deeply") from None
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
            for field in ("kind", "apiVersion"):
                if not isinstance(body.get(field, ""), str):
                    raise UsageError(f"{path} document {i}: {field}: expected a string")
            docs.append(Document(body, f"{path} document {i}"))
    return docs


def load_instance_types(path: str) -> list[InstanceType]:
    data = _read_bytes(path)
    docs = catalog_file_cache.load(data)
    if docs is None:
        docs = [b for _, b in _documents(path, _decode(path, data)) if b is not None]
        catalog_file_cache.store(data, docs)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise UsageError(f"{path}: expected one catalog document with instanceTypes")
    try:
        return load_catalog(docs[0])
    except ValidationError as exc:
        raise UsageError(f"{path}: {field_error(exc)}") from None
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _inputs(args: argparse.Namespace) -> list[Document]:
    """The manifests from ``-f`` files, or read from a live cluster with ``--kubeconfig``."""
    if bool(args.filename) == bool(args.kubeconfig):
        raise UsageError("give the inputs with -f FILE or --kubeconfig PATH (one of them)")
    if args.filename:
        return load_documents(args.filename)
    from worker.plan_inputs.live_inputs import read_live

    return read_live(args.kubeconfig, disruption=args.disruption)


@contextmanager
def collection_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic garbage collection while the inputs are read; with ``freeze``, what was read
    is then set aside.

    Reading builds millions of long-lived objects (dicts, lists, strings) and no garbage
    cycles; CPython's collector is triggered by allocations and rescans everything alive each
    time, which made YAML reading three to five times slower than the parsing itself. When the
    command owns its process, the inputs are then moved out of the collector's view
    (``gc.freeze``) so the solve's own collections do not rescan them either (~8% of a
    Deployments-1,000 round). An in-process caller (the fuzz tier runs thousands of commands
    in one interpreter) is not frozen: frozen objects come back into the oldest generation,
    which is collected rarely, so garbage piled up there (2.4x slower, 2.8x the memory).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()


def _catalogs(
    files: plan_catalogs.CatalogFiles,
    instance_types: list[InstanceType],
    documents: list[Document],
    disruption: bool = False,
) -> tuple[list[Document], list[Document], dict[str, list[InstanceType]]]:
    """The documents for the planner, the EC2NodeClasses among the inputs, and each pool's
    own catalog from them (``worker.plan_inputs.plan_catalogs``); the objects Joinery
    refuses are handled as the worker does, said on stderr (``worker.plan_inputs.refused``)."""
    documents, classes = plan_catalogs.split_nodeclasses(documents)
    refusals = refused.apply(documents, classes)
    for w in refusals.warnings:
        print(one_line(f"warning: {w}"), file=sys.stderr)
    documents = refusals.documents
    per_class = {}
    for name, path in files.per_class.items():
        if name not in classes:
            raise UsageError(f"--catalog {name}={path}: no EC2NodeClass {name} in the inputs")
        per_class[name] = load_instance_types(path)
    own = plan_catalogs.pool_catalogs(documents, classes, instance_types, per_class)
    if not disruption:
        # As the worker's provisioning: a pool of a refused EC2NodeClass launches nothing.
        # The worker's disruption round still prices such a pool's nodes from a catalog
        # (they are not taken for drifted for want of one); its launches are refused.
        own.update({pool: [] for pool in refusals.no_launch})
    return documents, list(classes.values()), own


def run(args: argparse.Namespace) -> int:
    if args.now is not None and not args.disruption:
        raise UsageError("--now is only used with --disruption")
    files = plan_catalogs.catalog_files(args.catalog, os.path.isfile)
    with collection_paused(freeze=args.own_process):
        instance_types = load_instance_types(files.default)
        documents, classes, own = _catalogs(files, instance_types, _inputs(args), args.disruption)
    if args.disruption:
        from worker.cli.disruption_plan import run_disruption

        # The round reads the EC2NodeClasses too: their status and spec drift nodes.
        return run_disruption(args, [*documents, *classes], instance_types, own)
    try:
        with collection_paused(freeze=args.own_process):
            parsed = build_problem(documents, instance_types, own)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    for w in parsed.warnings:
        print(one_line(f"warning: {w}"), file=sys.stderr)
    solver = Solver(parsed.problem)
    plan = solver.solve()
    doc = plan_to_dict(plan, lower_bound(solver, plan.scheduled))
    if args.output == "json":
        print(dumps_indented(doc))
    elif args.output == "yaml":
        print(yaml.safe_dump(doc, sort_keys=False), end="")
    else:
        print(plan_to_table(doc))
    return 0
