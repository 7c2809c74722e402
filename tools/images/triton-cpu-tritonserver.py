#!/opt/venv/bin/python3
"""`tritonserver` of the recognition-triton-cpu test image (triton-cpu.Dockerfile).

Takes the command line the operator gives Triton pods (src/operator/desired/triton.ts):
    tritonserver --model-repository=/models --model-control-mode=explicit --load-model=centernet
                 --http-port=8000 --grpc-port=8001 --metrics-port=8002
                 --exit-on-error=true --strict-readiness=true
and runs the real tritonserver of nvidia-pytriton through /opt/triton/pytriton_server.py
(the test suite's PyTriton server) with the same model repository, ports and models. It
serves the --load-model models (explicit mode, each model's newest version) or the
repository's only one (none mode), fixed at start, from a local directory; any flag or value
it cannot honour ends it at once with a message naming the flag, never silently ignored.
"""

import argparse
import os
import sys

SERVER = "/opt/triton/pytriton_server.py"
# Triton's own parser takes these spellings of a boolean.
TRUE = {"true", "1", "on", "yes"}
FALSE = {"false", "0", "off", "no"}


class Refusal(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Refusal(message)


def boolean(value):
    v = value.lower()
    if v in TRUE:
        return True
    if v in FALSE:
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {value!r}")


def port(value):
    n = int(value)
    if not 0 < n < 65536:
        raise argparse.ArgumentTypeError(f"not a port: {value!r}")
    return n


def served_models(args):
    """The models to serve: the --load-model list of explicit mode, the repository's only one in none mode."""
    repo = args.model_repository
    if args.model_control_mode == "explicit":
        if not args.load_model:
            raise Refusal("--model-control-mode=explicit: name the models to serve with --load-model")
        return list(dict.fromkeys(args.load_model))
    if args.load_model:
        raise Refusal("--load-model is only for --model-control-mode=explicit")
    models = sorted(d for d in os.listdir(repo) if os.path.isfile(os.path.join(repo, d, "config.pbtxt")))
    if len(models) != 1:
        raise Refusal(f"--model-control-mode=none: this image serves exactly one model, {repo} holds {len(models)}")
    return models


def main(argv):
    p = Parser(prog="tritonserver", allow_abbrev=False)
    p.add_argument("--model-repository", required=True)
    p.add_argument("--model-control-mode", choices=["none", "explicit"], default="none")
    p.add_argument("--load-model", action="append", default=[])
    p.add_argument("--http-port", type=port, default=8000)
    p.add_argument("--grpc-port", type=port, default=8001)
    p.add_argument("--metrics-port", type=port, default=8002)
    p.add_argument("--allow-metrics", type=boolean, default=True)
    # Triton binds every endpoint to every address unless told; one address for all here.
    p.add_argument("--http-address", default="0.0.0.0")
    p.add_argument("--grpc-address", default="0.0.0.0")
    p.add_argument("--metrics-address", default=None)
    # What the PyTriton server does anyway: a model that fails to load ends it, and it is
    # ready only once the model is. The opposite values are not available.
    p.add_argument("--exit-on-error", type=boolean, default=True)
    p.add_argument("--strict-readiness", type=boolean, default=True)
    try:
        args = p.parse_args(argv)
        if not args.exit_on_error:
            raise Refusal("--exit-on-error=false is not available: a model that fails to load always ends this server")
        if not args.strict_readiness:
            raise Refusal("--strict-readiness=false is not available: ready means the model is ready here")
        addresses = {args.http_address, args.grpc_address, args.metrics_address or args.http_address}
        if len(addresses) != 1:
            raise Refusal(f"--http-address, --grpc-address and --metrics-address must be the same here, not {sorted(addresses)}")
        repo = args.model_repository
        if "://" in repo:
            raise Refusal(f"--model-repository={repo}: only a local directory (a mounted volume) is served here, not remote storage")
        if not os.path.isdir(repo):
            raise Refusal(f"--model-repository={repo}: no such directory")
        models = served_models(args)
        for model in models:
            if not os.path.isfile(os.path.join(repo, model, "config.pbtxt")):
                raise Refusal(f"--load-model={model}: no {os.path.join(repo, model, 'config.pbtxt')}")
    except (Refusal, ValueError, OSError) as e:
        print(f"tritonserver (recognition-triton-cpu): {e}", file=sys.stderr)
        return 2

    # PyTriton copies the server, its model store and its sockets into a workspace under
    # $PYTRITON_HOME (default ~/.cache/pytriton): somewhere writable on a read-only root.
    env = dict(os.environ)
    env.setdefault("PYTRITON_HOME", os.path.join(env.get("TMPDIR", "/tmp"), "pytriton"))
    home = env["PYTRITON_HOME"]
    parent = home if os.path.isdir(home) else os.path.dirname(home.rstrip("/")) or "/"
    if not os.access(parent, os.W_OK):
        print(f"tritonserver (recognition-triton-cpu): PYTRITON_HOME {home} is not writable (mount an emptyDir on /tmp)", file=sys.stderr)
        return 2

    command = [
        sys.executable, SERVER,
        "--model-repository", repo,
        *[arg for model in models for arg in ("--model", model)],
        "--host", args.http_address,
        "--http-port", str(args.http_port),
        "--grpc-port", str(args.grpc_port),
        "--metrics-port", str(args.metrics_port if args.allow_metrics else 0),
    ]
    print("tritonserver (recognition-triton-cpu): " + " ".join(command[1:]), file=sys.stderr, flush=True)
    # exec: the server becomes this process (PID 1 in a pod) and gets SIGTERM itself.
    os.execve(sys.executable, command, env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
