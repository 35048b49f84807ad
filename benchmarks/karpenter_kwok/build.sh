#!/usr/bin/env bash
# Build Karpenter's kwok cloud provider (the main package sigs.k8s.io/karpenter/kwok, named as a
# `tool` in this folder's go.mod) at the sigs.k8s.io/karpenter version pinned there, with this
# machine's Go toolchain. Prints the binary's path on stdout.
#
# The binary is cached outside the repository, in $JOINERY_KARPENTER_CACHE (default
# ~/.cache/joinery/karpenter-kwok-<version>), so every clone on the machine reuses one build;
# it is rebuilt when go.mod or go.sum change (their hash is part of the file name). Nothing of
# Karpenter's source is committed: the module comes from the Go module proxy into the module
# cache, where `python -m benchmarks.karpenter_kwok` also reads Karpenter's CRDs.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION="$(awk '$1 == "sigs.k8s.io/karpenter" {print $2; exit}' "$HERE/go.mod")"
CACHE_ROOT="${JOINERY_KARPENTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery}"
DEST="$CACHE_ROOT/karpenter-kwok-$VERSION"
STAMP="$(cat "$HERE/go.mod" "$HERE/go.sum" | sha256sum | cut -c1-12)"
BIN="$DEST/karpenter-kwok-$STAMP"

log() { printf '[karpenter-kwok] %s\n' "$*" >&2; }

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
log "building sigs.k8s.io/karpenter/kwok $VERSION with $("$GO" version) (minutes the first time)"
START=$SECONDS
# build next to the target and rename, so an interrupted build never leaves a half binary
"$GO" build -trimpath -ldflags="-s -w" -o "$DEST/.tmp-$STAMP" sigs.k8s.io/karpenter/kwok
mv -f "$DEST/.tmp-$STAMP" "$BIN"
# builds of earlier pins are of no further use
find "$DEST" -mindepth 1 -maxdepth 1 -name 'karpenter-kwok-*' ! -name "${BIN##*/}" -delete
log "built in $((SECONDS - START))s: $BIN"
echo "$BIN"
