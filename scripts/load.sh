#!/usr/bin/env bash
# Runs one k6 scenario of load-tests/ against the Recognition API.
#
#   scripts/load.sh <scenario> [--target URL] [--grpc-target HOST:PORT] [--start] [-- k6 args]
#   npm run load -- <scenario> [--target URL]      (a running deployment; default http://127.0.0.1:8080)
#   npm run load:smoke                             (= scripts/load.sh smoke --start)
#
# scenarios: smoke load stress spike soak mix limits grpc (load-tests/scenarios/<name>.js)
# --start    start the service itself on embedded defaults (embedded PostgreSQL in a temp
#            DATA_DIR, in-process limiter and ONNX Runtime, a free loopback port), and for
#            `grpc` also `recog inference-server`; both are stopped at the end.
# --target   base URL of a running deployment. Traffic goes there and to loopback only.
#
# Before the run it provisions keys with `recog keys create` (the CLI reaches the
# deployment's database through the same DATABASE_URL / DATA_DIR environment as the
# service), unless API_KEY (and OTHER_KEY, LIMITS_KEY, QUOTA_KEY) are already set:
#   API_KEY, OTHER_KEY  classes *, very high rate limit and quota (load keys)
#   LIMITS_KEY          classes *, default rate limit (10/min) and quota
#   QUOTA_KEY           classes *, quota 2
# It serves the fixture images on a loopback static server for URL mode (unless
# IMAGE_BASE_URL is set: a deployment elsewhere must be able to fetch from it, and the
# service must allow it in IMAGE_FETCH_ALLOW_CIDRS, e.g. 127.0.0.0/8 on one machine).
# SERVER_CMD overrides `npm start` for --start (e.g. "node --import tsx src/server.ts").
# Scenario settings (RATE, DURATION, OP, ...) go as environment variables or `-- -e K=V`.
# Results: load-tests/results/<scenario>-<UTC time>.{json,txt}. Exit code: k6's (99 when
# a threshold was crossed), except for stress, where crossing one is the expected finding.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SCENARIOS="smoke load stress spike soak mix limits grpc"

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

scenario=${1:-}
[ -n "$scenario" ] || usage
shift
case " $SCENARIOS " in *" $scenario "*) ;; *) echo "load.sh: unknown scenario '$scenario' (one of: $SCENARIOS)" >&2; exit 2 ;; esac

target=${BASE_URL:-}
grpc_target=${GRPC_TARGET:-}
start=false
k6_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=${2:?--target needs a URL}; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    --grpc-target) grpc_target=${2:?--grpc-target needs host:port}; shift 2 ;;
    --grpc-target=*) grpc_target=${1#--grpc-target=}; shift ;;
    --start) start=true; shift ;;
    --) shift; k6_args=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "load.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
if $start && [ -n "$target" ]; then echo "load.sh: --start and --target exclude each other" >&2; exit 2; fi

log() { echo "load.sh: $*" >&2; }
free_port() { node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_ok() { node -e 'fetch(process.argv[1],{signal:AbortSignal.timeout(3000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$1"; }
tcp_open() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
json_field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined||v===null)process.exit(1);console.log(v)})' "$1"; }
# The compiled CLI when `npm start` has just built it (much quicker to start), else via tsx.
recog_compiled=false
recog() { if $recog_compiled; then node bin/recog.js "$@"; else npm run --silent recog -- "$@"; fi; }

