#!/usr/bin/env bash
# Runs one k6 scenario of load-tests/ against the Recognition API.
#
#   scripts/load.sh <scenario> [--target URL] [--grpc-target HOST:PORT] [--start [--prebuilt]]
#                   [--prometheus URL] [--update-baseline] [-- k6 args]
#   npm run load -- <scenario> [--target URL]      (a running deployment; default http://127.0.0.1:8080)
#   npm run load:smoke                             (= scripts/load.sh smoke --start)
#   npm run load:baseline                          (= scripts/load.sh smoke --start --update-baseline)
#   npm run load:grpc-gate                         (grpc --start, short phases, gated; CI adds -- --prebuilt)
#   npm run load:grpc-baseline                     (the same with --update-baseline)
#
# scenarios: smoke load stress spike soak mix limits grpc workload (load-tests/scenarios/<name>.js)
# --start    start the service itself on embedded defaults (embedded PostgreSQL in a temp
#            DATA_DIR, in-process limiter and ONNX Runtime, a free loopback port), and for
#            `grpc` also `recog inference-server`; both are stopped at the end.
# --prebuilt with --start: run the compiled service and CLI (dist/, bin/recog.js) as they
#            are, without `npm start`'s build and model preparation (CI's smoke step has
#            just done both).
# --target   base URL of a running deployment. Traffic goes there and to loopback only.
# --prometheus URL  also send k6's metrics to Prometheus's remote-write receiver
#            (http://HOST:9090/api/v1/write; or env PROMETHEUS_RW_URL), every series tagged
#            testid=<scenario>-<UTC time> (printed) to pick the run out in Grafana. A receiver
#            behind basic auth: K6_PROMETHEUS_RW_USERNAME and K6_PROMETHEUS_RW_PASSWORD in
#            the environment (k6 reads them), never user:password@ in the URL.
# --update-baseline  smoke --start or grpc --start only: rewrite
#            load-tests/baseline/<scenario>.json from this run.
# smoke --start ends with the regression gate (load-tests/tools/gate.mjs): exit 1 when a
# ratio of the API to the bare model regressed beyond its margin (SMOKE_GATE=0 skips it).
# grpc --start (with the inference server it starts and the API on it) does the same with
# the ratios of the API to ModelInfer alone, load-tests/baseline/grpc.json (GRPC_GATE=0).
#
# Before the run it creates the keys over HTTP through the console API, signed in as a
# console user like a browser (load-tests/tools/console-keys.mjs; no database access),
# and revokes them at the end, unless API_KEY (and the others the scenario uses) are set:
#   CONSOLE_EMAIL, CONSOLE_PASSWORD, CONSOLE_ORG  a console account that may manage keys
#     of that organisation (CONSOLE_TOTP_SECRET with two-factor authentication;
#     CONSOLE_NEW_PASSWORD to choose when its password is an operator's temporary one);
#     BALANCE_ORG (workload's 402): an organisation with a call balance of 0 it may manage.
#     With --start and no CONSOLE_EMAIL, the documented first run makes them: `recog orgs
#     create` and `recog users create` (the operator's one step; keys never use the CLI).
#     The CONSOLE_* secrets go to console-keys.mjs only: k6 never sees them.
#   API_KEY, OTHER_KEY  classes *, very high rate limit and quota (load keys)
#   LIMITS_KEY          classes *, default rate limit (10/min) and quota
#   QUOTA_KEY           classes *, quota 2
#   WORKLOAD_KEYS       workload: WORKLOAD_KEY_COUNT (20) load keys, comma-separated
#   BALANCE_KEY         workload: a key of BALANCE_ORG (402 INSUFFICIENT_BALANCE)
# It serves the fixture images on a loopback static server for URL mode (unless
# IMAGE_BASE_URL is set: a deployment elsewhere must be able to fetch from it, and the
# service must allow it in IMAGE_FETCH_ALLOW_CIDRS, e.g. 127.0.0.0/8 on one machine).
# SERVER_CMD overrides `npm start` for --start (e.g. "node --import tsx src/server.ts").
# Scenario settings (RATE, DURATION, OP, ...) go as environment variables or `-- -e K=V`.
# Keys are revoked at the end, unless the service was started by --start (its database goes
# with its DATA_DIR); revocation is given 60 s.
# Results: load-tests/results/<scenario>-<UTC time>.{json,txt}. Exit code: k6's (99 when
# a threshold was crossed), except for stress, where crossing one is the expected finding.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# The pinned Node of package.json (node_modules/.bin/node, from `npm ci`) first, as under npm:
# the CLI, the service and the helpers below refuse the machine's older node.
export PATH="$ROOT/node_modules/.bin:$PATH"
SCENARIOS="smoke load stress spike soak mix limits grpc workload"

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

