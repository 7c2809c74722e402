# A stand-in for the official minio/minio image on a machine that reaches no image registry
# (scripts/images.sh deps): the MinIO server scripts/minio.sh builds from source, at
# /usr/bin/minio like the official image, on the local minbase. The manifest
# (deploy/dependencies/minio.yaml) names the command (`minio server /data …`), the user
# (uid 1000) and the data directory itself, so both images run the same command line.
ARG BASE=recognition-local/debian:bookworm
FROM ${BASE}
COPY minio /usr/bin/minio
RUN groupadd --gid 1000 minio && useradd --uid 1000 --gid minio --home-dir /data --shell /usr/sbin/nologin minio \
 && mkdir -p /data && chown minio:minio /data \
 && minio --version >/dev/null
USER minio
EXPOSE 9000 9001
CMD ["minio", "server", "/data", "--console-address", ":9001"]
