"""KServe v2 / Triton conformance calls made with the official Python client library
(tritonclient), against any server: real Triton or `recog inference-server`.

    python test/triton/conformance.py --grpc-url 127.0.0.1:8001 [--http-url 127.0.0.1:8000]
        --model centernet --image-file images.u8 [--repository-calls]

Each call is recorded, never raised: {"protocol", "call", "ok", "code", "message", "value"}
where `code` is the gRPC status name (or the HTTP status) of a failed call and `value` a
small comparable summary of a successful one. One JSON document goes to stdout; the test
(test/triton/conformance.test.ts) runs the same script against both servers and compares.
--image-file holds one preprocessed image in the model's input datatype (--datatype: UINT8
bytes for the prepared model, or FP32 little-endian) and shape.
"""

import argparse
import json
import queue
import sys

import numpy as np

# The model input's datatype (--datatype) and its numpy type: the prepared model takes UINT8.
NP_TYPES = {"UINT8": np.uint8, "FP32": np.dtype("<f4")}
DATATYPE = "UINT8"


def summarize_detections(array):
    """Rows above 0.3 score of each image, rounded: comparable across ONNX Runtime builds."""
    out = []
    for image in array:
        rows = [[round(float(v), 2) for v in row] for row in image if row[4] >= 0.3]
        out.append(rows)
    return out


class Recorder:
    def __init__(self):
        self.results = []

    def call(self, protocol, name, fn, summarize=lambda v: v):
        entry = {"protocol": protocol, "call": name}
        try:
            value = fn()
            entry.update(ok=True, value=summarize(value))
        except Exception as err:  # noqa: BLE001 - every failure is data here
            entry.update(ok=False, **describe_error(err))
        self.results.append(entry)
        return entry


def describe_error(err):
    from tritonclient.utils import InferenceServerException

    if isinstance(err, InferenceServerException):
        status = err.status()
        code = str(status) if status is not None else None
        if code and code.startswith("StatusCode."):
            code = code[len("StatusCode."):]
        return {"code": code, "message": err.message()}
    return {"code": type(err).__name__, "message": str(err)}


