"""Pillow's part of the minimal front end, alone: the CPU per photo of pixels.to_pixels (decode,
orient, RGB, bilinear resize to the model's input) over the given photos, one at a time,
after one warm-up pass. The tier bench runs it each round beside the front end, so the front
end's cost can be split into its decoding and everything else (HTTP, JSON, gRPC).

Usage: decode_floor.py WIDTH HEIGHT PASSES PHOTO... ; prints {"ms_per_photo": ...}.
"""

import json
import sys
import time
from pathlib import Path

from pixels import to_pixels


def main():
    width, height, passes = (int(a) for a in sys.argv[1:4])
    photos = [Path(f).read_bytes() for f in sys.argv[4:]]
    for data in photos:
        to_pixels(data, width, height)
    started = time.process_time()
    for _ in range(passes):
        for data in photos:
            to_pixels(data, width, height)
    ms = (time.process_time() - started) * 1000 / (passes * len(photos))
    print(json.dumps({"ms_per_photo": ms}))


if __name__ == "__main__":
    main()
