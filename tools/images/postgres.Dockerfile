# A stand-in for the official postgres:15-bookworm on a machine that reaches no image
# registry (scripts/images.sh deps): Debian's postgresql-15 on the local minbase, started by
# postgres-entrypoint.sh. It keeps the interface deploy/dependencies/postgres.yaml relies on:
#   user postgres uid/gid 999, PGDATA (default /var/lib/postgresql/data), port 5432,
#   POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, pg_isready and psql on PATH, CMD postgres.
# Not reproduced: /docker-entrypoint-initdb.d scripts, POSTGRES_INITDB_ARGS, *_FILE variables.
ARG BASE=recognition-local/debian:bookworm
FROM ${BASE}
# The user first, with the official image's ids, so the package keeps them; no cluster is
# made at install (the entrypoint makes one in PGDATA at first start).
RUN groupadd --system --gid 999 postgres \
 && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql --shell /bin/bash postgres \
 && mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main-cluster.conf \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/run/postgresql /var/lib/postgresql/data \
 && chown -R postgres:postgres /var/run/postgresql /var/lib/postgresql \
 && chmod 3777 /var/run/postgresql && chmod 1777 /var/lib/postgresql/data
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