scenario=${1:-}
[ -n "$scenario" ] || usage
shift
case " $SCENARIOS " in *" $scenario "*) ;; *) echo "load.sh: unknown scenario '$scenario' (one of: $SCENARIOS)" >&2; exit 2 ;; esac

target=${BASE_URL:-}
grpc_target=${GRPC_TARGET:-}
start=false
prometheus=${PROMETHEUS_RW_URL:-}
update_baseline=false
prebuilt=false
k6_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=${2:?--target needs a URL}; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    --grpc-target) grpc_target=${2:?--grpc-target needs host:port}; shift 2 ;;
    --grpc-target=*) grpc_target=${1#--grpc-target=}; shift ;;
    --start) start=true; shift ;;
    --prometheus) prometheus=${2:?--prometheus needs the remote-write URL}; shift 2 ;;
    --prometheus=*) prometheus=${1#--prometheus=}; shift ;;
    --update-baseline) update_baseline=true; shift ;;
    --prebuilt) prebuilt=true; shift ;;
    --) shift; k6_args=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "load.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
if $start && [ -n "$target" ]; then echo "load.sh: --start and --target exclude each other" >&2; exit 2; fi
# The baseline's ratios are those of the setup --start makes on this kind of machine.
if $update_baseline && { { [ "$scenario" != smoke ] && [ "$scenario" != grpc ]; } || ! $start; }; then
  echo "load.sh: --update-baseline goes with smoke --start or grpc --start" >&2; exit 2
fi
if $prebuilt; then
  $start || { echo "load.sh: --prebuilt goes with --start" >&2; exit 2; }
  [ -s dist/server.js ] && [ -s dist/cli/main.js ] || { echo "load.sh: --prebuilt: no dist/ (run npm run build first)" >&2; exit 2; }
fi

