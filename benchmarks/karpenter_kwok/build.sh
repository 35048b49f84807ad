#!/usr/bin/env bash
# Build Karpenter's kwok cloud provider (sigs.k8s.io/karpenter/kwok, named as a `tool` in this
# folder's go.mod) at the version pinned there, cached in ~/.cache/joinery/karpenter-kwok-<v>
# (see ../karpenter_build.sh). Prints the binary's path; `python -m benchmarks.karpenter_kwok`
# also reads Karpenter's CRDs from the Go module cache this fills.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../karpenter_build.sh" "$HERE" karpenter-kwok sigs.k8s.io/karpenter/kwok