def grpc_calls(rec, url, model, image):
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(url=url)
    p = "grpc"
    rec.call(p, "is_server_live", client.is_server_live)
    rec.call(p, "is_server_ready", client.is_server_ready)
    rec.call(p, "get_server_metadata", client.get_server_metadata,
             lambda m: {"name_set": bool(m.name), "version_set": bool(m.version), "extensions": sorted(m.extensions)})
    rec.call(p, "is_model_ready", lambda: client.is_model_ready(model))
    rec.call(p, "is_model_ready unknown model", lambda: client.is_model_ready("no_such_model"))
    rec.call(p, "is_model_ready version 1", lambda: client.is_model_ready(model, "1"))
    rec.call(p, "get_model_metadata", lambda: client.get_model_metadata(model, as_json=True),
             lambda m: {"name": m["name"], "versions": m["versions"], "inputs": m["inputs"], "outputs": m["outputs"]})
    rec.call(p, "get_model_metadata unknown model", lambda: client.get_model_metadata("no_such_model"))
    rec.call(p, "get_model_metadata unknown version", lambda: client.get_model_metadata(model, "9"))
    rec.call(p, "get_model_config", lambda: client.get_model_config(model, as_json=True)["config"],
             lambda c: {"name": c["name"], "max_batch_size": c.get("max_batch_size"),
                        "input": [{"name": t["name"], "data_type": t["data_type"], "dims": t["dims"]} for t in c["input"]],
                        "output": [{"name": t["name"], "data_type": t["data_type"], "dims": t["dims"]} for t in c["output"]],
                        "dynamic_batching": "dynamic_batching" in c})
    rec.call(p, "get_model_config unknown model", lambda: client.get_model_config("no_such_model"))
    rec.call(p, "get_inference_statistics", lambda: client.get_inference_statistics(model, as_json=True),
             lambda s: {"models": [m["name"] for m in s["model_stats"]]})
    rec.call(p, "get_inference_statistics all", lambda: client.get_inference_statistics(as_json=True),
             lambda s: {"has_model": model in [m["name"] for m in s["model_stats"]]})
    rec.call(p, "get_inference_statistics unknown model", lambda: client.get_inference_statistics("no_such_model"))
    rec.call(p, "get_model_repository_index", lambda: client.get_model_repository_index(as_json=True),
             lambda r: {"models": [{"name": m["name"], "state": m.get("state")} for m in r.get("models", []) if m["name"] == model]})

    def infer(rows, name="images", datatype=None, shape=None, target=model, outputs=None):
        datatype = datatype or DATATYPE
        data = np.repeat(image[np.newaxis], rows, axis=0) if rows else image[np.newaxis]
        shape = shape or list(data.shape)
        inp = grpcclient.InferInput(name, shape, datatype)
        if datatype == DATATYPE and list(shape) == list(data.shape):
            inp.set_data_from_numpy(data)
        else:
            inp.set_data_from_numpy(np.zeros(shape, dtype=np.float64 if datatype == "FP64" else NP_TYPES[DATATYPE]))
        wanted = [grpcclient.InferRequestedOutput(o) for o in outputs] if outputs else None
        return client.infer(target, [inp], outputs=wanted)

    def out(r):
        d = r.as_numpy("detections")
        return {"shape": list(d.shape), "detections": summarize_detections(d)}

    rec.call(p, "infer batch 1", lambda: infer(1), out)
    rec.call(p, "infer batch 2", lambda: infer(2), out)
    rec.call(p, "infer batch 8 (max_batch_size)", lambda: infer(8), lambda r: {"shape": list(r.as_numpy("detections").shape)})
    rec.call(p, "infer batch 9 (over max_batch_size)", lambda: infer(9), out)
    rec.call(p, "infer unknown input name", lambda: infer(1, name="pixels"), out)
    rec.call(p, "infer wrong datatype", lambda: infer(1, datatype="FP64"), out)
    rec.call(p, "infer wrong shape", lambda: infer(1, shape=[1, 256, 256, 3]), out)
    rec.call(p, "infer unknown model", lambda: infer(1, target="no_such_model"), out)
    rec.call(p, "infer unknown output", lambda: infer(1, outputs=["boxes"]), out)
    rec.call(p, "infer named output", lambda: infer(1, outputs=["detections"]), out)

    def stream():
        responses = queue.Queue()
        client.start_stream(callback=lambda result, error: responses.put((result, error)))
        try:
            for i, rows in enumerate([1, 2]):
                inp = grpcclient.InferInput("images", [rows, *image.shape], DATATYPE)
                inp.set_data_from_numpy(np.repeat(image[np.newaxis], rows, axis=0))
                client.async_stream_infer(model, [inp], request_id=f"s{i}")
            bad = grpcclient.InferInput("images", [9, *image.shape], DATATYPE)
            bad.set_data_from_numpy(np.repeat(image[np.newaxis], 9, axis=0))
            client.async_stream_infer(model, [bad], request_id="s-bad")
            got = {}
            for _ in range(3):
                result, error = responses.get(timeout=120)
                if error is not None:
                    got["error"] = describe_error(error)
                else:
                    r = result.get_response()
                    got[r.id] = list(result.as_numpy("detections").shape)
            return got
        finally:
            client.stop_stream()

    rec.call(p, "stream_infer", stream)
    rec.call(p, "get_system_shared_memory_status", lambda: client.get_system_shared_memory_status(as_json=True),
             lambda s: {"regions": sorted(s.get("regions", {}).keys())})
    rec.call(p, "get_log_settings", lambda: client.get_log_settings(as_json=True),
             lambda s: {"keys": sorted(s.get("settings", {}).keys())})
    rec.call(p, "get_trace_settings", lambda: client.get_trace_settings(as_json=True),
             lambda s: {"has_settings": bool(s.get("settings"))})

    client.close()


