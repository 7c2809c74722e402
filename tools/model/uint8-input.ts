/**
 * Puts the pixel conversion inside a model: its float image input becomes a UINT8 NHWC
 * input of the same name (RGB 0–255, what the decoder produces), followed in the graph by
 * Cast to FLOAT, a Transpose to NCHW when the model wants planes, and the pixel scale
 * (1/255 for Ultralytics exports). Clients then send one byte per value instead of four
 * (0.75 MB instead of 3 MB for 512×512) and do no per-pixel work. The model computes on
 * the floats it got before where no axis of the photo is enlarged (Cast of an integer is
 * exact); an enlarged axis is now rounded to bytes, and a scale multiplied in float32 may
 * differ from the client's by one ulp.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const { FLOAT, UINT8 } = onnx.TensorProto.DataType;

export interface Uint8InputOptions {
  /** The graph input to replace. */
  input: string;
  /** What the model takes today: NHWC, or NCHW (then a Transpose follows the Cast). */
  layout: 'NHWC' | 'NCHW';
  /** Pixel values 0–255 are multiplied by this inside the graph (1: no multiply). */
  scale: number;
}

/** The model with its float input `input` replaced by UINT8 NHWC pixels; other inputs untouched. */
export function withUint8Input(bytes: Uint8Array, o: Uint8InputOptions): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph;
  if (!graph) throw new Error('not an ONNX model: no graph');
  const at = (graph.input ?? []).findIndex((v) => v.name === o.input);
  if (at < 0) throw new Error(`the model has no input ${o.input}`);
  const old = graph.input![at];
  const tensor = old.type?.tensorType;
  if (tensor?.elemType !== FLOAT) throw new Error(`input ${o.input} is not FLOAT (element type ${tensor?.elemType})`);
  const dims = tensor.shape?.dim ?? [];
  if (dims.length !== 4) throw new Error(`input ${o.input} has rank ${dims.length}, not 4`);

  // Every name the graph already uses, so the new inner tensors cannot collide.
  const used = new Set<string>([...(graph.input ?? []), ...(graph.output ?? []), ...(graph.valueInfo ?? [])].map((v) => v.name ?? ''));
  for (const n of graph.node ?? []) for (const name of [...(n.input ?? []), ...(n.output ?? [])]) used.add(name);
  for (const t of graph.initializer ?? []) used.add(t.name ?? '');
  const fresh = (base: string): string => {
    let name = `${o.input}/${base}`;
    for (let i = 1; used.has(name); i++) name = `${o.input}/${base}_${i}`;
    used.add(name);
    return name;
  };

  // The float tensor the rest of the graph reads keeps its role under a new inner name.
  const inner = fresh('float');
  for (const n of graph.node ?? []) n.input = (n.input ?? []).map((name) => (name === o.input ? inner : name));
  for (const v of graph.output ?? []) if (v.name === o.input) throw new Error(`input ${o.input} is also a graph output`);

  const front: onnxProto.onnx.INodeProto[] = [];
  let last = o.input;
  const step = (opType: string, inputs: string[], out: string, attribute: onnxProto.onnx.IAttributeProto[] = []): void => {
    front.push({ opType, name: fresh(opType.toLowerCase()), input: inputs, output: [out], attribute });
    last = out;
  };
  const transposed = o.layout === 'NCHW';
  const scaled = o.scale !== 1;
  step('Cast', [last], !transposed && !scaled ? inner : fresh('cast'), [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]);
  if (transposed) step('Transpose', [last], !scaled ? inner : fresh('nchw'), [{ name: 'perm', type: onnx.AttributeProto.AttributeType.INTS, ints: [0, 3, 1, 2] }]);
  if (scaled) {
    const scale = fresh('scale');
    graph.initializer = [...(graph.initializer ?? []), { name: scale, dataType: FLOAT, dims: [], rawData: new Uint8Array(Float32Array.of(o.scale).buffer) }];
    step('Mul', [last, scale], inner);
  }
  graph.node = [...front, ...(graph.node ?? [])];

  // NCHW [N, 3, H, W] → NHWC [N, H, W, 3]: the batch dimension (fixed or symbolic) kept.
  const nhwc = transposed ? [dims[0], dims[2], dims[3], dims[1]] : dims;
  graph.input![at] = { name: o.input, docString: old.docString, type: { tensorType: { elemType: UINT8, shape: { dim: nhwc } } } };
  return onnx.ModelProto.encode(model).finish();
}