log() { echo "load.sh: $*" >&2; }
free_port() { node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_ok() { node -e 'fetch(process.argv[1],{signal:AbortSignal.timeout(3000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$1"; }
tcp_open() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
# The compiled CLI when `npm start` has just built it (much quicker to start), else via tsx.
recog_compiled=$prebuilt
recog() { if $recog_compiled; then node bin/recog.js "$@"; else npm run --silent recog -- "$@"; fi; }

work=$(mktemp -d "${TMPDIR:-/tmp}/recog-load.XXXXXX")
# Run as root, the embedded PostgreSQL drops to an unprivileged user that must reach DATA_DIR.
chmod 755 "$work"
pids=()  # process groups we started, stopped in reverse order
service_started=false
# The console account's secrets stay in this shell (not exported, so k6, which reads its whole
# environment into __ENV, never has them) and go to console-keys.mjs alone.
export -n CONSOLE_PASSWORD CONSOLE_NEW_PASSWORD CONSOLE_TOTP_SECRET 2>/dev/null || true
console_keys() {
  CONSOLE_EMAIL=${CONSOLE_EMAIL:-} CONSOLE_PASSWORD=${CONSOLE_PASSWORD:-} \
    CONSOLE_NEW_PASSWORD=${CONSOLE_NEW_PASSWORD:-} CONSOLE_TOTP_SECRET=${CONSOLE_TOTP_SECRET:-} \
    node load-tests/tools/console-keys.mjs "$@"
}
console_keys_bounded() {
  CONSOLE_EMAIL=${CONSOLE_EMAIL:-} CONSOLE_PASSWORD=${CONSOLE_PASSWORD:-} \
    CONSOLE_NEW_PASSWORD=${CONSOLE_NEW_PASSWORD:-} CONSOLE_TOTP_SECRET=${CONSOLE_TOTP_SECRET:-} \
    timeout 60 node load-tests/tools/console-keys.mjs "$@"
}
cleanup() {
  local i pid
  # The keys this run made are revoked through the console while the service still runs,
  # bounded: a deployment that stopped answering must not hold the run's end. A service this
  # run started is skipped: its database is deleted with $work below, keys and all.
  if [ -s "$work/keys.json" ] && ! $service_started; then
    console_keys_bounded revoke "$target" "$work" || log "revoking the run's keys failed (or took over 60 s)"
  fi
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
  inference_started=false
  if [ "$scenario" = grpc ] && [ -z "$grpc_target" ]; then
    gport=$(free_port); hport=$(free_port)
    grpc_target=127.0.0.1:$gport
    log "starting recog inference-server on $grpc_target (log $work/inference.log)"
    # setsid runs a program, not the recog shell function: the same choice spelt out.
    if $prebuilt; then recog_cmd=(node bin/recog.js); else recog_cmd=(npm run --silent recog --); fi
    spawn "$work/inference.log" "${recog_cmd[@]}" inference-server --host 127.0.0.1 --port "$gport" --http-port "$hport"
    inference_started=true
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
  # workload's 408: a URL download limit above the sync deadline, so an image host that
  # stalls runs into the deadline (the defaults, 10 s and 29 s, give a failed download).
  workload_env=()
  [ "$scenario" != workload ] || workload_env=(IMAGE_FETCH_TIMEOUT_MS="${IMAGE_FETCH_TIMEOUT_MS:-$(( ${SYNC_TIMEOUT_MS:-29000} + 30000 ))}")
  export DATA_DIR=$work/data
  # Made here, traversable: as root the embedded PostgreSQL runs as the postgres user.
  mkdir -m 755 "$DATA_DIR"
  log "starting the service on $target (DATA_DIR $DATA_DIR, ${backend_env[0]:-embedded inference}, log $work/server.log)"
  spawn "$work/server.log" env PORT="$port" HOST=127.0.0.1 PUBLIC_BASE_URL="$target" "${backend_env[@]}" \
    IMAGE_FETCH_ALLOW_CIDRS=127.0.0.0/8 "${workload_env[@]}" LOG_LEVEL="${LOG_LEVEL:-warn}" ${SERVER_CMD:-$($prebuilt && echo node dist/server.js || echo npm start)}
  server_pid=${pids[-1]}
  service_started=true
  [ -n "${SERVER_CMD:-}" ] || recog_compiled=true
  if ! wait_for "the service" "${START_TIMEOUT:-300}" "$server_pid" http_ok "$target/readyz"; then
    tail -n 40 "$work/server.log" >&2; exit 1
  fi
fi
target=${target:-http://127.0.0.1:8080}
target=${target%/}
grpc_target=${grpc_target:-127.0.0.1:8001}

# Keys: given, or created through the console API as a console user (no database access).
# Each missing one is made on its own: a given API_KEY does not stand for OTHER_KEY, nor a
# given LIMITS_KEY for QUOTA_KEY. Without a console account (and no --start) only the
# optional ones may be missing: the scenario then skips what they are for.
key_vars=()
required=(API_KEY); optional=(OTHER_KEY)
case $scenario in
  limits) required+=(LIMITS_KEY); optional+=(QUOTA_KEY) ;;
  workload) required+=(WORKLOAD_KEYS); optional+=(LIMITS_KEY QUOTA_KEY BALANCE_KEY) ;;
esac
missing_required=false
for var in "${required[@]}"; do
  [ -n "${!var:-}" ] || { key_vars+=("$var"); missing_required=true; }
done
for var in "${optional[@]}"; do
  [ -n "${!var:-}" ] || key_vars+=("$var")
done
if [ ${#key_vars[@]} -gt 0 ] && [ -z "${CONSOLE_EMAIL:-}" ] && ! $start && ! $missing_required; then
  log "not set, and no console account to make them: ${key_vars[*]} (the scenario skips their checks)"
  key_vars=()
fi
if [ ${#key_vars[@]} -gt 0 ]; then
  if [ -z "${CONSOLE_EMAIL:-}" ]; then
    if ! $start; then
      log "no keys: set CONSOLE_EMAIL, CONSOLE_PASSWORD and CONSOLE_ORG (a console user who may manage that organisation's keys), or API_KEY and the scenario's other keys"
      exit 2
    fi
    # A fresh deployment's first run (docs/console.md, Getting started): the operator makes
    # the organisation and its first owner with the CLI. Everything after goes through HTTP.
    stamp=$(date -u +%Y%m%dT%H%M%SZ)-$$
    CONSOLE_ORG=load-$scenario-$stamp
    CONSOLE_EMAIL=load-$stamp@load-test.example
    secret() { node -e 'console.log(require("node:crypto").randomBytes(18).toString("base64url"))'; }
    # Shell variables only (console_keys passes them on): never exported to k6.
    CONSOLE_PASSWORD=$(secret); CONSOLE_NEW_PASSWORD=$(secret)
    log "first run: organisation $CONSOLE_ORG and its owner $CONSOLE_EMAIL with recog (the console user)"
    # One after the other, in the foreground: nothing is left running if one fails (set -e).
    recog orgs create "$CONSOLE_ORG" --json > /dev/null || { log "recog orgs create failed"; exit 1; }
    if [ "$scenario" = workload ] && [ -z "${BALANCE_ORG:-}" ]; then
      BALANCE_ORG=$CONSOLE_ORG-no-balance
      recog orgs create "$BALANCE_ORG" --balance 0 --json > /dev/null || { log "recog orgs create failed"; exit 1; }
    fi
    # The operator's password is temporary: console-keys.mjs chooses CONSOLE_NEW_PASSWORD at sign-in.
    printf '%s\n' "$CONSOLE_PASSWORD" | recog users create --email "$CONSOLE_EMAIL" --org "$CONSOLE_ORG" --role owner --password-stdin --json > /dev/null
    if [ -n "${BALANCE_ORG:-}" ]; then
      recog users create --email "$CONSOLE_EMAIL" --org "$BALANCE_ORG" --role owner --json < /dev/null > /dev/null
    fi
  fi
  [ -n "${CONSOLE_ORG:-}" ] || { log "set CONSOLE_ORG: the organisation (name or id) whose keys the run creates"; exit 2; }
  big="\"quota\": ${LOAD_KEY_QUOTA:-100000000}, \"rate_limit\": ${LOAD_KEY_RATE_LIMIT:-1000000}"
  # Organisation names come from the environment: quoted for JSON by node, not by hand.
  json_str() { node -e 'console.log(JSON.stringify(process.argv[1]))' "$1"; }
  org_json=$(json_str "$CONSOLE_ORG")
  [ -z "${BALANCE_ORG:-}" ] || balance_json=$(json_str "$BALANCE_ORG")
  spec=()
  for var in "${key_vars[@]}"; do
    case $var in
      API_KEY) spec+=("{\"var\": \"API_KEY\", \"org\": $org_json, \"name\": \"k6-load\", $big}") ;;
      OTHER_KEY) spec+=("{\"var\": \"OTHER_KEY\", \"org\": $org_json, \"name\": \"k6-other\", $big}") ;;
      LIMITS_KEY) spec+=("{\"var\": \"LIMITS_KEY\", \"org\": $org_json, \"name\": \"k6-limits\"}") ;;
      QUOTA_KEY) spec+=("{\"var\": \"QUOTA_KEY\", \"org\": $org_json, \"name\": \"k6-quota\", \"quota\": 2}") ;;
      WORKLOAD_KEYS) spec+=("{\"var\": \"WORKLOAD_KEYS\", \"org\": $org_json, \"name\": \"k6-workload\", \"count\": ${WORKLOAD_KEY_COUNT:-20}, $big}") ;;
      BALANCE_KEY) [ -z "${BALANCE_ORG:-}" ] || spec+=("{\"var\": \"BALANCE_KEY\", \"org\": $balance_json, \"name\": \"k6-no-balance\"}") ;;
    esac
  done
  (IFS=,; echo "[${spec[*]}]") > "$work/keys-spec.json"
  log "creating ${#spec[@]} kinds of keys in $CONSOLE_ORG${BALANCE_ORG:+ and $BALANCE_ORG} through the console API as $CONSOLE_EMAIL"
  console_keys create "$target" "$work/keys-spec.json" "$work" || exit 1
  # VAR=secret lines (checked by console-keys.mjs to need no quoting); kept in the shell only.
  while IFS='=' read -r var value; do
    [ -n "$var" ] && printf -v "$var" '%s' "$value"
  done < "$work/keys.env"
  rm -f "$work/keys.env"
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
# The workload's images, made from the fixtures with sharp at run time (kept for the next run).
workload_images=$results/workload-images
if [ "$scenario" = workload ]; then
  node load-tests/tools/workload-images.mjs "$fixtures" "$workload_images"
  # Its 408 needs a download limit above the sync deadline: --start sets one up, a deployment
  # elsewhere says so with EXPECT_408=true (see docs/performance.md).
  expect_408=${EXPECT_408:-$($start && echo true || echo false)}
