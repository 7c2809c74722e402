/** Reads an ONNX file's graph inputs/outputs (names, types, shapes) and metadata with onnx-proto. */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export interface OnnxTensorInfo {
  name: string;
  /** ONNX element type name, e.g. "float32". */
  type: string;
  /** -1 for a symbolic or unknown dimension. */
  shape: number[];
}

export interface OnnxModelInfo {
  inputs: OnnxTensorInfo[];
  outputs: OnnxTensorInfo[];
  metadata: Record<string, string>;
}

const ELEMENT_TYPE: Record<number, string> = { 1: 'float32', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 9: 'bool', 10: 'float16', 11: 'float64' };

export function decodeModel(bytes: Uint8Array): onnxProto.onnx.ModelProto {
  try {
    return onnx.ModelProto.decode(bytes);
  } catch (err) {
    throw new Error(`not an ONNX model: ${(err as Error).message}`, { cause: err });
  }
}

export function inspectOnnx(bytes: Uint8Array): OnnxModelInfo {
  const model = decodeModel(bytes);
  const graph = model.graph;
  if (!graph) throw new Error('not an ONNX model: no graph');
  const initialized = new Set((graph.initializer ?? []).map((t) => t.name));
  const info = (v: onnxProto.onnx.IValueInfoProto): OnnxTensorInfo => {
    const t = v.type?.tensorType;
    return {
      name: v.name ?? '',
      type: ELEMENT_TYPE[t?.elemType ?? 0] ?? `type ${t?.elemType}`,
      shape: (t?.shape?.dim ?? []).map((d) => (d.dimValue !== undefined && d.dimValue !== null && Number(d.dimValue) > 0 ? Number(d.dimValue) : -1)),
    };
  };
  return {
    inputs: (graph.input ?? []).filter((v) => !initialized.has(v.name ?? '')).map(info),
    outputs: (graph.output ?? []).map(info),
    metadata: Object.fromEntries((model.metadataProps ?? []).map((p) => [p.key ?? '', p.value ?? ''])),
  };
}
