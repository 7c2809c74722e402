#!/usr/bin/env bash
# Tools for the operator's tests against a real Kubernetes API server: etcd (built from its
# official module; Debian's etcd-server as a fallback), kube-apiserver, kubectl and helm (built with Go from their official
# modules), and for the cluster e2e suite kube-controller-manager and kube-scheduler (same
# release, same wrapper module, so cheap once kube-apiserver is built) and kwok (fake nodes
# and pod lifecycles, `go install`ed); for the real one-node cluster (scripts/real-cluster.sh)
# kubelet and kube-proxy (same wrapper module), CoreDNS (`go install`ed) and a static `pause`
# binary from tools/images/pause (the sandbox image). Built binaries are cached under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin
# keyed by version, so later runs (and CI on the same machine) skip the build.
#
#   scripts/k8s-tools.sh install   build or reuse everything, print `export K8S_TOOLS_BIN=...`
#   scripts/k8s-tools.sh env       print the export line only (nothing is built)
#   scripts/k8s-tools.sh status    list what is cached
#
# Knobs: K8S_VERSION (v1.34.4), HELM_VERSION (v3.19.5), KWOK_VERSION (v0.8.0), ETCD_VERSION (v3.6.4),
#        COREDNS_VERSION (v1.14.7),
#        K8S_TOOLS_SKIP_KUBECTL=1, K8S_TOOLS_SKIP_CLUSTER=1 (no controller-manager/scheduler/kwok),
#        K8S_TOOLS_REAL_NODE=1 (also kubelet, kube-proxy, CoreDNS, pause; on by default when CI=true,
#        off otherwise because kubelet alone is minutes of compiling),
#        K8S_TOOLS_GO_PARALLEL (go build -p; 1 by default, every core when CI=true).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
HELM_VERSION=${HELM_VERSION:-v3.19.5}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
ETCD_VERSION=${ETCD_VERSION:-v3.6.4}
# v1.14.x needs Go 1.25+; its go.mod has no replace directives, so `go install` works.
COREDNS_VERSION=${COREDNS_VERSION:-v1.14.7}
if [ "${CI:-}" = true ]; then REAL_NODE=${K8S_TOOLS_REAL_NODE:-1}; else REAL_NODE=${K8S_TOOLS_REAL_NODE:-0}; fi
ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service
BIN_DIR=$CACHE_DIR/bin
# One package at a time while people work on the machine; all cores in CI.
if [ "${CI:-}" = true ]; then GO_PARALLEL=${K8S_TOOLS_GO_PARALLEL:-$(nproc)}; else GO_PARALLEL=${K8S_TOOLS_GO_PARALLEL:-1}; fi
# kube-apiserver v1.34.x → staging modules v0.34.x
STAGING_VERSION=v0.${K8S_VERSION#v1.}

log() { echo "k8s-tools: $*" >&2; }

need_go() {
  command -v go >/dev/null || { log "Go is required to build kube-apiserver, kubectl and helm"; exit 1; }
}

# `kube-apiserver --version` and discovery's /version report the real release, not v0.0.0-master.
version_ldflags() {
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean ' "$pkg" "$K8S_VERSION" "$pkg" "$pkg" "$minor" "$pkg"
  done
}

go_build_flags() { echo "-p=$GO_PARALLEL -trimpath -buildvcs=false"; }

install_etcd() {
  if [ -x /usr/bin/etcd ] || command -v etcd >/dev/null; then return 0; fi
  log "installing etcd-server from Debian's packages"
  local sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
}

# Debian's etcd (3.4.23) lacks RequestWatchProgress (3.4.31+, 3.5.13+): kube-apiserver then
# refuses streamed initial lists (sendInitialEvents), every watch of kwok's client-go ended
# at once, and kwok saw new pods only at its backed-off relists (pods Ready in batches 4, 8,
# 16 s apart). The server module's go.mod has replace directives, hence a wrapper module.
build_etcd() {
  [ -x "$BIN_DIR/etcd-$ETCD_VERSION" ] && return 0
  need_go
  log "building etcd $ETCD_VERSION"
  local start=$SECONDS work; work=$(mktemp -d)
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >"$work/main.go"
  {
    printf 'module etcdwrapper\n\ngo 1.24\n\nrequire (\n'
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do printf '\tgo.etcd.io/etcd/%s %s\n' "$m" "$ETCD_VERSION"; done
    printf ')\n'
  } >"$work/go.mod"
  # shellcheck disable=SC2046
  (cd "$work" && go mod tidy && CGO_ENABLED=0 go build $(go_build_flags) -ldflags="-s -w" -o "$work/etcd" .) || { rm -rf "$work"; return 1; }
  mkdir -p "$BIN_DIR"
  mv "$work/etcd" "$BIN_DIR/etcd-$ETCD_VERSION"; rm -rf "$work"
  log "built etcd $ETCD_VERSION in $((SECONDS - start)) s"
}

# The k8s.io/kubernetes module points every k8s.io/* staging module at ./staging with
# replace directives, which `go install module@version` refuses. A throwaway wrapper
# module requires it and replaces each staging module with its published version.
build_k8s() {
  local wanted=("$@") missing=()
  for name in "${wanted[@]}"; do
    [ -x "$BIN_DIR/$name-$K8S_VERSION" ] || missing+=("$name")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  need_go
  local work; work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  log "building ${missing[*]} $K8S_VERSION (wrapper module in $work)"
  local gomod
  gomod=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
  {
    echo "module recognition-service/k8s-tools-wrapper"
    echo
    sed -n 's/^go \([0-9.]*\)$/go \1/p' "$gomod"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    # Every `k8s.io/x => ./staging/src/k8s.io/x` becomes `k8s.io/x => k8s.io/x v0.Y.Z`.
    sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*$#replace \1 => \1 '"$STAGING_VERSION"'#p' "$gomod"
  } >"$work/go.mod"
  local pkgs=""
  for name in "${missing[@]}"; do pkgs="$pkgs k8s.io/kubernetes/cmd/$name"; done
  # shellcheck disable=SC2086
  echo "package tools; import (" >"$work/tools.go"
  for name in "${missing[@]}"; do echo "_ \"k8s.io/kubernetes/cmd/$name\"" >>"$work/tools.go"; done
  echo ")" >>"$work/tools.go"
  sed -i '1i //go:build tools' "$work/tools.go"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go get "k8s.io/kubernetes@$K8S_VERSION")
  mkdir -p "$BIN_DIR"
  for name in "${missing[@]}"; do
    local start=$SECONDS
    # shellcheck disable=SC2046
    (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build $(go_build_flags) -ldflags="-s -w $(version_ldflags)" \
      -o "$BIN_DIR/$name-$K8S_VERSION.tmp" "k8s.io/kubernetes/cmd/$name")
    mv "$BIN_DIR/$name-$K8S_VERSION.tmp" "$BIN_DIR/$name-$K8S_VERSION"
    log "built $name $K8S_VERSION in $((SECONDS - start)) s"
  done
}