fi
quiet=()
if [ -n "${CI:-}" ] || [ ! -t 1 ]; then quiet=(--quiet); fi
# k6's built-in remote-write output; the trend stats become series k6_<metric>_p50, _p95, ...
prom_args=()
if [ -n "$prometheus" ]; then
  testid="$scenario-$(date -u +%Y%m%dT%H%M%SZ)"
  prom_args=(-o experimental-prometheus-rw --tag "testid=$testid")
  export K6_PROMETHEUS_RW_SERVER_URL=$prometheus
  export K6_PROMETHEUS_RW_TREND_STATS=${K6_PROMETHEUS_RW_TREND_STATS:-p(50),p(95),p(99),avg,max}
  # Logged without any user:password@ (credentials belong in K6_PROMETHEUS_RW_USERNAME/_PASSWORD).
  log "metrics -> $(printf '%s' "$prometheus" | sed -E 's#^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@#\1#'), testid=$testid"
fi
summary_json=$work/summary.json
log "k6 $scenario -> $target${IMAGE_BASE_URL:+ (images $IMAGE_BASE_URL)}$([ "$scenario" = grpc ] && echo " (gRPC $grpc_target)")"
set +e
# Keys go through the environment (k6 reads it into __ENV), never on a command line.
API_KEY=${API_KEY:-} OTHER_KEY=${OTHER_KEY:-} LIMITS_KEY=${LIMITS_KEY:-} QUOTA_KEY=${QUOTA_KEY:-} \
WORKLOAD_KEYS=${WORKLOAD_KEYS:-} BALANCE_KEY=${BALANCE_KEY:-} WORKLOAD_IMAGES_DIR=$workload_images \
SYNC_TIMEOUT_MS=${SYNC_TIMEOUT_MS:-29000} EXPECT_408=${expect_408:-false} \
BASE_URL=$target IMAGE_BASE_URL=$IMAGE_BASE_URL FIXTURES_DIR=$fixtures GRPC_TARGET=$grpc_target \
TENSOR_FILE=$tensor INPUT_SIZE=$size INPUT_DATATYPE=$datatype SCENARIO=$scenario RESULTS_DIR=$results K6_NO_USAGE_REPORT=true \
SUMMARY_JSON=$summary_json \
  "$K6" run --no-usage-report --address "" "${quiet[@]}" "${prom_args[@]}" "${k6_args[@]}" "load-tests/scenarios/$scenario.js"
