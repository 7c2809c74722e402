"""Real NVIDIA Triton (the tritonserver binary inside nvidia-pytriton) serving the
project's prepared model through Triton's python backend: ONNX Runtime runs the model's
ONNX file inside the bound Python function, with Triton's dynamic batcher in front and
the same model name, tensor names, datatypes, dims and max_batch_size as config.pbtxt.
--model, repeated, serves several models of the repository, each in its own session.

Run by the tests with the environment of scripts/python-env.sh:
    python test/triton/pytriton_server.py --model-repository DIR --grpc-port P --http-port Q
Prints one JSON line {"ready": true, ...} on stdout once Triton serves the model, then
serves until SIGTERM/SIGINT. Everything binds to --host: 127.0.0.1 unless told (the
recognition-triton-cpu image, tools/images/triton-cpu.Dockerfile, gives 0.0.0.0 in a pod).
"""

import argparse
import json
import os
import re
import signal
import sys
import threading


def parse_config(path):
    """The few fields of config.pbtxt that shape the served model (the file is ours)."""
    text = open(path, encoding="utf-8").read()

    def blocks(section):
        m = re.search(section + r"\s*\[(.*?)\]\s*\n(?=\w|$)", text, re.S)
        body = m.group(1) if m else ""
        return [
            {
                "name": re.search(r'name:\s*"([^"]+)"', b).group(1),
                "data_type": re.search(r"data_type:\s*(\w+)", b).group(1),
                "dims": [int(d) for d in re.search(r"dims:\s*\[([^\]]*)\]", b).group(1).split(",")],
            }
            for b in re.findall(r"\{(.*?)\}", body, re.S)
        ]

    delay = re.search(r"max_queue_delay_microseconds:\s*(\d+)", text)
    return {
        "name": re.search(r'^name:\s*"([^"]+)"', text, re.M).group(1),
        "max_batch_size": int(re.search(r"max_batch_size:\s*(\d+)", text).group(1)),
        "inputs": blocks("input"),
        "outputs": blocks("output"),
        "max_queue_delay_us": int(delay.group(1)) if delay else 0,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-repository", required=True)
    parser.add_argument("--model", action="append", help="a model of the repository to serve (repeatable; default: centernet)")
    parser.add_argument("--host", default="127.0.0.1", help="address of the HTTP, gRPC and metrics endpoints")
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--metrics-port", type=int, default=0, help="0: no metrics endpoint")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--max-queue-delay-us", type=int, default=None)
    args = parser.parse_args()

    # tritonserver and the python backend stub load the interpreter's shared libpython.
    import sysconfig

    libdir = sysconfig.get_config_var("LIBDIR") or os.path.join(sys.base_prefix, "lib")
    os.environ["LD_LIBRARY_PATH"] = ":".join(p for p in [libdir, os.environ.get("LD_LIBRARY_PATH", "")] if p)

    import numpy as np
    import onnxruntime as ort
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig

    dtypes = {"TYPE_FP32": np.float32, "TYPE_INT32": np.int32, "TYPE_INT64": np.int64, "TYPE_UINT8": np.uint8}

    def load(model):
        """One model of the repository: its config.pbtxt, and its newest version's ONNX file in a session of its own."""
        model_dir = os.path.join(args.model_repository, model)
        config = parse_config(os.path.join(model_dir, "config.pbtxt"))
        versions = sorted(int(v) for v in os.listdir(model_dir) if v.isdigit())
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(os.path.join(model_dir, str(versions[-1]), "model.onnx"), options, providers=["CPUExecutionProvider"])
        output_names = [o["name"] for o in config["outputs"]]

        @batch
        def infer(**inputs):
            feed = {name: np.ascontiguousarray(value) for name, value in inputs.items()}
            results = session.run(output_names, feed)
            return dict(zip(output_names, results))

        return config, infer

    models = [load(m) for m in (args.model or ["centernet"])]

    triton_config = TritonConfig(
        grpc_address=args.host,
        grpc_port=args.grpc_port,
        http_address=args.host,
        http_port=args.http_port,
        allow_metrics=args.metrics_port > 0,
        metrics_port=args.metrics_port or None,
        metrics_address=args.host if args.metrics_port > 0 else None,
        exit_timeout_secs=5,
        log_verbose=0,
    )

    def queue_delay(config):
        return config["max_queue_delay_us"] if args.max_queue_delay_us is None else args.max_queue_delay_us

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    # PyTriton guards statistics and the repository API with a token by default; the tests
    # drive both (statistics, unload/load), so nothing is restricted on this test server.
    with Triton(config=triton_config, security_config=TritonSecurityConfig(restricted_endpoints=[])) as triton:
        for config, infer in models:
            triton.bind(
                model_name=config["name"],
                infer_func=infer,
                inputs=[Tensor(name=t["name"], dtype=dtypes[t["data_type"]], shape=tuple(t["dims"])) for t in config["inputs"]],
                outputs=[Tensor(name=t["name"], dtype=dtypes[t["data_type"]], shape=tuple(t["dims"])) for t in config["outputs"]],
                config=ModelConfig(
                    max_batch_size=config["max_batch_size"],
                    batcher=DynamicBatcher(max_queue_delay_microseconds=queue_delay(config)),
                ),
                strict=True,
            )
        triton.run()
        first = models[0][0]
        print(
            json.dumps(
                {
                    "ready": True,
                    "model": first["name"],
                    "models": [c["name"] for c, _ in models],
                    "grpc_port": args.grpc_port,
                    "http_port": args.http_port,
                    "max_batch_size": first["max_batch_size"],
                    "max_queue_delay_us": queue_delay(first),
                    "onnxruntime": ort.__version__,
                }
            ),
            flush=True,
        )
        while not stop.wait(0.5) and triton.is_alive():
            pass
    print(json.dumps({"stopped": True}), flush=True)


if __name__ == "__main__":
    main()
