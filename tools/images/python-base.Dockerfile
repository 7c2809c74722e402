# A stand-in for the official python:3.11-slim-bookworm on a machine that reaches no image
# registry (scripts/images.sh bases): Debian's Python 3.11 on the local minbase, with venv
# (ensurepip) and the shared libpython3.11 that tritonserver's python backend stub loads.
# `python3` is on PATH in both images; the official one keeps it in /usr/local, this one in
# /usr, so a venv made in one is not moved to the other (triton-cpu.Dockerfile builds and
# runs on the same base).
ARG BASE=recognition-local/debian:bookworm
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv libpython3.11 >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -c 'import sys, venv; assert sys.version_info[:2] == (3, 11), sys.version'
CMD ["python3"]
