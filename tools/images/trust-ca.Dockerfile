# A build-stage base that trusts this machine's certificate authority, through which the
# package registries are reached here (scripts/images.sh bases). Only build stages use it:
# the runtime images never carry the machine's CA.
ARG BASE=recognition-local/node:24-bookworm-slim
FROM ${BASE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
