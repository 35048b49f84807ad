#!/usr/bin/env bash
# Build karpenter-solve (main.go here: times Karpenter's scheduler Solve on one problem)
# against the sigs.k8s.io/karpenter version pinned in this folder's go.mod, cached in
# ~/.cache/joinery/karpenter-solve-<v> (see ../karpenter_build.sh). Prints the binary's path.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../karpenter_build.sh" "$HERE" karpenter-solve .
