#!/usr/bin/env bash
# Private PostgreSQL and Redis servers on loopback for the test suite, from Debian's
# packages. `start` installs them when missing and is idempotent; `stop` ends them;
# `env` prints the variables the tests read.
#   PG_PORT (55432), REDIS_PORT (56379), SERVICES_DIR (/var/tmp/recognition-service/services: the postgres user must reach it)
set -euo pipefail

PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
SERVICES_DIR=${SERVICES_DIR:-/var/tmp/recognition-service/services}
PG_DIR=$SERVICES_DIR/pg
REDIS_DIR=$SERVICES_DIR/redis

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install_packages() {
  local missing=()
  [ -n "$(pg_bin)" ] || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "services: installing ${missing[*]} from Debian's packages" >&2
  local sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

start_pg() {
  local bin; bin=$(pg_bin)
  mkdir -p "$PG_DIR"; chmod 755 "$SERVICES_DIR" "$(dirname "$SERVICES_DIR")" 2>/dev/null || true
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$PG_DIR"
  if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
    as_postgres "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  fi
  if ! as_postgres "$bin/pg_ctl" -D "$PG_DIR/data" status >/dev/null 2>&1; then
    as_postgres "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null
  fi
  as_postgres psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qtAc \
    "DO \$\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='recog') THEN CREATE ROLE recog LOGIN SUPERUSER PASSWORD 'recog'; END IF; END\$\$;" >/dev/null
}

start_redis() {
  mkdir -p "$REDIS_DIR"
  if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --save '' --appendonly no \
      --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" --pidfile "$REDIS_DIR/redis.pid"
    for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
}

print_env() {
  echo "export TEST_DATABASE_URL=postgres://recog:recog@127.0.0.1:$PG_PORT/postgres"
  echo "export TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
}

case "${1:-start}" in
  start) install_packages; start_pg; start_redis; print_env ;;
  stop)
    [ -n "$(pg_bin)" ] && [ -d "$PG_DIR/data" ] && as_postgres "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true ;;
  env) print_env ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
