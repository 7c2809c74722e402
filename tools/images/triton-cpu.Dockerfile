# A CPU-only NVIDIA Triton for the real-cluster tests (scripts/images.sh builds it as
# recognition-triton-cpu:0.1.0): the real `tritonserver` of PyPI's nvidia-pytriton with its
# python backend, serving the prepared model the way the test suite's PyTriton server does
# (test/triton/pytriton_server.py: ONNX Runtime inside the bound function, Triton's dynamic
# batcher in front). `tritonserver` on PATH is a wrapper (triton-cpu-tritonserver.py) that
# takes the command line the operator gives Triton pods (src/operator/desired/triton.ts)
# and refuses what it cannot honour. Not a production image: NVIDIA's is.
#
# Context: a directory holding pytriton_server.py, python-requirements.txt (scripts/) and
# triton-cpu-tritonserver.py (here); scripts/images.sh makes it.
#   docker build -t recognition-triton-cpu:0.1.0 -f tools/images/triton-cpu.Dockerfile <context>
# The bases are arguments like the root Dockerfile's: PYTHON_IMAGE at run time, BUILD_IMAGE
# (the same Python plus the machine's CA, on a machine that needs it) for the venv. Both must
# carry the same Python at the same path: a venv points at its interpreter.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG BUILD_IMAGE=${PYTHON_IMAGE}

# --- build: the pinned environment of scripts/python-requirements.txt -------------------
FROM ${BUILD_IMAGE} AS build
COPY python-requirements.txt /tmp/
# pip goes once the install is done (nothing installs at run time), and so do the python
# backend stubs for the Pythons this image does not have (PyTriton picks the running one).
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --quiet --no-cache-dir --disable-pip-version-check --no-input -r /tmp/python-requirements.txt \
 && /opt/venv/bin/pip uninstall --quiet --yes pip \
 && version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') \
 && stubs=/opt/venv/lib/python$version/site-packages/pytriton/tritonserver/python_backend_stubs \
 && test -x "$stubs/$version/triton_python_backend_stub" \
 && find "$stubs" -mindepth 1 -maxdepth 1 ! -name "$version" -exec rm -rf {} +

# --- runtime ---------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
COPY --from=build /opt/venv /opt/venv
COPY pytriton_server.py /opt/triton/pytriton_server.py
COPY triton-cpu-tritonserver.py /usr/local/bin/tritonserver
# The uid of NVIDIA's Triton images (triton-server, 1000), which the operator runs Triton as.
# The root filesystem is read-only in the pod: HOME and PyTriton's workspace (a copy of the
# server, its model store and sockets, under $PYTRITON_HOME) go to /tmp, an emptyDir there.
RUN chmod 0755 /usr/local/bin/tritonserver \
 && groupadd --gid 1000 triton-server \
 && useradd --uid 1000 --gid triton-server --no-create-home --home-dir /tmp --shell /usr/sbin/nologin triton-server \
 && /opt/venv/bin/python -c 'import pytriton, onnxruntime, numpy'
ENV HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 1000:1000
EXPOSE 8000 8001 8002
CMD ["tritonserver", "--model-repository=/models"]
