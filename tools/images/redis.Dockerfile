# A stand-in for the official redis:7-bookworm on a machine that reaches no image registry
# (scripts/images.sh deps): Debian's redis-server 7 on the local minbase, with the interface
# deploy/dependencies/redis.yaml relies on: user redis uid/gid 999, working dir /data,
# port 6379, redis-server and redis-cli on PATH. No entrypoint: the manifest names the
# command and its flags itself, so both images run the same command line.
ARG BASE=recognition-local/debian:bookworm
FROM ${BASE}
RUN groupadd --system --gid 999 redis \
 && useradd --system --uid 999 --gid redis --home-dir /data --shell /usr/sbin/nologin redis \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server redis-tools >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
