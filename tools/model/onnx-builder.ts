/**
 * A small builder for ONNX graphs on top of the generated protobuf classes of `onnx-proto`:
 * nodes, initializers, typed inputs/outputs, and the final serialized ModelProto.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export type OnnxDtype = 'float32' | 'int32' | 'int64' | 'bool' | 'uint8';

export const ONNX_DATA_TYPE: Record<OnnxDtype, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
  uint8: onnx.TensorProto.DataType.UINT8,
};

export type AttrValue = number | string | number[] | { floats: number[] } | { float: number };

/** A dimension of a graph input/output: a fixed size or a symbolic name (dynamic). */
export type Dim = number | string;

export class OnnxGraphBuilder {
  private readonly nodes: onnxProto.onnx.INodeProto[] = [];
  private readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private readonly inputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly outputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly used = new Set<string>();
  private counter = 0;

  /** A fresh tensor name derived from `base`, unique in the graph. */
  fresh(base: string): string {
    let name = base;
    while (this.used.has(name)) name = `${base}__${++this.counter}`;
    this.used.add(name);
    return name;
  }

  /** Reserves a name that must stay exactly as given (graph inputs/outputs). */
  reserve(name: string): string {
    if (this.used.has(name)) throw new Error(`ONNX tensor name ${name} used twice`);
    this.used.add(name);
    return name;
  }

  addInput(name: string, dtype: OnnxDtype, dims: Dim[]): void {
    this.inputs.push(valueInfo(name, dtype, dims));
  }

  addOutput(name: string, dtype: OnnxDtype, dims: Dim[]): void {
    this.outputs.push(valueInfo(name, dtype, dims));
  }

  /** Adds an initializer and returns its (unique) name. */
  addInitializer(base: string, dtype: OnnxDtype, dims: number[], values: ArrayLike<number> | ArrayLike<bigint>): string {
    const name = this.fresh(base);
    this.initializers.push({ name, dataType: ONNX_DATA_TYPE[dtype], dims, rawData: toRawBytes(dtype, values) });
    return name;
  }

  int64s(base: string, values: number[], dims: number[] = [values.length]): string {
    return this.addInitializer(base, 'int64', dims, values.map((v) => BigInt(v)));
  }

  floats(base: string, values: number[], dims: number[] = [values.length]): string {
    return this.addInitializer(base, 'float32', dims, values);
  }

  /**
   * Adds a node; outputs are fresh names derived from `outBase` (one per output count)
   * unless given as exact names. Returns the output names.
   */
  node(opType: string, inputs: string[], outBase: string | string[], attrs: Record<string, AttrValue> = {}, outputCount = 1): string[] {
    const outputs = Array.isArray(outBase) ? outBase : Array.from({ length: outputCount }, (_, i) => this.fresh(outputCount === 1 ? outBase : `${outBase}:${i}`));
    this.nodes.push({
      opType,
      name: this.fresh(`node/${outputs[0]}`),
      input: inputs,
      output: outputs,
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return outputs;
  }

  /** The serialized ModelProto. */
  build(meta: { opset: number; producer: string; graphName: string; doc?: string; metadata?: Record<string, string> }): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: 8, // ONNX IR 8 goes with opsets 17 and 18
      producerName: meta.producer,
      producerVersion: '1',
      docString: meta.doc ?? '',
      opsetImport: [{ domain: '', version: meta.opset }],
      metadataProps: Object.entries(meta.metadata ?? {}).map(([key, value]) => ({ key, value })),
      graph: {
        name: meta.graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }

  get nodeCount(): number {
    return this.nodes.length;
  }
}

function valueInfo(name: string, dtype: OnnxDtype, dims: Dim[]): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ONNX_DATA_TYPE[dtype],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

function attribute(name: string, v: AttrValue): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new Error(`attribute ${name}: use {float: x} for a float`);
    return { name, type: T.INT, i: v };
  }
  if (typeof v === 'string') return { name, type: T.STRING, s: Buffer.from(v, 'utf8') };
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v };
  if ('floats' in v) return { name, type: T.FLOATS, floats: v.floats };
  return { name, type: T.FLOAT, f: v.float };
}

function toRawBytes(dtype: OnnxDtype, values: ArrayLike<number> | ArrayLike<bigint>): Uint8Array {
  // ONNX raw_data is little-endian, like every machine Node runs on here; typed arrays are native-endian.
  let arr: Float32Array | Int32Array | BigInt64Array | Uint8Array;
  switch (dtype) {
    case 'float32':
      arr = Float32Array.from(values as ArrayLike<number>);
      break;
    case 'int32':
      arr = Int32Array.from(values as ArrayLike<number>);
      break;
    case 'int64':
      arr = BigInt64Array.from(values as ArrayLike<bigint>, (x) => BigInt(x));
      break;
    case 'bool':
      arr = Uint8Array.from(values as ArrayLike<number>, (x) => (x ? 1 : 0));
      break;
    case 'uint8':
      arr = Uint8Array.from(values as ArrayLike<number>);
      break;
  }
  return new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
}
