#!/usr/bin/env bash
# Build the deployment tools the tests use, from the Go modules pinned in this folder:
#
#   helm            helm.sh/helm/v3/cmd/helm              (deploy/tools/helm/go.mod)
#   docker-compose  github.com/docker/compose/v2/cmd      (deploy/tools/compose/go.mod)
#
# No Debian or PyPI package ships either (and this machine's docker client has no compose
# plugin), so they are built with the machine's Go toolchain through the module proxy and
# cached outside the repository in $JOINERY_TOOLS_CACHE (default
# ~/.cache/joinery/tools/<name>-<version>/), shared by every clone. Idempotent: a tool whose
# binary exists is not rebuilt. Prints the path of each requested binary on stdout.
#
#   bash deploy/tools/build.sh [helm] [docker-compose]     # default: both
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${JOINERY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery/tools}"

declare -A MODDIR=([helm]=helm [docker-compose]=compose)
declare -A MODULE=([helm]=helm.sh/helm/v3 [docker-compose]=github.com/docker/compose/v2)
declare -A PKG=([helm]=helm.sh/helm/v3/cmd/helm [docker-compose]=github.com/docker/compose/v2/cmd)

log() { printf '[tools] %s\n' "$*" >&2; }

version_of() { awk -v m="${MODULE[$1]}" '$1 == m {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$HERE/${MODDIR[$1]}/go.mod"; }

ldflags_of() {
  local v="$1" tool="$2"
  case "$tool" in
    # Stamp versions where upstream's Makefiles do, so `--version` tells the truth.
    helm) echo "-s -w -X helm.sh/helm/v3/internal/version.version=$v" ;;
    docker-compose) echo "-s -w -X github.com/docker/compose/v2/internal.Version=$v" ;;
  esac
}

GO=""
find_go() {
  [[ -n "$GO" ]] && return 0
  GO="$(command -v go || true)"
  [[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
  if [[ -z "$GO" ]]; then
    log "no Go toolchain found (need the go version named in deploy/tools/*/go.mod)"
    exit 1
  fi
}

tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(helm docker-compose)

for tool in "${tools[@]}"; do
  if [[ -z "${MODDIR[$tool]:-}" ]]; then
    log "unknown tool '$tool' (known: ${!MODDIR[*]})"
    exit 2
  fi
  version="$(version_of "$tool")"
  dest="$CACHE_ROOT/$tool-$version"
  if [[ ! -x "$dest/$tool" ]]; then
    find_go
    mkdir -p "$dest"
    log "building $tool $version into $dest with $("$GO" version) (a few minutes, once)"
    t0=$SECONDS
    (
      cd "$HERE/${MODDIR[$tool]}"
      # build next to the target and rename, so an interrupted build never leaves a half binary
      CGO_ENABLED=0 GOTOOLCHAIN=local "$GO" build -trimpath \
        -ldflags="$(ldflags_of "$version" "$tool")" -o "$dest/.$tool.tmp" "${PKG[$tool]}"
    )
    mv -f "$dest/.$tool.tmp" "$dest/$tool"
    log "$tool: done in $((SECONDS - t0))s"
  fi
  echo "$dest/$tool"
done
