#!/usr/bin/env bash
# Build one Go program against the sigs.k8s.io/karpenter version pinned in a folder's
# go.mod/go.sum, with this machine's Go toolchain; print the binary's path on stdout.
#   karpenter_build.sh <folder> <name> <package>
# (karpenter_kwok/build.sh and karpenter_solve/build.sh call it with their own.)
#
# The binary is cached outside the repository, in $JOINERY_KARPENTER_CACHE (default
# ~/.cache/joinery/<name>-<version>), so every clone on the machine reuses one build; it is
# rebuilt when the folder's *.go, go.mod or go.sum change (their hash is in the file name).
# Nothing of Karpenter's source is committed: modules come from the Go module proxy.
set -euo pipefail

HERE="$(cd "$1" && pwd)"
NAME="$2"
PACKAGE="$3"
VERSION="$(awk '$1 == "sigs.k8s.io/karpenter" {print $2; exit}' "$HERE/go.mod")"
CACHE_ROOT="${JOINERY_KARPENTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery}"
DEST="$CACHE_ROOT/$NAME-$VERSION"
shopt -s nullglob
SOURCES=("$HERE"/*.go "$HERE/go.mod" "$HERE/go.sum")
STAMP="$(cat "${SOURCES[@]}" | sha256sum | cut -c1-12)"
BIN="$DEST/$NAME-$STAMP"

log() { printf '[%s] %s\n' "$NAME" "$*" >&2; }

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
log "building $PACKAGE against sigs.k8s.io/karpenter $VERSION with $("$GO" version) (minutes the first time)"
START=$SECONDS
# build next to the target and rename, so an interrupted build never leaves a half binary
"$GO" build -trimpath -ldflags="-s -w -X main.karpenterVersion=$VERSION" \
  -o "$DEST/.tmp-$STAMP" "$PACKAGE"
mv -f "$DEST/.tmp-$STAMP" "$BIN"
# builds of earlier pins or sources are of no further use
find "$DEST" -mindepth 1 -maxdepth 1 -name "$NAME-*" ! -name "${BIN##*/}" -delete
log "built in $((SECONDS - START))s: $BIN"
echo "$BIN"