# go_install NAME VERSION PACKAGE [LDFLAGS]: `go install PACKAGE@VERSION` into $BIN_DIR/NAME-VERSION, once.
go_install() {
  local name=$1 version=$2 package=$3 ldflags=${4:-}
  [ -x "$BIN_DIR/$name-$version" ] && return 0
  need_go
  log "building $name $version"
  local start=$SECONDS gobin; gobin=$(mktemp -d)
  # shellcheck disable=SC2046
  CGO_ENABLED=0 GOBIN="$gobin" go install $(go_build_flags) -ldflags="-s -w $ldflags" "$package@$version"
  mkdir -p "$BIN_DIR"
  mv "$gobin/$name" "$BIN_DIR/$name-$version"; rm -rf "$gobin"
  log "built $name $version in $((SECONDS - start)) s"
}

build_helm() { go_install helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"; }
build_kwok() { go_install kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok; }
build_coredns() { go_install coredns "$COREDNS_VERSION" github.com/coredns/coredns; }

# The sandbox ("pause") binary is ours, so its version is the hash of its source: an edit rebuilds it.
pause_version() { sha256sum "$ROOT_DIR/tools/images/pause/main.go" | cut -c1-12; }

build_pause() {
  local version; version=$(pause_version)
  [ -x "$BIN_DIR/pause-$version" ] && return 0
  need_go
  mkdir -p "$BIN_DIR"
  # Standard library only, so no module is needed; static because the image is FROM scratch.
  (cd "$ROOT_DIR/tools/images/pause" && CGO_ENABLED=0 GO111MODULE=off go build -trimpath -ldflags="-s -w" -o "$BIN_DIR/pause-$version.tmp" main.go)
  mv "$BIN_DIR/pause-$version.tmp" "$BIN_DIR/pause-$version"
  log "built pause $version"
}

# Stable names the tests look for; they point at the versioned files.
link_all() {
  mkdir -p "$BIN_DIR"
  for name in kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy; do
    [ -x "$BIN_DIR/$name-$K8S_VERSION" ] && ln -sf "$name-$K8S_VERSION" "$BIN_DIR/$name"
  done
  [ -x "$BIN_DIR/helm-$HELM_VERSION" ] && ln -sf "helm-$HELM_VERSION" "$BIN_DIR/helm"
  [ -x "$BIN_DIR/kwok-$KWOK_VERSION" ] && ln -sf "kwok-$KWOK_VERSION" "$BIN_DIR/kwok"
  [ -x "$BIN_DIR/coredns-$COREDNS_VERSION" ] && ln -sf "coredns-$COREDNS_VERSION" "$BIN_DIR/coredns"
  local pause; pause=pause-$(pause_version)
  [ -x "$BIN_DIR/$pause" ] && ln -sf "$pause" "$BIN_DIR/pause"
  if [ -x "$BIN_DIR/etcd-$ETCD_VERSION" ]; then
    ln -sf "etcd-$ETCD_VERSION" "$BIN_DIR/etcd"
  else
    local etcd; etcd=$(command -v etcd || echo /usr/bin/etcd)
    [ -x "$etcd" ] && ln -sf "$etcd" "$BIN_DIR/etcd"
  fi
  return 0
}

print_env() { echo "export K8S_TOOLS_BIN=$BIN_DIR"; }

case "${1:-install}" in
  install)
    build_etcd || { log "etcd $ETCD_VERSION did not build; falling back to Debian's"; install_etcd; }
    build_k8s kube-apiserver
    build_helm
    [ "${K8S_TOOLS_SKIP_KUBECTL:-0}" = 1 ] || build_k8s kubectl
    if [ "${K8S_TOOLS_SKIP_CLUSTER:-0}" != 1 ]; then
      build_k8s kube-controller-manager
      build_k8s kube-scheduler
      build_kwok
    fi
    if [ "$REAL_NODE" = 1 ]; then
      build_k8s kubelet kube-proxy
      build_coredns
      build_pause
    fi
    link_all
    print_env
    ;;
  env) print_env ;;
  status) ls -l "$BIN_DIR" 2>/dev/null || log "nothing cached in $BIN_DIR" ;;
  *) echo "usage: $0 install|env|status" >&2; exit 2 ;;
esac
