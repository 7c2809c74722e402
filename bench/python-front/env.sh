#!/usr/bin/env bash
# Creates the pinned Python environment of the tier bench's minimal front end
# (bench/python-front/requirements.txt: FastAPI, uvicorn, Pillow, numpy, tritonclient) the
# way scripts/python-env.sh makes the test suite's, and prints its directory. Installing
# reaches PyPI once; reruns find the finished one.
# Usage: bench/python-front/env.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON_REQUIREMENTS=bench/python-front/requirements.txt PYTHON_ENV_NAME=front-py exec scripts/python-env.sh "$@"
