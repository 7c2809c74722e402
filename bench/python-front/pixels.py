"""The minimal front end's image work, shared by app.py and decode_floor.py: Pillow decodes
the bytes, applies the EXIF orientation, converts to RGB and stretches the image to the
model's input with its bilinear filter (antialiased when shrinking)."""

import io

import numpy as np
from PIL import Image, ImageOps


def to_pixels(data, width, height):
    """HWC UINT8 pixels of width x height, and the image's own (oriented) size."""
    image = ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB")
    return np.asarray(image.resize((width, height), Image.Resampling.BILINEAR), dtype=np.uint8), image.size
