"""Answers every request with the version Triton loaded this copy as (see config.pbtxt)."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.version = float(args["model_version"])

    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "x").as_numpy()
            version = np.full_like(x, self.version, dtype=np.float32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("version", version)]))
        return responses
