#!/usr/bin/env bash
# Creates the pinned Python environment of the test suite (real Triton from nvidia-pytriton,
# tritonclient, ONNX Runtime; scripts/python-requirements.txt) in a per-user cache and prints
# its directory. The directory name carries a hash of the requirements and the interpreter,
# so a pin change builds a new one; reruns find the finished one and do nothing.
#   PYTHON: the interpreter (default: python3.11, else python3). tritonserver's python
#           backend loads the interpreter's shared libpython: the interpreter must have one.
#   PYTHON_ENV_DIR: cache root (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/python)
#   PYTHON_REQUIREMENTS, PYTHON_ENV_NAME: another pinned environment built the same way
#           (bench/python-front/env.sh: the tier bench's front end), its name prefix
# Usage: scripts/python-env.sh          -> builds if needed, prints the venv directory
#        scripts/python-env.sh --check  -> prints it if built, else exits 1 (builds nothing)
set -euo pipefail
cd "$(dirname "$0")/.."

root=${PYTHON_ENV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/python}
python=${PYTHON:-$(command -v python3.11 || ls -d "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.11*/bin/python3.11 2>/dev/null | tail -1 || true)}
python=${python:-$(command -v python3 || true)}
[ -n "$python" ] || { echo "python-env.sh: no python3.11 or python3 found (set PYTHON)" >&2; exit 1; }
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
libpython=$("$python" -c 'import os, sysconfig as s; print(os.path.join(s.get_config_var("LIBDIR") or "", s.get_config_var("INSTSONAME") or ""))')
# Only the test suite's environment (tritonserver's python backend) needs it.
if [ -z "${PYTHON_REQUIREMENTS:-}" ] && { [ ! -f "$libpython" ] || [[ "$libpython" != *.so* ]]; }; then
  echo "python-env.sh: $python ($version) has no shared libpython ($libpython), which tritonserver's python backend loads; use a build with --enable-shared (set PYTHON)" >&2
  exit 1
fi
requirements=${PYTHON_REQUIREMENTS:-scripts/python-requirements.txt}
key=$( (cat "$requirements"; echo "$version") | sha256sum | cut -c1-16)
env_dir=$root/${PYTHON_ENV_NAME:-py}$version-$key

if [ ! -f "$env_dir/.complete" ]; then
  [ "${1:-}" = --check ] && exit 1
  mkdir -p "$root"
  # One builder at a time; a venv is not relocatable, so it is built in place and marked
  # complete last: an interrupted build is found incomplete and redone.
  exec 9>"$root/.lock"
  flock 9
  if [ ! -f "$env_dir/.complete" ]; then
    rm -rf "$env_dir"
    started=$(date +%s)
    echo "python-env.sh: creating $env_dir with $python ($version); this takes about a minute once" >&2
    "$python" -m venv "$env_dir"
    "$env_dir/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements" >&2
    touch "$env_dir/.complete"
    echo "python-env.sh: built in $(( $(date +%s) - started ))s, $(du -sh "$env_dir" | cut -f1)" >&2
  fi
fi
echo "$env_dir"