rc=$?
set -e
if [ "$scenario" = stress ] && [ "$rc" = 99 ]; then
  log "stress: thresholds broke, which is what stress looks for (see BROKE in the report)"
  rc=0
fi
if [ "$rc" != 0 ] && $start; then
  log "k6 exited $rc; last lines of the service log:"; tail -n 20 "$work/server.log" >&2
fi
[ -z "$prometheus" ] || log "testid=$testid (k6_http_reqs_total{testid=\"$testid\"})"
# The regression gate: ratios of this run against the stored baseline, only for the setup
# the baseline was recorded on (smoke on the embedded defaults; grpc with the inference
# server started here and the API inferring through it) and only after a clean run.
gated=false; gate_on=1
if [ "$scenario" = smoke ] && $start; then gated=true; gate_on=${SMOKE_GATE:-1}; fi
if [ "$scenario" = grpc ] && $start; then
  gate_on=${GRPC_GATE:-1}
  if ${inference_started:-false} && [ "${GRPC_API_BACKEND:-triton}" = triton ]; then gated=true
  else log "grpc: no regression gate (the baseline is for the API on the inference server --start starts)"; fi
fi
if $update_baseline && ! $gated; then log "--update-baseline: not this setup; baseline left as it was"; [ "$rc" != 0 ] || rc=2; fi
if $gated && [ "$rc" = 0 ]; then
  if $update_baseline; then
    node load-tests/tools/gate.mjs --scenario "$scenario" --update "$summary_json" || rc=$?
  elif [ "$gate_on" != 0 ]; then
    node load-tests/tools/gate.mjs --scenario "$scenario" "$summary_json" || rc=$?
  fi
fi
exit "$rc"
