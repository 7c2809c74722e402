"""A minimal Python front end before a KServe v2 (Triton) gRPC server, for the tier bench.

The kind of service people put before Triton: FastAPI on uvicorn, Pillow to decode and
resize, numpy, the official tritonclient over gRPC. It is deliberately minimal, so it is a
floor for a Python front end, not a product: NO authentication, NO database (no request
records, no usage counting), NO rate limits or quotas, NO image storage, NO per-request
deadline, NO NMS; it only decodes, resizes, infers and returns the detections above a
score threshold. uvicorn logs every request at its default level (info), as the API does.

The body is the API's: {"external_id": ..., "image_base64": ...}; the answer says
"status": "DONE" with the detections. The model's input name, size, layout (NHWC or
NCHW) and datatype (FP32 or UINT8) come from the server's model metadata, so the tensor
goes over the wire in the datatype the model declares. Images are stretched to the input
(the catalog's "stretch" fit) with Pillow's bilinear filter.

Environment: TRITON_GRPC (host:port), MODEL_NAME (default centernet), HOST, PORT,
SCORE_THRESHOLD (default 0.3). bench/python-front/env.sh builds its Python environment.
"""

import base64
import binascii
import os
import threading

import numpy as np
import tritonclient.grpc as grpcclient
import uvicorn
from fastapi import FastAPI, HTTPException
from PIL import UnidentifiedImageError
from pydantic import BaseModel

from pixels import to_pixels

TRITON = os.environ.get("TRITON_GRPC", "127.0.0.1:8001")
MODEL = os.environ.get("MODEL_NAME", "centernet")
SCORE = float(os.environ.get("SCORE_THRESHOLD", "0.3"))


def model_input():
    """The model's first input and output from the server's metadata."""
    meta = grpcclient.InferenceServerClient(url=TRITON).get_model_metadata(MODEL, as_json=True)
    inp = meta["inputs"][0]
    dims = [int(d) for d in inp["shape"]][-3:]
    nchw = dims[0] == 3 and dims[2] != 3
    height, width = (dims[1], dims[2]) if nchw else (dims[0], dims[1])
    return inp["name"], inp["datatype"], width, height, nchw, meta["outputs"][0]["name"]


INPUT, DATATYPE, WIDTH, HEIGHT, NCHW, OUTPUT = model_input()
if DATATYPE not in ("FP32", "UINT8"):
    raise SystemExit(f"python-front: the model's input is {DATATYPE}; this front end sends FP32 or UINT8")

# FastAPI runs plain `def` handlers on its thread pool; one gRPC client per thread.
_local = threading.local()


def client():
    if not hasattr(_local, "client"):
        _local.client = grpcclient.InferenceServerClient(url=TRITON)
    return _local.client


class SyncRequest(BaseModel):
    external_id: str
    image_base64: str


app = FastAPI()


@app.get("/healthz")
def healthz():
    return {"status": "ok", "model": MODEL, "datatype": DATATYPE, "input": [WIDTH, HEIGHT]}


@app.post("/v1/cv/requests/sync")
def sync(req: SyncRequest):
    try:
        data = base64.b64decode(req.image_base64, validate=True)
        pixels, (width, height) = to_pixels(data, WIDTH, HEIGHT)
    except (binascii.Error, UnidentifiedImageError, OSError) as err:
        raise HTTPException(status_code=400, detail=f"not an image: {err}") from err
    if NCHW:
        pixels = pixels.transpose(2, 0, 1)
    batch = pixels[np.newaxis]
    if DATATYPE == "FP32":
        batch = batch.astype(np.float32)
    tensor = grpcclient.InferInput(INPUT, list(batch.shape), DATATYPE)
    tensor.set_data_from_numpy(np.ascontiguousarray(batch))
    result = client().infer(MODEL, inputs=[tensor], outputs=[grpcclient.InferRequestedOutput(OUTPUT)])
    # CenterNet's output: [1, K, 6] = x1, y1, x2, y2 (input pixels), score, class index.
    rows = result.as_numpy(OUTPUT)[0]
    sx, sy = width / WIDTH, height / HEIGHT
    results = [
        {
            "class_index": int(c),
            "confidence": round(float(s), 4),
            "bounding_box": {"x": round(float(x1 * sx)), "y": round(float(y1 * sy)), "width": round(float((x2 - x1) * sx)), "height": round(float((y2 - y1) * sy))},
        }
        for x1, y1, x2, y2, s, c in rows
        if s >= SCORE
    ]
    return {"external_id": req.external_id, "status": "DONE", "results": results}


if __name__ == "__main__":
    uvicorn.run(app, host=os.environ.get("HOST", "127.0.0.1"), port=int(os.environ.get("PORT", "8090")), log_level="info")
