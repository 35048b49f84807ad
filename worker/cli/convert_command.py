"""``joinery convert``: Karpenter's older manifests (v1alpha5, v1alpha1, v1beta1) as v1.

The mapping itself lives in ``models.convert`` and touches no file; this command reads the
YAML, writes the result (stdout or ``-o FILE``) and prints one stderr line per field that
has no v1 equivalent, so nothing an old manifest said disappears without a word.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from models.convert import ConversionError, convert_documents
from worker.usage import UsageError, one_line


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "convert",
        help="convert Provisioners, AWSNodeTemplates and v1beta1 objects to v1 manifests",
        description=(
            "Convert karpenter.sh/v1alpha5 Provisioners, karpenter.k8s.aws/v1alpha1 "
            "AWSNodeTemplates and v1beta1 NodePools / EC2NodeClasses to v1 NodePools and "
            "EC2NodeClasses, with Karpenter's migration mapping. Other documents pass through "
            "unchanged. Each field with no v1 equivalent is named on stderr."
        ),
    )
    p.add_argument(
        "-f",
        "--filename",
        action="append",
        required=True,
        metavar="OLD.yaml",
        help="multi-document YAML to convert ('-' reads stdin); repeatable",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="NEW.yaml",
        help="write the v1 manifests here instead of stdout",
    )
    p.add_argument(
        "--role",
        help="node IAM role for node classes whose old object named no role or instance "
        "profile (default: the $KARPENTER_NODE_ROLE placeholder, for envsubst)",
    )
    p.set_defaults(func=run)


def _read(path: str) -> list[Any]:
    try:
        if path == "-":
            return list(yaml.safe_load_all(sys.stdin))
        with open(path, encoding="utf-8") as f:
            return list(yaml.safe_load_all(f))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not YAML: {str(exc).splitlines()[0]}") from None


def render(documents: list[dict[str, Any]]) -> str:
    """Multi-document YAML in the order given, keys in the order written (as kubectl shows)."""
    return "".join(
        "---\n" + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
        for doc in documents
    )


def run(args: argparse.Namespace) -> int:
    # All files at once: a NodePool's kubelet block moves to an EC2NodeClass that may sit in
    # another file.
    docs: list[Any] = []
    for path in args.filename:
        docs.extend(_read(path))
    try:
        result = convert_documents(docs, role=args.role)
    except ConversionError as exc:
        raise UsageError(str(exc)) from None
    for note in result.notes:
        print(one_line(f"joinery convert: {note}"), file=sys.stderr)
    text = render(result.documents)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise UsageError(f"{args.output}: {exc}") from None
    else:
        sys.stdout.write(text)
    return 0
