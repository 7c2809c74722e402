#!/usr/bin/env bash
# Entrypoint of the local postgres stand-in (postgres.Dockerfile): the subset of the official
# image's behaviour the manifests use. On an empty PGDATA: initdb with POSTGRES_USER as the
# superuser and POSTGRES_PASSWORD as its password, every TCP client authenticated by
# scram-sha-256, then POSTGRES_DB created. Then postgres replaces this shell, listening on
# every address. Run as root, it prepares the directories and drops to postgres (uid 999).
set -euo pipefail

if [ "${1:-postgres}" != postgres ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
mkdir -p "$PGDATA"
chmod 700 "$PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # Like the official image: no password means refusing to start rather than trusting everyone.
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-entrypoint: POSTGRES_PASSWORD is empty; set it (the database is reachable over TCP)" >&2
    exit 1
  fi
  pwfile=$(mktemp)
  trap 'rm -f "$pwfile"' EXIT
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  # Clients come from other pods: any address, password required.
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    # A private start on the socket only, to create the database before anyone connects.
    pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait --silent start
    # From stdin, not --command: psql quotes :"db" (any name, safely) only in input it reads.
    psql --username="$POSTGRES_USER" --dbname=postgres --no-psqlrc --quiet --set ON_ERROR_STOP=1 \
      --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
    pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
  fi
  echo "postgres-entrypoint: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)" >&2
fi

exec "$@"
