#!/usr/bin/env bash
# Installs the pinned k6 with Go from its module (no prebuilt binary download) into a
# per-user cache and prints its path. Reruns find the cached binary and skip the build.
#   K6_VERSION (pinned below), K6_BIN_DIR (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin)
#   K6_GO_PARALLEL: value for `go build -p` (1 by default: the machine is shared and small;
#                   every core under CI, where nothing else builds at the same time)
# Usage: scripts/k6.sh            -> builds if needed, prints the binary path on stdout
#        scripts/k6.sh version    -> also runs `k6 version`
set -euo pipefail

K6_VERSION=${K6_VERSION:-v1.8.1}
K6_BIN_DIR=${K6_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin}
if [ -n "${CI:-}" ]; then K6_GO_PARALLEL=${K6_GO_PARALLEL:-$(nproc)}; else K6_GO_PARALLEL=${K6_GO_PARALLEL:-1}; fi
# The binary name carries the version so a pin change rebuilds instead of reusing a stale one.
k6_bin=$K6_BIN_DIR/k6-$K6_VERSION

if [ ! -x "$k6_bin" ]; then
  command -v go >/dev/null || { echo "k6.sh: Go is required to build k6 ($K6_VERSION)" >&2; exit 1; }
  mkdir -p "$K6_BIN_DIR"
  build_dir=$(mktemp -d)
  trap 'rm -rf "$build_dir"' EXIT
  echo "k6.sh: building go.k6.io/k6@$K6_VERSION with $(go version | cut -d' ' -f3) (-p $K6_GO_PARALLEL); this takes minutes once" >&2
  started=$(date +%s)
  # GOBIN into a scratch dir, then an atomic rename: a killed build never leaves a half binary.
  GOBIN=$build_dir GOFLAGS="-p=$K6_GO_PARALLEL -buildvcs=false" CGO_ENABLED=0 \
    go install "go.k6.io/k6@$K6_VERSION" >&2
  mv "$build_dir/k6" "$k6_bin"
  echo "k6.sh: built in $(( $(date +%s) - started ))s -> $k6_bin" >&2
fi

ln -sf "$(basename "$k6_bin")" "$K6_BIN_DIR/k6"
if [ "${1:-}" = version ]; then K6_NO_USAGE_REPORT=true "$k6_bin" version >&2; fi
echo "$k6_bin"