def repository_calls(rec, url, model, image):
    """Unload and load the model: last, since a server may not load it back."""
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(url=url)
    p = "grpc"

    def infer():
        inp = grpcclient.InferInput("images", [1, *image.shape], DATATYPE)
        inp.set_data_from_numpy(image[np.newaxis])
        return client.infer(model, [inp])

    def out(r):
        d = r.as_numpy("detections")
        return {"shape": list(d.shape), "detections": summarize_detections(d)}

    rec.call(p, "unload_model unknown model", lambda: client.unload_model("no_such_model"))
    rec.call(p, "unload_model", lambda: client.unload_model(model))
    rec.call(p, "is_model_ready after unload", lambda: client.is_model_ready(model))
    rec.call(p, "is_server_ready after unload", client.is_server_ready)
    rec.call(p, "infer after unload", lambda: infer(), out)
    rec.call(p, "get_model_metadata after unload", lambda: client.get_model_metadata(model))
    rec.call(p, "get_inference_statistics after unload", lambda: client.get_inference_statistics(model))
    rec.call(p, "get_model_repository_index after unload", lambda: client.get_model_repository_index(as_json=True),
             lambda r: {"models": [{"name": m["name"], "state": m.get("state")} for m in r.get("models", []) if m["name"] == model]})
    rec.call(p, "load_model", lambda: client.load_model(model))
    rec.call(p, "is_model_ready after load", lambda: client.is_model_ready(model))
    rec.call(p, "infer after load", lambda: infer(), out)
    rec.call(p, "load_model unknown model", lambda: client.load_model("no_such_model"))
    client.close()


def http_calls(rec, url, model, image):
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(url=url)
    p = "http"
    rec.call(p, "is_server_live", client.is_server_live)
    rec.call(p, "is_server_ready", client.is_server_ready)
    rec.call(p, "get_server_metadata", client.get_server_metadata,
             lambda m: {"name_set": bool(m.get("name")), "version_set": bool(m.get("version")), "extensions": sorted(m.get("extensions", []))})
    rec.call(p, "is_model_ready", lambda: client.is_model_ready(model))
    rec.call(p, "is_model_ready unknown model", lambda: client.is_model_ready("no_such_model"))
    rec.call(p, "get_model_metadata", lambda: client.get_model_metadata(model),
             lambda m: {"name": m["name"], "versions": m["versions"], "inputs": m["inputs"], "outputs": m["outputs"]})
    rec.call(p, "get_model_metadata unknown model", lambda: client.get_model_metadata("no_such_model"))
    rec.call(p, "get_model_config", lambda: client.get_model_config(model),
             lambda c: {"name": c["name"], "max_batch_size": c.get("max_batch_size")})
    rec.call(p, "get_inference_statistics", lambda: client.get_inference_statistics(model),
             lambda s: {"models": [m["name"] for m in s["model_stats"]]})
    rec.call(p, "get_model_repository_index", client.get_model_repository_index,
             lambda r: {"models": [{"name": m["name"], "state": m.get("state")} for m in r if m["name"] == model]})

    def infer(rows, binary=True, name="images"):
        data = np.repeat(image[np.newaxis], rows, axis=0)
        inp = httpclient.InferInput(name, list(data.shape), DATATYPE)
        inp.set_data_from_numpy(data, binary_data=binary)
        return client.infer(model, [inp], outputs=[httpclient.InferRequestedOutput("detections", binary_data=binary)])

    def out(r):
        d = r.as_numpy("detections")
        return {"shape": list(d.shape), "detections": summarize_detections(d)}

    rec.call(p, "infer batch 1 (binary)", lambda: infer(1), out)
    rec.call(p, "infer batch 2 (binary)", lambda: infer(2), out)
    rec.call(p, "infer batch 1 (JSON)", lambda: infer(1, binary=False), out)
    rec.call(p, "infer batch 9 (over max_batch_size)", lambda: infer(9), out)
    rec.call(p, "infer unknown input name", lambda: infer(1, name="pixels"), out)
    client.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grpc-url", required=True)
    parser.add_argument("--http-url")
    parser.add_argument("--model", default="centernet")
    parser.add_argument("--image-file", required=True)
    parser.add_argument("--shape", default="512,512,3")
    parser.add_argument("--datatype", default="UINT8", choices=sorted(NP_TYPES), help="the model input's datatype")
    parser.add_argument("--repository-calls", action="store_true", help="also unload and load the model")
    args = parser.parse_args()

    global DATATYPE
    DATATYPE = args.datatype
    image = np.fromfile(args.image_file, dtype=NP_TYPES[DATATYPE]).reshape([int(d) for d in args.shape.split(",")])
    rec = Recorder()
    grpc_calls(rec, args.grpc_url, args.model, image)
    if args.http_url:
        http_calls(rec, args.http_url, args.model, image)
    if args.repository_calls:
        repository_calls(rec, args.grpc_url, args.model, image)
    json.dump({"results": rec.results}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
