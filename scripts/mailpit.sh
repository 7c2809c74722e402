#!/usr/bin/env bash
# Installs the pinned Mailpit (a real SMTP server with an HTTP API to read what it received)
# with Go from its module (no prebuilt binary download) into the same per-user cache as MinIO
# and prints its path; the invitation e-mail tests send through it. Reruns find the cached
# binary and skip the build. The module ships without the web UI's npm-built assets: this
# build serves the SMTP server and the HTTP API the tests read, and needs no Node.js step.
# v1.33.1's go.mod asks for Go 1.26; an older `go` fetches that toolchain by itself.
#   MAILPIT_VERSION (pinned below), MAILPIT_BIN_DIR (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin)
#   MAILPIT_GO_PARALLEL: value for `go build -p` (1 by default on the shared machine, every core under CI)
# Usage: scripts/mailpit.sh          -> builds if needed, prints the binary path on stdout
#        scripts/mailpit.sh status   -> prints the path if built, exits 1 otherwise (no build)
set -euo pipefail

MAILPIT_VERSION=${MAILPIT_VERSION:-v1.33.1}
MAILPIT_BIN_DIR=${MAILPIT_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/bin}
if [ -n "${CI:-}" ]; then MAILPIT_GO_PARALLEL=${MAILPIT_GO_PARALLEL:-$(nproc)}; else MAILPIT_GO_PARALLEL=${MAILPIT_GO_PARALLEL:-1}; fi
mailpit_bin=$MAILPIT_BIN_DIR/mailpit-$MAILPIT_VERSION

if [ "${1:-}" = status ]; then
  [ -x "$mailpit_bin" ] && { echo "$mailpit_bin"; exit 0; }
  echo "mailpit.sh: not built yet ($mailpit_bin); run scripts/mailpit.sh" >&2
  exit 1
fi

if [ ! -x "$mailpit_bin" ]; then
  command -v go >/dev/null || { echo "mailpit.sh: Go is required to build Mailpit ($MAILPIT_VERSION)" >&2; exit 1; }
  mkdir -p "$MAILPIT_BIN_DIR"
  build_dir=$(mktemp -d)
  trap 'rm -rf "$build_dir"' EXIT
  echo "mailpit.sh: building github.com/axllent/mailpit@$MAILPIT_VERSION with $(go version | cut -d' ' -f3) (-p $MAILPIT_GO_PARALLEL); this takes minutes once" >&2
  started=$(date +%s)
  # GOBIN into a scratch dir, then an atomic rename: a killed build never leaves a half binary.
  # Mailpit's SQLite driver is pure Go (modernc.org/sqlite), so CGO stays off.
  GOBIN=$build_dir GOFLAGS="-p=$MAILPIT_GO_PARALLEL -buildvcs=false -mod=mod" CGO_ENABLED=0 \
    go install "github.com/axllent/mailpit@$MAILPIT_VERSION" >&2
  mv "$build_dir/mailpit" "$mailpit_bin"
  echo "mailpit.sh: built in $(( $(date +%s) - started ))s -> $mailpit_bin" >&2
fi

ln -sf "$(basename "$mailpit_bin")" "$MAILPIT_BIN_DIR/mailpit"
echo "$mailpit_bin"
