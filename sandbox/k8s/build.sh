#!/usr/bin/env bash
# Build the real Kubernetes control plane that the sandbox and the component tests run:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, from the versions
# pinned in this folder's go.mod/go.sum, with this machine's Go toolchain.
#
# The binaries are cached outside the repository, in $JOINERY_K8S_CACHE (default
# ~/.cache/joinery/k8s-<version>), so every clone on the machine reuses one build. When
# KUBEBUILDER_ASSETS names a folder that already holds all of them, nothing is built.
# Idempotent: exits at once when every binary is present.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
K8S_VERSION="$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' "$HERE/go.mod")"
CACHE_ROOT="${JOINERY_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/joinery}"
DEST="$CACHE_ROOT/k8s-$K8S_VERSION"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# package for each binary, from the module in this folder
declare -A PKG=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kwok]=sigs.k8s.io/kwok/cmd/kwok
)

log() { printf '[k8s-bin] %s\n' "$*" >&2; }

# A binary in $KUBEBUILDER_ASSETS wins (envtest folders usually hold etcd and kube-apiserver
# only); the rest come from the cache. sandbox/cluster.py looks them up the same way.
provided() {
  [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/$1" ]] || [[ -x "$DEST/$1" ]]
}

missing=()
for b in "${BINARIES[@]}"; do provided "$b" || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  log "ready: ${KUBEBUILDER_ASSETS:+$KUBEBUILDER_ASSETS and }$DEST"
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
MINOR="${K8S_VERSION#v1.}"; MINOR="${MINOR%%.*}"
# Stamp the version the way the upstream release build does, so /version and the
# compatibility-version checks see a real release instead of v0.0.0-master.
LDFLAGS="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
  LDFLAGS+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

log "building Kubernetes $K8S_VERSION control plane into $DEST with $("$GO" version)"
log "the first build takes a long while on a small machine; later runs reuse the cache"
START=$SECONDS
for b in "${missing[@]}"; do
  t0=$SECONDS
  log "$b: go build ${PKG[$b]}"
  # build next to the target and rename, so an interrupted build never leaves a half binary
  "$GO" build -trimpath -ldflags="$LDFLAGS" -o "$DEST/.$b.tmp" "${PKG[$b]}"
  mv -f "$DEST/.$b.tmp" "$DEST/$b"
  log "$b: done in $((SECONDS - t0))s"
done
log "all binaries ready in $((SECONDS - START))s: $DEST"
