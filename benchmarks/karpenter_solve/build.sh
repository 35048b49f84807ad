#!/usr/bin/env bash
# Build karpenter-solve (main.go in this folder: times Karpenter's scheduler Solve on one
# problem) against the sigs.k8s.io/karpenter version pinned in this folder's go.mod/go.sum,
# with this machine's Go toolchain. Prints the binary's path on stdout.
#
# The binary is cached outside the repository, in $JOINERY_KARPENTER_CACHE (default
# ~/.cache/joinery/karpenter-solve-<version>), so every clone on the machine reuses one build;
# it is rebuilt when main.go, go.mod or go.sum change (their hash is part of the file name).
# Idempotent: exits at once when the binary is present.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION="$(awk '$1 == "sigs.k8s.io/karpenter" {print $2; exit}' "$HERE/go.mod")"
CACHE_ROOT="${JOINERY_KARPENTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery}"
DEST="$CACHE_ROOT/karpenter-solve-$VERSION"
STAMP="$(cat "$HERE/main.go" "$HERE/go.mod" "$HERE/go.sum" | sha256sum | cut -c1-12)"
BIN="$DEST/karpenter-solve-$STAMP"

log() { printf '[karpenter-solve] %s\n' "$*" >&2; }

if [[ -x "$BIN" ]]; then
  log "ready: $BIN"
  echo "$BIN"
  exit 0
fi

GO="$(command -v go || true)"
[[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
if [[ -z "$GO" ]]; then
  log "no Go toolchain found (need go >= $(awk '$1 == "go" {print $2; exit}' "$HERE/go.mod"))"
  exit 1
fi

mkdir -p "$DEST"
cd "$HERE"
export CGO_ENABLED=0
log "building against sigs.k8s.io/karpenter $VERSION with $("$GO" version) (a few minutes the first time)"
START=$SECONDS
# build next to the target and rename, so an interrupted build never leaves a half binary
"$GO" build -trimpath -ldflags="-s -w -X main.karpenterVersion=$VERSION" -o "$DEST/.tmp-$STAMP" .
mv -f "$DEST/.tmp-$STAMP" "$BIN"
# builds of earlier versions of main.go are of no further use
find "$DEST" -mindepth 1 -maxdepth 1 -name 'karpenter-solve-*' ! -name "${BIN##*/}" -delete
log "built in $((SECONDS - START))s: $BIN"
echo "$BIN"