work=$(mktemp -d "${TMPDIR:-/tmp}/recog-load.XXXXXX")
# Run as root, the embedded PostgreSQL drops to an unprivileged user that must reach DATA_DIR.
chmod 755 "$work"
pids=()  # process groups we started, stopped in reverse order
cleanup() {
  local i pid
  for (( i=${#pids[@]}-1; i>=0; i-- )); do
    pid=${pids[$i]}
    kill -TERM -- "-$pid" 2>/dev/null || continue
    # Graceful first: the service stops its embedded PostgreSQL on SIGTERM.
    for _ in $(seq 1 60); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  if [ "${KEEP_WORK:-}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts a command in its own process group (setsid) so cleanup reaches its children.
spawn() {
  local logfile=$1; shift
  setsid "$@" >"$logfile" 2>&1 < /dev/null &
  pids+=("$!")
}

wait_for() {  # wait_for <what> <seconds> <pid> <command...>
  local what=$1 secs=$2 pid=$3; shift 3
  local deadline=$(( $(date +%s) + secs ))
  until "$@"; do
    if ! kill -0 "$pid" 2>/dev/null; then log "$what exited before it was ready"; return 1; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then log "$what not ready after ${secs}s"; return 1; fi
    sleep 1
  done
}

K6=$(scripts/k6.sh)

if $start; then
  # Embedded defaults: no DATABASE_URL, REDIS_URL or TRITON_URL; a DATA_DIR of its own.
  unset DATABASE_URL REDIS_URL TRITON_URL
  backend_env=()
  if [ "$scenario" = grpc ] && [ -z "$grpc_target" ]; then
    gport=$(free_port); hport=$(free_port)
    grpc_target=127.0.0.1:$gport
    log "starting recog inference-server on $grpc_target (log $work/inference.log)"
    spawn "$work/inference.log" npm run --silent recog -- inference-server --host 127.0.0.1 --port "$gport" --http-port "$hport"
    if ! wait_for "the inference server" 180 "${pids[-1]}" tcp_open "$grpc_target"; then
      tail -n 40 "$work/inference.log" >&2; exit 1
    fi
    # The production topology: the API infers through the same v2 server that phase 1
    # measures alone, so API latency − inference latency is the API's own overhead.
    # GRPC_API_BACKEND=embedded measures the API on its in-process ONNX Runtime instead.
    if [ "${GRPC_API_BACKEND:-triton}" = triton ]; then backend_env=(TRITON_URL="$grpc_target"); fi
  fi
  port=$(free_port)
  target=http://127.0.0.1:$port
  export DATA_DIR=$work/data
  # Made here, traversable: as root the embedded PostgreSQL runs as the postgres user.
  mkdir -m 755 "$DATA_DIR"
  log "starting the service on $target (DATA_DIR $DATA_DIR, ${backend_env[0]:-embedded inference}, log $work/server.log)"
  spawn "$work/server.log" env PORT="$port" HOST=127.0.0.1 PUBLIC_BASE_URL="$target" "${backend_env[@]}" \
    IMAGE_FETCH_ALLOW_CIDRS=127.0.0.0/8 LOG_LEVEL="${LOG_LEVEL:-warn}" ${SERVER_CMD:-npm start}
  server_pid=${pids[-1]}
  [ -n "${SERVER_CMD:-}" ] || recog_compiled=true
  if ! wait_for "the service" "${START_TIMEOUT:-300}" "$server_pid" http_ok "$target/readyz"; then
    tail -n 40 "$work/server.log" >&2; exit 1
  fi
fi
target=${target:-http://127.0.0.1:8080}
target=${target%/}
grpc_target=${grpc_target:-127.0.0.1:8001}

# Keys: given, or provisioned on the deployment's database.
if [ -z "${API_KEY:-}" ] || { [ "$scenario" = limits ] && [ -z "${LIMITS_KEY:-}" ]; }; then
  org_name="load-$scenario-$(date -u +%Y%m%dT%H%M%SZ)-$$"
  log "provisioning keys in organisation $org_name with recog"
  org=$(recog orgs create "$org_name" --json | json_field id)
  big=(--classes '*' --quota "${LOAD_KEY_QUOTA:-100000000}" --rate-limit "${LOAD_KEY_RATE_LIMIT:-1000000}")
  # The keys are independent: create them in parallel (each CLI start costs seconds).
  key_jobs=()
  new_key() { local var=$1; shift; recog keys create --org "$org" --json "$@" > "$work/key-$var.json" & key_jobs+=("$!"); }
  if [ -z "${API_KEY:-}" ]; then
    new_key API_KEY --name k6-load "${big[@]}"
    [ -n "${OTHER_KEY:-}" ] || new_key OTHER_KEY --name k6-other "${big[@]}"
  fi
  if [ "$scenario" = limits ]; then
    [ -n "${LIMITS_KEY:-}" ] || new_key LIMITS_KEY --name k6-limits --classes '*'
    [ -n "${QUOTA_KEY:-}" ] || new_key QUOTA_KEY --name k6-quota --classes '*' --quota 2
  fi
  wait_ok=true
  for job in "${key_jobs[@]}"; do wait "$job" || wait_ok=false; done
  $wait_ok || { log "recog keys create failed"; exit 1; }
  for var in API_KEY OTHER_KEY LIMITS_KEY QUOTA_KEY; do
    if [ -f "$work/key-$var.json" ]; then
      value=$(json_field key < "$work/key-$var.json") || { log "no key in the output of recog keys create ($var)"; exit 1; }
      printf -v "$var" '%s' "$value"
      rm -f "$work/key-$var.json"
    fi
  done
fi

# URL-mode images from a loopback static server.
fixtures=${FIXTURES_DIR:-${FIXTURE_IMAGES:-$(cd "$ROOT/../shared/fixtures/images" 2>/dev/null && pwd || true)}}
[ -n "$fixtures" ] && [ -d "$fixtures" ] || { log "fixture images not found: set FIXTURES_DIR or FIXTURE_IMAGES, the tests' name (default ../shared/fixtures/images)"; exit 1; }
if [ -z "${IMAGE_BASE_URL:-}" ]; then
  spawn "$work/static.log" node load-tests/tools/static-server.mjs "$fixtures" 0 127.0.0.1
  for _ in $(seq 1 50); do [ -s "$work/static.log" ] && break; sleep 0.1; done
  IMAGE_BASE_URL=http://127.0.0.1:$(head -n 1 "$work/static.log")
fi

# The gRPC scenario's tensor: the reference image through the API's own preprocessing.
# INPUT_FIT must match the detector's resize (stretch by default, src/inference/detector.ts).
# INPUT_DATATYPE: UINT8 for the models prepared here (the graph casts), FP32 for a float model.
fit=${INPUT_FIT:-stretch}; size=${INPUT_SIZE:-512}; datatype=${INPUT_DATATYPE:-UINT8}
tensor=$ROOT/load-tests/.prepared/basketball1-$fit-$size.$([ "$datatype" = FP32 ] && echo f32 || echo u8)
if [ "$scenario" = grpc ] && { [ ! -s "$tensor" ] || [ "$fixtures/basketball1.png" -nt "$tensor" ]; }; then
  node --import tsx load-tests/tools/prepare-tensor.ts "$fixtures/basketball1.png" "$tensor" --size "$size" --fit "$fit" --datatype "$datatype"
fi

results=$ROOT/load-tests/results
mkdir -p "$results"
quiet=()
if [ -n "${CI:-}" ] || [ ! -t 1 ]; then quiet=(--quiet); fi
log "k6 $scenario -> $target${IMAGE_BASE_URL:+ (images $IMAGE_BASE_URL)}$([ "$scenario" = grpc ] && echo " (gRPC $grpc_target)")"
set +e
# Keys go through the environment (k6 reads it into __ENV), never on a command line.
API_KEY=${API_KEY:-} OTHER_KEY=${OTHER_KEY:-} LIMITS_KEY=${LIMITS_KEY:-} QUOTA_KEY=${QUOTA_KEY:-} \
BASE_URL=$target IMAGE_BASE_URL=$IMAGE_BASE_URL FIXTURES_DIR=$fixtures GRPC_TARGET=$grpc_target \
TENSOR_FILE=$tensor INPUT_SIZE=$size INPUT_DATATYPE=$datatype SCENARIO=$scenario RESULTS_DIR=$results K6_NO_USAGE_REPORT=true \
  "$K6" run --no-usage-report --address "" "${quiet[@]}" "${k6_args[@]}" "load-tests/scenarios/$scenario.js"
rc=$?
set -e
if [ "$scenario" = stress ] && [ "$rc" = 99 ]; then
  log "stress: thresholds broke, which is what stress looks for (see BROKE in the report)"
  rc=0
fi
if [ "$rc" != 0 ] && $start; then
  log "k6 exited $rc; last lines of the service log:"; tail -n 20 "$work/server.log" >&2
fi
exit "$rc"
