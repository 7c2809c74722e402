#!/usr/bin/env bash
# Installs the pinned MinIO server with Go from its module (no prebuilt binary download) into a
# per-user cache and prints its path; the image-store tests run it as their real S3 server.
# Reruns find the cached binary and skip the build.
#   MINIO_VERSION (pinned below: MinIO tags are not semver, so the pin is the module's
#                  pseudo-version of one commit), MINIO_BIN_DIR (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin)
#   MINIO_GO_PARALLEL: value for `go build -p` (1 by default on the shared machine, every core under CI)
# Usage: scripts/minio.sh          -> builds if needed, prints the binary path on stdout
#        scripts/minio.sh status   -> prints the path if built, exits 1 otherwise (no build)
set -euo pipefail

MINIO_VERSION=${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
MINIO_BIN_DIR=${MINIO_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin}
if [ -n "${CI:-}" ]; then MINIO_GO_PARALLEL=${MINIO_GO_PARALLEL:-$(nproc)}; else MINIO_GO_PARALLEL=${MINIO_GO_PARALLEL:-1}; fi
minio_bin=$MINIO_BIN_DIR/minio-$MINIO_VERSION

if [ "${1:-}" = status ]; then
  [ -x "$minio_bin" ] && { echo "$minio_bin"; exit 0; }
  echo "minio.sh: not built yet ($minio_bin); run scripts/minio.sh" >&2
  exit 1
fi

if [ ! -x "$minio_bin" ]; then
  command -v go >/dev/null || { echo "minio.sh: Go is required to build MinIO ($MINIO_VERSION)" >&2; exit 1; }
  mkdir -p "$MINIO_BIN_DIR"
  build_dir=$(mktemp -d)
  trap 'rm -rf "$build_dir"' EXIT
  echo "minio.sh: building github.com/minio/minio@$MINIO_VERSION with $(go version | cut -d' ' -f3) (-p $MINIO_GO_PARALLEL); this takes minutes once" >&2
  started=$(date +%s)
  # GOBIN into a scratch dir, then an atomic rename: a killed build never leaves a half binary.
  GOBIN=$build_dir GOFLAGS="-p=$MINIO_GO_PARALLEL -buildvcs=false" CGO_ENABLED=0 \
    go install "github.com/minio/minio@$MINIO_VERSION" >&2
  mv "$build_dir/minio" "$minio_bin"
  echo "minio.sh: built in $(( $(date +%s) - started ))s -> $minio_bin" >&2
fi

ln -sf "$(basename "$minio_bin")" "$MINIO_BIN_DIR/minio"
echo "$minio_bin"
