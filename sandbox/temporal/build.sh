#!/usr/bin/env bash
# Build the production-shaped Temporal server that the production test tier and
# `joinery dev --temporal server` run: `temporal-server` (go.temporal.io/server/cmd/server) and
# `temporal-sql-tool` (cmd/tools/sql, which loads the PostgreSQL schema), from the Go module at
# the version pinned in this folder's `version` file, with this machine's Go toolchain; and PostgreSQL from Debian
# packages when it is not installed yet.
#
# The binaries are cached outside the repository, in $JOINERY_TEMPORAL_CACHE (default
# ~/.cache/joinery/temporal-<version>), like the control plane (sandbox/k8s/build.sh). The
# schema files ship inside the module; they are read from the Go module cache at run time
# (sandbox/temporal_server.py asks `go env GOMODCACHE`), and a copy is kept beside the binaries
# so the cache folder alone is enough. Idempotent: exits at once when everything is present.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TEMPORAL_VERSION="$(tr -d '[:space:]' < "$HERE/version")"
CACHE_ROOT="${JOINERY_TEMPORAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery}"
DEST="$CACHE_ROOT/temporal-$TEMPORAL_VERSION"
MODULE=go.temporal.io/server

log() { printf '[temporal-bin] %s\n' "$*" >&2; }

# PostgreSQL: Debian's server package. Installed as root (CI and fresh machines run as root);
# elsewhere say what is missing instead of calling sudo.
pg_bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [[ -z "$(pg_bin_dir)" || ! -x "$(pg_bin_dir)/initdb" ]]; then
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null; then
    log "installing PostgreSQL from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    # The package starts a cluster on port 5432; the tests run their own, so stop it.
    if command -v pg_ctlcluster >/dev/null; then
      for c in /etc/postgresql/*/main; do
        [[ -d "$c" ]] || continue
        v="$(basename "$(dirname "$c")")"
        pg_ctlcluster "$v" main stop >/dev/null 2>&1 || true
      done
    fi
  else
    log "PostgreSQL is not installed: run 'apt-get install postgresql' as root"
    exit 1
  fi
fi
log "PostgreSQL: $(pg_bin_dir)"

if [[ -x "$DEST/temporal-server" && -x "$DEST/temporal-sql-tool" && -d "$DEST/schema/postgresql" ]]; then
  log "ready: $DEST"
  exit 0
fi

GO="$(command -v go || true)"
[[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
if [[ -z "$GO" ]]; then
  log "no Go toolchain found"
  exit 1
fi

mkdir -p "$DEST"
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
log "building Temporal server $TEMPORAL_VERSION into $DEST with $("$GO" version)"
log "the first build takes several minutes on a small machine; later runs reuse the cache"
START=$SECONDS
# `go install pkg@version` builds the module exactly as its own go.mod/go.sum pin it.
for pair in "temporal-server:$MODULE/cmd/server" "temporal-sql-tool:$MODULE/cmd/tools/sql"; do
  name="${pair%%:*}"; pkg="${pair#*:}"
  [[ -x "$DEST/$name" ]] && continue
  t0=$SECONDS
  log "$name: go install $pkg@$TEMPORAL_VERSION"
  GOBIN="$WORK/bin" "$GO" install -trimpath -ldflags="-s -w" "$pkg@$TEMPORAL_VERSION"
  mv -f "$WORK/bin/$(basename "$pkg")" "$DEST/.$name.tmp"
  mv -f "$DEST/.$name.tmp" "$DEST/$name"
  log "$name: done in $((SECONDS - t0))s"
done
# The schema (SQL files) ships in the module; copy it next to the binaries.
MODDIR="$("$GO" env GOMODCACHE)/$MODULE@$TEMPORAL_VERSION"
rm -rf "$DEST/.schema.tmp"
cp -r "$MODDIR/schema" "$DEST/.schema.tmp"
chmod -R u+w "$DEST/.schema.tmp"
rm -rf "$DEST/schema"
mv "$DEST/.schema.tmp" "$DEST/schema"
log "ready in $((SECONDS - START))s: $DEST"
