#!/usr/bin/env bash
# Fetches the YOLO12n ONNX file (Ultralytics export, AGPL-3.0 weights) for tests and
# benchmarks only: it is never committed, bundled or put in an image. The file comes from
# the crate easy-yolo (pinned below) in the Rust crate registry, downloaded by cargo itself
# (a throwaway project depending on the crate + `cargo fetch`), unzipped into a per-user cache.
#   YOLO12N_DIR (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/weights)
# Usage: scripts/yolo12n.sh   -> fetches if needed, prints the path of yolov12n.onnx
set -euo pipefail

CRATE=easy-yolo
CRATE_VERSION=0.1.3
# sha256 of the unzipped ONNX file, checked on every fetch.
ONNX_SHA256=e548ab3a406227202334bf5a6623c9814ac6286ff04e68aeb4dc2357732d1a4f
DIR=${YOLO12N_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/weights}
out=$DIR/yolov12n-$CRATE-$CRATE_VERSION.onnx

if [ ! -s "$out" ]; then
  command -v cargo >/dev/null || { echo "yolo12n.sh: cargo is required to fetch $CRATE@$CRATE_VERSION from the Rust crate registry" >&2; exit 1; }
  command -v python3 >/dev/null || { echo "yolo12n.sh: python3 is required to unzip the model" >&2; exit 1; }
  mkdir -p "$DIR"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  started=$(date +%s)
  echo "yolo12n.sh: fetching $CRATE@$CRATE_VERSION from the Rust crate registry with cargo (once)" >&2
  mkdir -p "$work/p/src"
  printf '[package]\nname = "fetch-yolo"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n' "$CRATE" "$CRATE_VERSION" > "$work/p/Cargo.toml"
  : > "$work/p/src/lib.rs"
  # Own CARGO_HOME: only this crate (and what it depends on) is downloaded, nothing else is touched.
  CARGO_HOME=$work/cargo cargo fetch --manifest-path "$work/p/Cargo.toml" -q >&2
  crate=$(find "$work/cargo/registry/cache" -name "$CRATE-$CRATE_VERSION.crate" | head -n1)
  [ -n "$crate" ] || { echo "yolo12n.sh: $CRATE-$CRATE_VERSION.crate not found after cargo fetch" >&2; exit 1; }
  tar -xzf "$crate" -C "$work"
  zip=$(find "$work/$CRATE-$CRATE_VERSION" -name 'yolov12n.onnx.zip' | head -n1)
  [ -n "$zip" ] || { echo "yolo12n.sh: yolov12n.onnx.zip not in the crate" >&2; exit 1; }
  python3 - "$zip" "$work/yolov12n.onnx" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith('.onnx'))
    with z.open(name) as src, open(sys.argv[2], 'wb') as dst:
        dst.write(src.read())
PY
  echo "$ONNX_SHA256  $work/yolov12n.onnx" | sha256sum -c --quiet - >&2
  mv "$work/yolov12n.onnx" "$out.tmp-$$" && mv "$out.tmp-$$" "$out"
  echo "yolo12n.sh: fetched in $(( $(date +%s) - started ))s -> $out" >&2
fi
echo "$out"
