/** ONNX graph edits for tests, with the onnx-proto classes the converter uses. */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

function int64(name: string, values: number[]): onnxProto.onnx.ITensorProto {
  return { name, dataType: onnx.TensorProto.DataType.INT64, dims: [values.length], int64Data: values };
}

/**
 * A YOLO export cut down to its first `classes` classes: a Slice keeps rows 0 … 4+classes-1
 * of the [1, 4+C, A] output, which becomes the graph's only output `predictions`. Class names
 * are dropped from the metadata, so an import needs a catalog, as a custom model's would.
 */
export function sliceYoloClasses(bytes: Uint8Array, classes: number): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph!;
  const out = graph.output![0];
  const dims = out.type!.tensorType!.shape!.dim!;
  const anchors = Number(dims[2].dimValue);
  graph.initializer!.push(int64('slice_starts', [0]), int64('slice_ends', [4 + classes]), int64('slice_axes', [1]));
  graph.node!.push({ opType: 'Slice', name: 'keep_classes', input: [out.name!, 'slice_starts', 'slice_ends', 'slice_axes'], output: ['predictions'] });
  graph.output = [{ name: 'predictions', type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: 1 }, { dimValue: 4 + classes }, { dimValue: anchors }] } } } }];
  model.metadataProps = (model.metadataProps ?? []).filter((p) => p.key !== 'names');
  return onnx.ModelProto.encode(model).finish();
}

/**
 * A UINT8-input model (the prepared CenterNet: input → Cast to FLOAT → …) turned back into
 * the FP32 model users bring: the Cast goes, the input is FLOAT of the same shape. The
 * graph after it is untouched, so the two compute the same on the same pixel values.
 */
export function floatInputFromUint8(bytes: Uint8Array, input = 'images'): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph!;
  const cast = graph.node!.find((n) => n.opType === 'Cast' && n.input?.[0] === input);
  if (!cast) throw new Error(`no Cast reads ${input}`);
  const casted = cast.output![0];
  graph.node = graph.node!.filter((n) => n !== cast);
  for (const n of graph.node) n.input = n.input!.map((name) => (name === casted ? input : name));
  const value = graph.input!.find((v) => v.name === input)!;
  value.type!.tensorType!.elemType = onnx.TensorProto.DataType.FLOAT;
  return onnx.ModelProto.encode(model).finish();
}
