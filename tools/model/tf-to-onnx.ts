/**
 * Converts a TensorFlow.js graph model (frozen TF GraphDef ops, NHWC) into an ONNX model
 * (opset 17) with a dynamic batch dimension.
 *
 * How batching works: the TF graph was frozen for batch 1, and some of its Reshapes fold
 * that batch of 1 into other dimensions. The converter therefore treats every tensor as
 * "one sample" (its TF shape at batch 1) and keeps N samples side by side in ONNX, in one
 * of two layouts:
 *   - 'axis0':   TF shape [1, d1, d2…] is stored as ONNX [N, d1, d2…] (the usual NHWC case);
 *   - 'stacked': TF shape [d0, d1…]    is stored as ONNX [N, d0, d1…] (after a Reshape that
 *                no longer starts with the batch of 1).
 * Each op is translated so that it acts on every sample independently, which makes a
 * batch of N exactly N runs of the original graph. Constants stay unbatched ('const').
 *
 * NCHW-only ONNX ops (Conv, MaxPool, Resize) are wrapped in Transposes; ONNX Runtime's
 * transpose optimizer cancels the pairs between consecutive layers.
 */
import { OnnxGraphBuilder, type OnnxDtype } from './onnx-builder.js';
import type { LoadedGraphModel, TfAttr, TfNode, Weight, WeightData } from './tfjs-graph.js';
import * as fold from './const-fold.js';

export const ONNX_OPSET = 17;

export class UnsupportedOpError extends Error {
  override readonly name = 'UnsupportedOpError';
  constructor(
    readonly op: string,
    readonly node: string,
    detail?: string,
  ) {
    super(`cannot convert TensorFlow op ${op} (node ${node})${detail ? `: ${detail}` : ': op not supported by the converter'}`);
  }
}

export interface ConvertOptions {
  /** TF input tensor (Placeholder) name → ONNX input name. */
  inputs: Record<string, string>;
  /** TF output tensor name → ONNX output name. Only these (and what they need) are converted. */
  outputs: Record<string, string>;
  /**
   * Inner tensors to cut the graph at and feed instead (TF node name → per-sample TF shape
   * with the batch of 1 first); name them in `inputs` too. Used to skip what the service
   * does itself, e.g. a resize loop in front of the network.
   */
  cutInputs?: Record<string, { shape: number[]; dtype?: OnnxDtype }>;
  /**
   * Extra ONNX nodes after the converted outputs: gets the builder and the ONNX tensor of
   * each requested output (batch first, the TF shape of one sample after it), adds the
   * graph outputs itself and describes them. Without it the requested outputs are the graph's.
   */
  head?: (b: OnnxGraphBuilder, converted: Record<string, { onnx: string; shape: number[] }>, batchDim: string) => ConvertResult['outputs'];
  /** Name of the symbolic batch dimension. */
  batchDim?: string;
  graphName?: string;
  doc?: string;
  metadata?: Record<string, string>;
}

export interface ConvertResult {
  model: Uint8Array;
  /** ONNX node count, TF ops converted (by op type). */
  nodeCount: number;
  ops: Record<string, number>;
  inputs: Array<{ name: string; dtype: OnnxDtype; dims: Array<number | string> }>;
  outputs: Array<{ name: string; dtype: OnnxDtype; dims: Array<number | string> }>;
}

/** The ops this converter understands (the Const/Placeholder/Identity plumbing included). */
export const SUPPORTED_OPS = [
  'Const', 'Placeholder', 'Identity',
  'Conv2D', '_FusedConv2D', 'DepthwiseConv2dNative', 'FusedDepthwiseConv2dNative', 'MaxPool',
  'Relu', 'Relu6', 'Sigmoid', 'Add', 'AddV2', 'Mul', 'Sub', 'RealDiv', 'Maximum', 'Minimum',
  'Equal', 'FloorDiv', 'FloorMod', 'Cast', 'Mean', 'ResizeBilinear', 'ConcatV2', 'Reshape',
  'ExpandDims', 'StridedSlice', 'TopKV2', 'GatherV2',
  'Exp', 'BiasAdd', 'AddN', 'FusedBatchNorm', 'FusedBatchNormV3', 'Squeeze', 'Transpose', 'Pack', 'Unpack', 'Slice',
  'Shape', 'Tile',
] as const;

type Mode = 'const' | 'axis0' | 'stacked';

/** Ops computed at conversion time when all their inputs are constants. */
const FOLDABLE = new Set(['Add', 'AddV2', 'Sub', 'Mul', 'RealDiv', 'ExpandDims', 'Reshape', 'Squeeze', 'Tile', 'Transpose', 'Pack', 'Unpack', 'StridedSlice']);

/** A converted tensor: its TF per-sample shape, where it lives in ONNX, and how it is batched. */
interface Value {
  onnx: string;
  /** TF shape at batch 1 (for 'const': the real shape). */
  shape: number[];
  dtype: OnnxDtype;
  mode: Mode;
  /** Known contents (constants only). */
  data?: WeightData;
  /** TF name, for the initializer name. */
  tfName?: string;
  emitted?: boolean;
}

const NHWC_TO_NCHW = [0, 3, 1, 2];
const NCHW_TO_NHWC = [0, 2, 3, 1];
const INT64_MAX = Number.MAX_SAFE_INTEGER; // ONNX clamps; a safe integer is enough
const INT64_MIN = -Number.MAX_SAFE_INTEGER;

export function convertGraphModel(model: LoadedGraphModel, options: ConvertOptions): ConvertResult {
  return new Converter(model, options).run();
}

class Converter {
  private readonly b = new OnnxGraphBuilder();
  private readonly byName = new Map<string, TfNode>();
  private readonly values = new Map<string, Value[]>();
  private readonly inProgress = new Set<string>();
  private readonly ops: Record<string, number> = {};
  private readonly batchDim: string;

  constructor(
    private readonly model: LoadedGraphModel,
    private readonly options: ConvertOptions,
  ) {
    for (const n of model.nodes) this.byName.set(n.name, n);
    this.batchDim = options.batchDim ?? 'N';
  }

  run(): ConvertResult {
    let outputs: ConvertResult['outputs'] = [];
    const converted: Record<string, { onnx: string; shape: number[] }> = {};
    for (const [tfName, onnxName] of Object.entries(this.options.outputs)) {
      let v = this.tensor(tfName);
      if (v.mode === 'const') throw new Error(`output ${tfName} is a constant; nothing to batch`);
      v = this.toAxis0(v, tfName);
      if (this.options.head) {
        converted[onnxName] = { onnx: v.onnx, shape: v.shape };
        continue;
      }
      this.b.reserve(onnxName);
      this.b.node('Identity', [v.onnx], [onnxName]);
      const dims: Array<number | string> = [this.batchDim, ...v.shape.slice(1)];
      this.b.addOutput(onnxName, v.dtype, dims);
      outputs.push({ name: onnxName, dtype: v.dtype, dims });
    }
    if (this.options.head) outputs = this.options.head(this.b, converted, this.batchDim);
    const inputs: ConvertResult['inputs'] = [];
    for (const [tfName, onnxName] of Object.entries(this.options.inputs)) {
      const v = this.values.get(tfName)?.[0];
      if (!v) throw new Error(`input ${tfName} is not used by the requested outputs`);
      const dims: Array<number | string> = [this.batchDim, ...v.shape.slice(1)];
      this.b.addInput(onnxName, v.dtype, dims);
      inputs.push({ name: onnxName, dtype: v.dtype, dims });
    }
    const bytes = this.b.build({
      opset: ONNX_OPSET,
      producer: 'recognition-service tfjs-to-onnx',
      graphName: this.options.graphName ?? 'converted',
      doc: this.options.doc,
      metadata: this.options.metadata,
    });
    return { model: bytes, nodeCount: this.b.nodeCount, ops: this.ops, inputs, outputs };
  }

  // ---------------------------------------------------------------- graph walking

  /** The value of a TF tensor reference ("node", "node:1"), converting its producer on demand. */
  private tensor(ref: string): Value {
    const [nodeName, idx] = parseRef(ref);
    let vals = this.values.get(nodeName);
    if (!vals) {
      const node = this.byName.get(nodeName);
      if (!node) throw new Error(`the graph has no node ${nodeName}`);
      if (this.inProgress.has(nodeName)) throw new Error(`cycle in the graph at ${nodeName}`);
      this.inProgress.add(nodeName);
      const cut = this.options.cutInputs?.[nodeName];
      vals = cut ? [this.cutInput(node, cut.shape, cut.dtype ?? 'float32')] : (this.fold(node) ?? this.convertNode(node));
      this.inProgress.delete(nodeName);
      this.values.set(nodeName, vals);
      this.ops[node.op] = (this.ops[node.op] ?? 0) + 1;
    }
    const v = vals[idx];
    if (!v) throw new Error(`node ${nodeName} has no output ${idx}`);
    return v;
  }

  private dataInputs(node: TfNode): string[] {
    return (node.input ?? []).filter((i) => !i.startsWith('^'));
  }

  /** The ONNX name of a value, emitting the initializer for a constant on first use. */
  private use(v: Value): string {
    if (v.mode === 'const' && !v.emitted) {
      v.onnx = this.b.addInitializer(v.tfName ?? 'const', v.dtype, v.shape, v.data as ArrayLike<number>);
      v.emitted = true;
    }
    return v.onnx;
  }

  private constValue(node: TfNode, ref: string, what: string): Value {
    const v = this.tensor(ref);
    if (v.mode !== 'const' || !v.data) throw new UnsupportedOpError(node.op, node.name, `${what} must be a constant`);
    return v;
  }

  private constInts(node: TfNode, ref: string, what: string): number[] {
    return Array.from(this.constValue(node, ref, what).data as ArrayLike<number>, Number);
  }

  private convertNode(node: TfNode): Value[] {
    const ins = this.dataInputs(node);
    switch (node.op) {
      case 'Const':
        return [this.constant(node)];
      case 'Placeholder':
        return [this.placeholder(node)];
      case 'Identity':
        return [this.tensor(ins[0])];
      case 'Conv2D':
      case '_FusedConv2D':
      case 'DepthwiseConv2dNative':
      case 'FusedDepthwiseConv2dNative':
        return [this.conv(node, ins)];
      case 'MaxPool':
        return [this.maxPool(node, ins)];
      case 'Relu':
        return [this.unary(node, 'Relu', ins[0])];
      case 'Sigmoid':
        return [this.unary(node, 'Sigmoid', ins[0])];
      case 'Relu6':
        return [this.relu6(node, ins[0])];
      case 'Add':
      case 'AddV2':
        return [this.binary(node, 'Add', ins)];
      case 'Mul':
        return [this.binary(node, 'Mul', ins)];
      case 'Sub':
        return [this.binary(node, 'Sub', ins)];
      case 'RealDiv':
        return [this.binary(node, 'Div', ins)];
      case 'Maximum':
        return [this.binary(node, 'Max', ins)];
      case 'Minimum':
        return [this.binary(node, 'Min', ins)];
      case 'Equal':
        return [this.binary(node, 'Equal', ins)];
      case 'FloorDiv':
        return [this.binary(node, 'FloorDiv', ins)];
      case 'FloorMod':
        return [this.binary(node, 'FloorMod', ins)];
      case 'Cast':
        return [this.cast(node, ins[0])];
      case 'Mean':
        return [this.mean(node, ins)];
      case 'ResizeBilinear':
        return [this.resizeBilinear(node, ins)];
      case 'ConcatV2':
        return [this.concat(node, ins)];
      case 'Reshape':
        return [this.reshape(node, ins)];
      case 'ExpandDims':
        return [this.expandDims(node, ins)];
      case 'StridedSlice':
        return [this.stridedSlice(node, ins)];
      case 'TopKV2':
        return this.topK(node, ins);
      case 'GatherV2':
        return [this.gather(node, ins)];
      case 'Exp':
        return [this.unary(node, 'Exp', ins[0])];
      case 'BiasAdd':
        requireNHWC(node);
        return [this.binary(node, 'Add', ins)];
      case 'AddN':
        return [ins.slice(1).reduce((acc, ref) => this.binaryValues(node, 'Add', acc, this.tensor(ref)), this.tensor(ins[0]))];
      case 'FusedBatchNorm':
      case 'FusedBatchNormV3':
        return [this.batchNorm(node, ins)];
      case 'Squeeze':
        return [this.squeeze(node, ins)];
      case 'Transpose':
        return [this.transpose(node, ins)];
      case 'Pack':
        return [this.pack(node, ins)];
      case 'Unpack':
        return this.unpack(node, ins);
      case 'Slice':
        return [this.sliceOp(node, ins)];
      default:
        throw new UnsupportedOpError(node.op, node.name);
    }
  }

  // ---------------------------------------------------------------- sources

  private constant(node: TfNode): Value {
    const w: Weight | undefined = this.model.weights.get(node.name);
    if (!w) throw new UnsupportedOpError('Const', node.name, 'its value is not in the weight manifest');
    const dtype: OnnxDtype = w.dtype === 'float32' ? 'float32' : w.dtype === 'int32' ? 'int32' : 'bool';
    return { onnx: '', shape: w.shape, dtype, mode: 'const', data: w.data, tfName: node.name };
  }

  private placeholder(node: TfNode): Value {
    const onnxName = this.options.inputs[node.name];
    if (!onnxName) throw new Error(`graph input ${node.name} has no ONNX name in the options`);
    const dims = (node.attr?.shape?.shape?.dim ?? []).map((d) => Number(d.size ?? -1));
    if (dims.length === 0 || (dims[0] !== 1 && dims[0] !== -1) || dims.slice(1).some((d) => !(d > 0))) {
      throw new UnsupportedOpError('Placeholder', node.name, `needs a batch dimension of 1 or -1 and known sizes after it (got [${dims}])`);
    }
    const dtype = tfDtype(node.attr?.dtype?.type, node);
    this.b.reserve(onnxName);
    return { onnx: onnxName, shape: [1, ...dims.slice(1)], dtype, mode: 'axis0' };
  }

  private cutInput(node: TfNode, shape: number[], dtype: OnnxDtype): Value {
    const onnxName = this.options.inputs[node.name];
    if (!onnxName) throw new Error(`cut input ${node.name} has no ONNX name in the options`);
    if (shape[0] !== 1) throw new Error(`cut input ${node.name}: the shape must start with the batch of 1`);
    this.b.reserve(onnxName);
    return { onnx: onnxName, shape, dtype, mode: 'axis0' };
  }

  // ---------------------------------------------------------------- constant folding

  /** Computes the node at conversion time when all it needs is known; undefined otherwise. */
  private fold(node: TfNode): Value[] | undefined {
    const ins = this.dataInputs(node);
    if (node.op === 'Shape') {
      // Per-sample shapes are static: the shape of one sample (batch 1) is a constant.
      const x = this.tensor(ins[0]);
      return [this.folded(node, { shape: [x.shape.length], data: Int32Array.from(x.shape) })];
    }
    if (!FOLDABLE.has(node.op) || ins.length === 0) return undefined;
    const vals = ins.map((i) => this.tensor(i));
    if (vals.some((v) => v.mode !== 'const' || !v.data)) return undefined;
    const c = vals.map((v) => ({ shape: v.shape, data: v.data as WeightData }));
    const ints = (k: number): number[] => Array.from(c[k].data, Number);
    switch (node.op) {
      case 'Add':
      case 'AddV2':
        return [this.folded(node, fold.broadcastBinary(c[0], c[1], (a, b) => a + b))];
      case 'Sub':
        return [this.folded(node, fold.broadcastBinary(c[0], c[1], (a, b) => a - b))];
      case 'Mul':
        return [this.folded(node, fold.broadcastBinary(c[0], c[1], (a, b) => a * b))];
      case 'RealDiv':
        return [this.folded(node, fold.broadcastBinary(c[0], c[1], (a, b) => a / b))];
      case 'ExpandDims': {
        let a = ints(1)[0];
        if (a < 0) a += c[0].shape.length + 1;
        return [this.folded(node, { shape: [...c[0].shape.slice(0, a), 1, ...c[0].shape.slice(a)], data: c[0].data })];
      }
      case 'Reshape':
        return [this.folded(node, { shape: resolveShape(ints(1), size(c[0].shape), node), data: c[0].data })];
      case 'Squeeze':
        return [this.folded(node, { shape: squeezedShape(node, c[0].shape), data: c[0].data })];
      case 'Tile':
        return [this.folded(node, fold.tile(c[0], ints(1)))];
      case 'Transpose':
        return [this.folded(node, fold.transpose(c[0], ints(1)))];
      case 'Pack': {
        const r = c[0].shape.length + 1;
        const a = intAttr(node, 'axis');
        return [this.folded(node, fold.pack(c, a < 0 ? a + r : a))];
      }
      case 'Unpack': {
        const r = c[0].shape.length;
        const a = intAttr(node, 'axis');
        return fold.unpack(c[0], a < 0 ? a + r : a).map((p) => this.folded(node, p));
      }
      case 'StridedSlice': {
        const spec = stridedSliceSpec(c[0].shape, ints(1), ints(2), ints(3), {
          begin: intAttr(node, 'begin_mask'),
          end: intAttr(node, 'end_mask'),
          ellipsis: intAttr(node, 'ellipsis_mask'),
          newAxis: intAttr(node, 'new_axis_mask'),
          shrink: intAttr(node, 'shrink_axis_mask'),
        }, node);
        const starts = spec.dims.map((d, i) => normalizedStart(c[0].shape[i], d.start, d.step));
        const sliced = fold.slice(c[0], starts, spec.dims.map((d) => d.step), spec.dims.map((d) => d.size));
        return [this.folded(node, { shape: spec.outShape, data: sliced.data })];
      }
      default:
        return undefined;
    }
  }

  private folded(node: TfNode, a: fold.ConstArray): Value {
    const dtype: OnnxDtype = a.data instanceof Float32Array ? 'float32' : a.data instanceof Int32Array ? 'int32' : 'bool';
    return { onnx: '', shape: a.shape, dtype, mode: 'const', data: a.data, tfName: node.name };
  }

  // ---------------------------------------------------------------- batch layout helpers

  /** Re-lays a batched value out as 'stacked' with TF rank `r` (leading 1s added). */
  private toStacked(v: Value, r = v.shape.length): Value {
    if (v.mode === 'const') throw new Error('toStacked on a constant');
    const extra = r - v.shape.length;
    const add = v.mode === 'axis0' ? extra + 1 : extra;
    if (add === 0) return v;
    const axes = Array.from({ length: add }, (_, i) => i + 1);
    const [out] = this.b.node('Unsqueeze', [v.onnx, this.b.int64s('axes', axes)], `${v.onnx}/stacked`);
    return { onnx: out, shape: [...new Array<number>(extra).fill(1), ...v.shape], dtype: v.dtype, mode: 'stacked' };
  }

  /** Re-lays a batched value out as 'axis0' (TF shape must start with 1). */
  private toAxis0(v: Value, what: string): Value {
    if (v.mode !== 'stacked') return v;
    if (v.shape[0] !== 1) throw new Error(`${what}: a tensor of TF shape [${v.shape}] has no batch dimension of 1`);
    const [out] = this.b.node('Squeeze', [v.onnx, this.b.int64s('axes', [1])], `${v.onnx}/axis0`);
    return { ...v, onnx: out, mode: 'axis0' };
  }

  /** The ONNX axis for a non-batch TF axis of a value (throws for the batch axis). */
  private axis(node: TfNode, v: Value, tfAxis: number, tfRank = v.shape.length): number {
    const a = tfAxis < 0 ? tfAxis + tfRank : tfAxis;
    if (a < 0 || a >= tfRank) throw new UnsupportedOpError(node.op, node.name, `axis ${tfAxis} out of range for rank ${tfRank}`);
    if (v.mode === 'stacked') return a + 1;
    if (v.mode === 'axis0' && a === 0) throw new UnsupportedOpError(node.op, node.name, 'operating on the batch axis cannot be batched');
    return a;
  }

  /** Emits a per-sample reshape of a batched tensor to TF shape `shape`, choosing the layout. */
  private reshapeBatched(v: Value, shape: number[], base: string): Value {
    const mode: Mode = shape.length > 0 && shape[0] === 1 ? 'axis0' : 'stacked';
    const onnxShape = mode === 'axis0' ? [-1, ...shape.slice(1)] : [-1, ...shape];
    const current = v.mode === 'axis0' ? [-1, ...v.shape.slice(1)] : [-1, ...v.shape];
    if (v.mode === mode && sameShape(current, onnxShape)) return v;
    const [out] = this.b.node('Reshape', [v.onnx, this.b.int64s(`${base}/shape`, onnxShape)], base);
    return { onnx: out, shape, dtype: v.dtype, mode };
  }

  // ---------------------------------------------------------------- element-wise

  private unary(node: TfNode, op: string, ref: string): Value {
    const x = this.tensor(ref);
    constGuard(x, node);
    const [out] = this.b.node(op, [x.onnx], node.name);
    return { ...x, onnx: out };
  }

  private relu6(node: TfNode, ref: string): Value {
    const x = this.tensor(ref);
    constGuard(x, node);
    const [out] = this.b.node('Clip', [x.onnx, this.b.floats('zero', [0], []), this.b.floats('six', [6], [])], node.name);
    return { ...x, onnx: out };
  }

  /** Aligns two operands so ONNX broadcasting gives TF broadcasting per sample. */
  private align(node: TfNode, a: Value, b: Value): { a: Value; b: Value; shape: number[]; mode: Mode } {
    const shape = broadcastShape(a.shape, b.shape, node);
    if (a.mode === 'const' && b.mode === 'const') return { a, b, shape, mode: 'const' };
    const r = shape.length;
    const fits = (batched: Value, other: Value): boolean => {
      if (other.mode === 'const') {
        if (batched.mode === 'stacked') return other.shape.length <= batched.shape.length;
        // axis0: the constant must not reach the batch axis with a size other than 1.
        return other.shape.length < batched.shape.length || (other.shape.length === batched.shape.length && other.shape[0] === 1);
      }
      return batched.mode === other.mode && batched.shape.length === other.shape.length;
    };
    const batchedA = a.mode !== 'const';
    const batchedB = b.mode !== 'const';
    if ((batchedA && fits(a, b)) || (!batchedA && fits(b, a))) {
      return { a, b, shape, mode: batchedA ? a.mode : b.mode };
    }
    return {
      a: batchedA ? this.toStacked(a, r) : a,
      b: batchedB ? this.toStacked(b, r) : b,
      shape,
      mode: 'stacked',
    };
  }

  private binary(node: TfNode, op: string, ins: string[]): Value {
    return this.binaryValues(node, op, this.tensor(ins[0]), this.tensor(ins[1]));
  }

  private binaryValues(node: TfNode, op: string, x: Value, y: Value): Value {
    const al = this.align(node, x, y);
    if (al.mode === 'const') constGuard(al.a, node);
    const a = this.use(al.a);
    const b = this.use(al.b);
    const dtype = al.a.dtype;
    if (al.a.dtype !== al.b.dtype) throw new UnsupportedOpError(node.op, node.name, `mixed dtypes ${al.a.dtype} and ${al.b.dtype}`);
    let out: string;
    if (op === 'FloorDiv') {
      out = dtype === 'float32' ? this.b.node('Floor', this.b.node('Div', [a, b], `${node.name}/div`), node.name)[0] : this.intFloorDiv(a, b, node.name);
    } else if (op === 'FloorMod') {
      out = dtype === 'float32' ? this.floatFloorMod(a, b, node.name) : this.b.node('Mod', [a, b], node.name, { fmod: 0 })[0];
    } else {
      [out] = this.b.node(op, [a, b], node.name);
    }
    return { onnx: out, shape: al.shape, dtype: op === 'Equal' ? 'bool' : dtype, mode: al.mode };
  }

  /** floor(a / b) for integers: (a - mod(a, b)) / b is exact, and ONNX integer Mod (fmod=0) floors like TF. */
  private intFloorDiv(a: string, b: string, name: string): string {
    const [m] = this.b.node('Mod', [a, b], `${name}/mod`, { fmod: 0 });
    const [d] = this.b.node('Sub', [a, m], `${name}/sub`);
    return this.b.node('Div', [d, b], name)[0];
  }

  /** a - floor(a / b) * b, the sign-of-divisor modulo of TF FloorMod for floats. */
  private floatFloorMod(a: string, b: string, name: string): string {
    const [q] = this.b.node('Floor', this.b.node('Div', [a, b], `${name}/div`), `${name}/floor`);
    const [p] = this.b.node('Mul', [q, b], `${name}/mul`);
    return this.b.node('Sub', [a, p], name)[0];
  }

  private cast(node: TfNode, ref: string): Value {
    const x = this.tensor(ref);
    constGuard(x, node);
    const to = tfDtype(node.attr?.DstT?.type, node);
    const [out] = this.b.node('Cast', [x.onnx], node.name, { to: ONNX_TO[to] });
    return { ...x, onnx: out, dtype: to };
  }

  // ---------------------------------------------------------------- convolution and pooling

  private conv(node: TfNode, ins: string[]): Value {
    const x = this.nhwc(node, ins[0]);
    requireNHWC(node);
    const filter = this.constValue(node, ins[1], 'the filter');
    const depthwise = node.op.includes('Depthwise');
    const fused = node.op.startsWith('_Fused') || node.op.startsWith('Fused') ? decodeStrings(node.attr?.fused_ops) : [];
    const [kh, kw, cin, m] = filter.shape;
    if (filter.shape.length !== 4 || cin !== x.shape[3]) {
      throw new UnsupportedOpError(node.op, node.name, `filter shape [${filter.shape}] does not fit input [${x.shape}]`);
    }
    const strides = ints(node.attr?.strides);
    const dilations = node.attr?.dilations ? ints(node.attr.dilations) : [1, 1, 1, 1];
    if (strides[0] !== 1 || strides[3] !== 1 || dilations[0] !== 1 || dilations[3] !== 1) {
      throw new UnsupportedOpError(node.op, node.name, 'strides/dilations on the batch or channel axis');
    }
    const [oh, pt, pb] = padding(node, x.shape[1], kh, strides[1], dilations[1]);
    const [ow, pl, pr] = padding(node, x.shape[2], kw, strides[2], dilations[2]);

    // HWIO → OIHW; depthwise H×W×C×M → (C·M)×1×H×W with group = C.
    const src = filter.data as Float32Array;
    const outC = depthwise ? cin * m : m;
    const w = new Float32Array(src.length);
    for (let h = 0; h < kh; h++)
      for (let ww = 0; ww < kw; ww++)
        for (let c = 0; c < cin; c++)
          for (let o = 0; o < m; o++) {
            const v = src[((h * kw + ww) * cin + c) * m + o];
            if (depthwise) w[((c * m + o) * kh + h) * kw + ww] = v;
            else w[((o * cin + c) * kh + h) * kw + ww] = v;
          }
    const wName = this.b.addInitializer(`${filter.tfName ?? node.name}/onnx`, 'float32', depthwise ? [outC, 1, kh, kw] : [outC, cin, kh, kw], w);

    const convInputs = [this.toNCHW(x.onnx, node.name), wName];
    let activation: string | undefined;
    const fusedArgs = ins.slice(2);
    if (fused.length > 0) {
      if (fused[0] !== 'BiasAdd' || fused.length > 2 || (fused.length === 2 && fused[1] !== 'Relu' && fused[1] !== 'Relu6')) {
        throw new UnsupportedOpError(node.op, node.name, `fused ops [${fused.join(', ')}] (supported: BiasAdd, BiasAdd+Relu, BiasAdd+Relu6)`);
      }
      const bias = this.constValue(node, fusedArgs[0], 'the bias');
      if (bias.shape.length !== 1 || bias.shape[0] !== outC) throw new UnsupportedOpError(node.op, node.name, `bias shape [${bias.shape}], expected [${outC}]`);
      convInputs.push(this.use(bias));
      activation = fused[1];
    }
    const attrs = {
      kernel_shape: [kh, kw],
      strides: [strides[1], strides[2]],
      dilations: [dilations[1], dilations[2]],
      pads: [pt, pl, pb, pr],
      group: depthwise ? cin : 1,
    };
    let [y] = this.b.node('Conv', convInputs, `${node.name}/nchw`, attrs);
    if (activation === 'Relu') [y] = this.b.node('Relu', [y], `${node.name}/relu`);
    if (activation === 'Relu6') [y] = this.b.node('Clip', [y, this.b.floats('zero', [0], []), this.b.floats('six', [6], [])], `${node.name}/relu6`);
    return { onnx: this.toNHWC(y, node.name), shape: [1, oh, ow, outC], dtype: 'float32', mode: 'axis0' };
  }

  private maxPool(node: TfNode, ins: string[]): Value {
    const x = this.nhwc(node, ins[0]);
    requireNHWC(node);
    const k = ints(node.attr?.ksize);
    const s = ints(node.attr?.strides);
    if (k[0] !== 1 || k[3] !== 1 || s[0] !== 1 || s[3] !== 1) throw new UnsupportedOpError(node.op, node.name, 'pooling across batch or channels');
    const [oh, pt, pb] = padding(node, x.shape[1], k[1], s[1], 1);
    const [ow, pl, pr] = padding(node, x.shape[2], k[2], s[2], 1);
    // ONNX MaxPool ignores padded cells, as TF SAME max pooling does.
    const [y] = this.b.node('MaxPool', [this.toNCHW(x.onnx, node.name)], `${node.name}/nchw`, {
      kernel_shape: [k[1], k[2]],
      strides: [s[1], s[2]],
      pads: [pt, pl, pb, pr],
    });
    return { onnx: this.toNHWC(y, node.name), shape: [1, oh, ow, x.shape[3]], dtype: x.dtype, mode: 'axis0' };
  }

  /** The input of an image op: a batched [1, H, W, C] tensor in the 'axis0' layout. */
  private nhwc(node: TfNode, ref: string): Value {
    const x = this.tensor(ref);
    if (x.mode === 'const' || x.shape.length !== 4 || x.shape[0] !== 1) {
      throw new UnsupportedOpError(node.op, node.name, `input must be a batched NHWC tensor (got ${x.mode} [${x.shape}])`);
    }
    return this.toAxis0(x, node.name);
  }

  private toNCHW(x: string, name: string): string {
    return this.b.node('Transpose', [x], `${name}/to_nchw`, { perm: NHWC_TO_NCHW })[0];
  }

  private toNHWC(x: string, name: string): string {
    return this.b.node('Transpose', [x], name, { perm: NCHW_TO_NHWC })[0];
  }

  private resizeBilinear(node: TfNode, ins: string[]): Value {
    const x = this.nhwc(node, ins[0]);
    const size = this.constInts(node, ins[1], 'size');
    const alignCorners = node.attr?.align_corners?.b === true;
    const halfPixel = node.attr?.half_pixel_centers?.b === true;
    if (alignCorners && halfPixel) throw new UnsupportedOpError(node.op, node.name, 'align_corners and half_pixel_centers together');
    // TF's legacy mapping (neither flag) is in = out · in_size / out_size: ONNX 'asymmetric'.
    const mode = alignCorners ? 'align_corners' : halfPixel ? 'half_pixel' : 'asymmetric';
    const xn = this.toNCHW(x.onnx, node.name);
    // Output sizes [N, C, h, w]: N taken from the tensor so the batch stays dynamic.
    const [shape] = this.b.node('Shape', [xn], `${node.name}/shape`, { start: 0, end: 2 });
    const [sizes] = this.b.node('Concat', [shape, this.b.int64s(`${node.name}/hw`, size)], `${node.name}/sizes`, { axis: 0 });
    const [y] = this.b.node('Resize', [xn, '', '', sizes], `${node.name}/nchw`, {
      mode: 'linear',
      coordinate_transformation_mode: mode,
    });
    return { onnx: this.toNHWC(y, node.name), shape: [1, size[0], size[1], x.shape[3]], dtype: x.dtype, mode: 'axis0' };
  }

  // ---------------------------------------------------------------- reductions and shape ops

  private mean(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const keep = node.attr?.keep_dims?.b === true;
    const r = x.shape.length;
    let axes = this.constInts(node, ins[1], 'reduction_indices').map((a) => (a < 0 ? a + r : a));
    // In the 'axis0' layout TF axis 0 has size 1: with keep_dims, reducing it changes nothing.
    if (x.mode === 'axis0' && keep) axes = axes.filter((a) => a !== 0);
    const onnxAxes = axes.map((a) => this.axis(node, x, a));
    const shape = keep ? x.shape.map((d, i) => (axes.includes(i) ? 1 : d)) : x.shape.filter((_, i) => !axes.includes(i));
    const [out] = this.b.node('ReduceMean', [x.onnx], node.name, { axes: onnxAxes, keepdims: keep ? 1 : 0 });
    return { onnx: out, shape, dtype: x.dtype, mode: x.mode };
  }

  private concat(node: TfNode, ins: string[]): Value {
    const axisArg = this.constInts(node, ins[ins.length - 1], 'axis')[0];
    let parts = ins.slice(0, -1).map((i) => this.tensor(i));
    if (parts.some((p) => p.mode === 'const')) {
      parts.forEach((p) => constGuard(p, node));
    }
    const r = parts[0].shape.length;
    if (parts.some((p) => p.shape.length !== r)) throw new UnsupportedOpError(node.op, node.name, 'inputs of different ranks');
    if (!parts.every((p) => p.mode === 'axis0')) parts = parts.map((p) => this.toStacked(p));
    const a = axisArg < 0 ? axisArg + r : axisArg;
    const onnxAxis = this.axis(node, parts[0], a);
    const shape = parts[0].shape.map((d, i) => (i === a ? parts.reduce((s, p) => s + p.shape[i], 0) : d));
    const [out] = this.b.node('Concat', parts.map((p) => p.onnx), node.name, { axis: onnxAxis });
    return { onnx: out, shape, dtype: parts[0].dtype, mode: parts[0].mode };
  }

  private reshape(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const target = resolveShape(this.constInts(node, ins[1], 'shape'), size(x.shape), node);
    // The graph was frozen at batch 1: reshape each sample, whatever the target says about batch.
    return this.reshapeBatched(x, target, node.name);
  }

  private expandDims(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const r = x.shape.length;
    let a = this.constInts(node, ins[1], 'dim')[0];
    if (a < 0) a += r + 1;
    if (a < 0 || a > r) throw new UnsupportedOpError(node.op, node.name, `dim out of range for rank ${r}`);
    const shape = [...x.shape.slice(0, a), 1, ...x.shape.slice(a)];
    // 'axis0': TF [1, d…] is ONNX [N, d…]; a new axis at 0 or 1 both land at ONNX axis 1.
    const onnxAxis = x.mode === 'stacked' ? a + 1 : Math.max(a, 1);
    const [out] = this.b.node('Unsqueeze', [x.onnx, this.b.int64s('axes', [onnxAxis])], node.name);
    return { onnx: out, shape, dtype: x.dtype, mode: x.mode };
  }

  private stridedSlice(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const begin = this.constInts(node, ins[1], 'begin');
    const end = this.constInts(node, ins[2], 'end');
    const strides = this.constInts(node, ins[3], 'strides');
    const spec = stridedSliceSpec(x.shape, begin, end, strides, {
      begin: intAttr(node, 'begin_mask'),
      end: intAttr(node, 'end_mask'),
      ellipsis: intAttr(node, 'ellipsis_mask'),
      newAxis: intAttr(node, 'new_axis_mask'),
      shrink: intAttr(node, 'shrink_axis_mask'),
    }, node);
    const starts: number[] = [];
    const ends: number[] = [];
    const axes: number[] = [];
    const steps: number[] = [];
    spec.dims.forEach((d, i) => {
      if (d.full) return;
      if (x.mode === 'axis0' && i === 0) {
        // The batch axis: each sample's TF size is 1, the slice must keep that one element.
        if (d.size !== 1) throw new UnsupportedOpError(node.op, node.name, 'slicing the batch axis cannot be batched');
        return;
      }
      starts.push(d.start);
      ends.push(d.end);
      axes.push(x.mode === 'stacked' ? i + 1 : i);
      steps.push(d.step);
    });
    let v: Value = x;
    const sliced = spec.dims.map((d) => d.size);
    if (axes.length > 0) {
      const [out] = this.b.node(
        'Slice',
        [x.onnx, this.b.int64s(`${node.name}/starts`, starts), this.b.int64s(`${node.name}/ends`, ends), this.b.int64s(`${node.name}/axes`, axes), this.b.int64s(`${node.name}/steps`, steps)],
        `${node.name}/slice`,
      );
      v = { onnx: out, shape: sliced, dtype: x.dtype, mode: x.mode };
    }
    // Shrunk and new axes only change the shape: one reshape per sample.
    return this.reshapeBatched(v, spec.outShape, node.name);
  }

  /** Inference-mode batch norm folded into one scale and one shift per channel. */
  private batchNorm(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    if (node.attr?.is_training?.b === true) throw new UnsupportedOpError(node.op, node.name, 'training mode');
    const [scale, offset, mean, variance] = [1, 2, 3, 4].map((k) => this.constValue(node, ins[k], 'the batch-norm parameters').data as Float32Array);
    const eps = node.attr?.epsilon?.f ?? 1e-3;
    const c = scale.length;
    if (x.shape[x.shape.length - 1] !== c) throw new UnsupportedOpError(node.op, node.name, `[${x.shape}] has not ${c} channels last`);
    const mul = new Float32Array(c);
    const add = new Float32Array(c);
    for (let i = 0; i < c; i++) {
      mul[i] = scale[i] / Math.sqrt(variance[i] + eps);
      add[i] = offset[i] - mean[i] * mul[i];
    }
    const [m] = this.b.node('Mul', [x.onnx, this.b.floats(`${node.name}/scale`, Array.from(mul))], `${node.name}/mul`);
    const [y] = this.b.node('Add', [m, this.b.floats(`${node.name}/shift`, Array.from(add))], node.name);
    return { ...x, onnx: y };
  }

  private squeeze(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    return this.reshapeBatched(x, squeezedShape(node, x.shape), node.name);
  }

  private transpose(node: TfNode, ins: string[]): Value {
    let x = this.tensor(ins[0]);
    constGuard(x, node);
    const perm = this.constInts(node, ins[1], 'perm').map((p) => (p < 0 ? p + x.shape.length : p));
    const shape = perm.map((p) => x.shape[p]);
    if (x.mode === 'axis0' && perm[0] !== 0) x = this.toStacked(x);
    const onnxPerm = x.mode === 'stacked' ? [0, ...perm.map((p) => p + 1)] : perm;
    const [out] = this.b.node('Transpose', [x.onnx], node.name, { perm: onnxPerm });
    return { onnx: out, shape, dtype: x.dtype, mode: x.mode };
  }

  private pack(node: TfNode, ins: string[]): Value {
    const parts = ins.map((i) => this.tensor(i));
    parts.forEach((p) => constGuard(p, node));
    const inner = parts[0].shape;
    if (parts.some((p) => !sameShape(p.shape, inner))) throw new UnsupportedOpError(node.op, node.name, 'inputs of different shapes');
    const r = inner.length + 1;
    let a = intAttr(node, 'axis');
    if (a < 0) a += r;
    const one = [...inner.slice(0, a), 1, ...inner.slice(a)];
    let expanded = parts.map((p, k) => this.reshapeBatched(p, one, `${node.name}/in${k}`));
    // Packing along axis 0 makes a new leading axis of the sample: that needs the stacked layout.
    if (a === 0 || !expanded.every((p) => p.mode === 'axis0')) expanded = expanded.map((p) => this.toStacked(p));
    const onnxAxis = this.axis(node, expanded[0], a);
    const [out] = this.b.node('Concat', expanded.map((p) => p.onnx), node.name, { axis: onnxAxis });
    return { onnx: out, shape: [...inner.slice(0, a), parts.length, ...inner.slice(a)], dtype: parts[0].dtype, mode: expanded[0].mode };
  }

  private unpack(node: TfNode, ins: string[]): Value[] {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const r = x.shape.length;
    let a = intAttr(node, 'axis');
    if (a < 0) a += r;
    const onnxAxis = this.axis(node, x, a);
    const outShape = x.shape.filter((_, i) => i !== a);
    return Array.from({ length: x.shape[a] }, (_, k) => {
      const [s] = this.b.node(
        'Slice',
        [x.onnx, this.b.int64s(`${node.name}/starts`, [k]), this.b.int64s(`${node.name}/ends`, [k + 1]), this.b.int64s(`${node.name}/axes`, [onnxAxis])],
        `${node.name}/slice${k}`,
      );
      const sliced: Value = { onnx: s, shape: x.shape.map((d, i) => (i === a ? 1 : d)), dtype: x.dtype, mode: x.mode };
      return this.reshapeBatched(sliced, outShape, `${node.name}:${k}`);
    });
  }

  /** TF Slice (begin, size; size -1 = to the end). */
  private sliceOp(node: TfNode, ins: string[]): Value {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const begin = this.constInts(node, ins[1], 'begin');
    const sizes = this.constInts(node, ins[2], 'size').map((n, i) => (n === -1 ? x.shape[i] - begin[i] : n));
    const starts: number[] = [];
    const ends: number[] = [];
    const axes: number[] = [];
    x.shape.forEach((d, i) => {
      if (begin[i] === 0 && sizes[i] === d) return;
      if (x.mode === 'axis0' && i === 0) throw new UnsupportedOpError(node.op, node.name, 'slicing the batch axis cannot be batched');
      starts.push(begin[i]);
      ends.push(begin[i] + sizes[i]);
      axes.push(x.mode === 'stacked' ? i + 1 : i);
    });
    if (axes.length === 0) return { ...x, shape: sizes };
    const [out] = this.b.node(
      'Slice',
      [x.onnx, this.b.int64s(`${node.name}/starts`, starts), this.b.int64s(`${node.name}/ends`, ends), this.b.int64s(`${node.name}/axes`, axes)],
      node.name,
    );
    return { onnx: out, shape: sizes, dtype: x.dtype, mode: x.mode };
  }

  private topK(node: TfNode, ins: string[]): Value[] {
    const x = this.tensor(ins[0]);
    constGuard(x, node);
    const k = this.constInts(node, ins[1], 'k')[0];
    const r = x.shape.length;
    const onnxAxis = this.axis(node, x, r - 1);
    if (k > x.shape[r - 1]) throw new UnsupportedOpError(node.op, node.name, `k=${k} exceeds the axis size ${x.shape[r - 1]}`);
    // sorted=false leaves TF's order unspecified, so sorted output is right either way.
    // ONNX TopK breaks ties by the lower index first, as TF does.
    const [values, indices64] = this.b.node('TopK', [x.onnx, this.b.int64s(`${node.name}/k`, [k])], node.name, { axis: onnxAxis, largest: 1, sorted: 1 }, 2);
    const indexType = node.attr?.index_type?.type ? tfDtype(node.attr.index_type.type, node) : 'int32';
    const [indices] = indexType === 'int64' ? [indices64] : this.b.node('Cast', [indices64], `${node.name}:1`, { to: ONNX_TO[indexType] });
    const shape = [...x.shape.slice(0, -1), k];
    return [
      { onnx: values, shape, dtype: x.dtype, mode: x.mode },
      { onnx: indices, shape, dtype: indexType, mode: x.mode },
    ];
  }

  private gather(node: TfNode, ins: string[]): Value {
    const params = this.tensor(ins[0]);
    const indices = this.tensor(ins[1]);
    const batchDims = intAttr(node, 'batch_dims');
    if (batchDims !== 0) throw new UnsupportedOpError(node.op, node.name, `batch_dims=${batchDims}`);
    const pr = params.shape.length;
    let a = this.constInts(node, ins[2], 'axis')[0];
    if (a < 0) a += pr;
    if (a < 0 || a >= pr) throw new UnsupportedOpError(node.op, node.name, `axis out of range for rank ${pr}`);
    const shape = [...params.shape.slice(0, a), ...indices.shape, ...params.shape.slice(a + 1)];

    if (indices.mode === 'const') {
      constGuard(params, node);
      const [out] = this.b.node('Gather', [params.onnx, this.use(indices)], node.name, { axis: this.axis(node, params, a) });
      return { onnx: out, shape, dtype: params.dtype, mode: params.mode };
    }
    if (params.mode === 'const') {
      // Constant table, batched indices: ONNX puts the index dims (batch first) at `a`.
      if (a !== 0) throw new UnsupportedOpError(node.op, node.name, 'batched indices into a constant need axis 0');
      const [out] = this.b.node('Gather', [this.use(params), indices.onnx], node.name, { axis: 0 });
      return { onnx: out, shape, dtype: params.dtype, mode: indices.mode };
    }
    // Both batched: each sample gathers from its own params, i.e. GatherND with batch_dims=1.
    if (a !== 0) throw new UnsupportedOpError(node.op, node.name, 'per-sample gather only along axis 0');
    const p = this.toStacked(params);
    const i = this.toStacked(indices);
    const [i64] = this.b.node('Cast', [i.onnx], `${node.name}/indices64`, { to: ONNX_TO.int64 });
    const [iNd] = this.b.node('Unsqueeze', [i64, this.b.int64s('axes', [i.shape.length + 1])], `${node.name}/indices_nd`);
    const [out] = this.b.node('GatherND', [p.onnx, iNd], node.name, { batch_dims: 1 });
    return { onnx: out, shape, dtype: params.dtype, mode: 'stacked' };
  }
}

// ---------------------------------------------------------------- helpers

const ONNX_TO: Record<OnnxDtype, number> = { float32: 1, int32: 6, int64: 7, bool: 9, uint8: 2 };

function parseRef(ref: string): [string, number] {
  const m = /^(.*):(\d+)$/.exec(ref);
  return m ? [m[1], Number(m[2])] : [ref, 0];
}

function tfDtype(t: string | undefined, node: TfNode): OnnxDtype {
  switch (t) {
    case 'DT_FLOAT':
      return 'float32';
    case 'DT_INT32':
      return 'int32';
    case 'DT_INT64':
      return 'int64';
    case 'DT_BOOL':
      return 'bool';
    default:
      throw new UnsupportedOpError(node.op, node.name, `dtype ${t ?? '(none)'}`);
  }
}

/** Ops on constants only are not folded by this converter: say so rather than mis-batch. */
function constGuard(x: Value, node: TfNode): void {
  if (x.mode === 'const') throw new UnsupportedOpError(node.op, node.name, 'constant input (constant folding is not supported)');
}


function requireNHWC(node: TfNode): void {
  const f = node.attr?.data_format?.s;
  if (f !== undefined && Buffer.from(f, 'base64').toString() !== 'NHWC') {
    throw new UnsupportedOpError(node.op, node.name, `data_format ${Buffer.from(f, 'base64').toString()} (only NHWC)`);
  }
}

function decodeStrings(a: TfAttr | undefined): string[] {
  return (a?.list?.s ?? []).map((s) => Buffer.from(s, 'base64').toString('utf8'));
}

function ints(a: TfAttr | undefined): number[] {
  return (a?.list?.i ?? []).map(Number);
}

function intAttr(node: TfNode, name: string): number {
  return Number(node.attr?.[name]?.i ?? 0);
}

/** Output size and [before, after] padding of one spatial axis, TF rules. */
function padding(node: TfNode, inSize: number, k: number, stride: number, dilation: number): [number, number, number] {
  const mode = node.attr?.padding?.s ? Buffer.from(node.attr.padding.s, 'base64').toString() : 'VALID';
  const ek = (k - 1) * dilation + 1;
  if (mode === 'VALID') return [Math.floor((inSize - ek) / stride) + 1, 0, 0];
  if (mode === 'SAME') {
    // TF SAME puts the odd extra pixel after (ONNX SAME_UPPER); written out as explicit pads.
    const out = Math.ceil(inSize / stride);
    const total = Math.max((out - 1) * stride + ek - inSize, 0);
    return [out, Math.floor(total / 2), total - Math.floor(total / 2)];
  }
  throw new UnsupportedOpError(node.op, node.name, `padding ${mode}`);
}

function size(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function sameShape(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function resolveShape(target: number[], count: number, node: TfNode): number[] {
  const unknown = target.filter((d) => d === -1).length;
  if (unknown > 1) throw new UnsupportedOpError(node.op, node.name, 'more than one -1 in the shape');
  const known = target.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  const shape = target.map((d) => (d === -1 ? count / known : d));
  if (size(shape) !== count || shape.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new UnsupportedOpError(node.op, node.name, `cannot reshape ${count} elements to [${target}]`);
  }
  return shape;
}

function broadcastShape(a: number[], b: number[], node: TfNode): number[] {
  const r = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < r; i++) {
    const x = a[a.length - r + i] ?? 1;
    const y = b[b.length - r + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new UnsupportedOpError(node.op, node.name, `shapes [${a}] and [${b}] do not broadcast`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

interface SliceDim {
  full: boolean;
  start: number;
  end: number;
  step: number;
  size: number;
}

/**
 * TF StridedSlice semantics on a static shape: expands the ellipsis, applies the begin/end
 * masks, and records shrunk and new axes. Returns one slice per input axis and the final shape.
 */
export function stridedSliceSpec(
  shape: number[],
  begin: number[],
  end: number[],
  strides: number[],
  masks: { begin: number; end: number; ellipsis: number; newAxis: number; shrink: number },
  node: TfNode,
): { dims: SliceDim[]; outShape: number[] } {
  const n = begin.length;
  if (end.length !== n || strides.length !== n) throw new UnsupportedOpError(node.op, node.name, 'begin, end and strides differ in length');
  const bit = (m: number, i: number): boolean => ((m >> i) & 1) === 1;
  const ellipses = Array.from({ length: n }, (_, i) => i).filter((i) => bit(masks.ellipsis, i));
  if (ellipses.length > 1) throw new UnsupportedOpError(node.op, node.name, 'more than one ellipsis');
  // Spec entries that consume an input axis (not ellipsis, not new axis).
  const consuming = Array.from({ length: n }, (_, i) => i).filter((i) => !bit(masks.ellipsis, i) && !bit(masks.newAxis, i)).length;
  const r = shape.length;
  if (consuming > r) throw new UnsupportedOpError(node.op, node.name, `slice spec of ${consuming} axes on rank ${r}`);
  const ellipsisSpan = r - consuming;

  const dims: SliceDim[] = [];
  const outShape: number[] = [];
  const full = (d: number): SliceDim => ({ full: true, start: 0, end: d, step: 1, size: d });
  let axis = 0;
  for (let i = 0; i < n; i++) {
    if (bit(masks.ellipsis, i)) {
      for (let k = 0; k < ellipsisSpan; k++, axis++) {
        dims.push(full(shape[axis]));
        outShape.push(shape[axis]);
      }
      continue;
    }
    if (bit(masks.newAxis, i)) {
      outShape.push(1);
      continue;
    }
    const d = shape[axis++];
    const step = strides[i];
    if (step === 0) throw new UnsupportedOpError(node.op, node.name, 'stride 0');
    if (bit(masks.shrink, i)) {
      let idx = begin[i];
      if (idx < 0) idx += d;
      if (idx < 0 || idx >= d) throw new UnsupportedOpError(node.op, node.name, `index ${begin[i]} out of range for size ${d}`);
      dims.push({ full: d === 1, start: idx, end: idx + 1, step: 1, size: 1 });
      continue; // the axis is removed from the output
    }
    const s = bit(masks.begin, i) ? (step > 0 ? 0 : INT64_MAX) : begin[i];
    const e = bit(masks.end, i) ? (step > 0 ? INT64_MAX : INT64_MIN) : end[i];
    const len = sliceLength(d, s, e, step);
    dims.push({ full: len === d && step === 1, start: s, end: e, step, size: len });
    outShape.push(len);
  }
  // Axes after the spec (no ellipsis given) are kept whole.
  for (; axis < r; axis++) {
    dims.push(full(shape[axis]));
    outShape.push(shape[axis]);
  }
  return { dims, outShape };
}

/** The first index a slice reads, after negative wrap and clamping. */
function normalizedStart(d: number, start: number, step: number): number {
  const s = start < 0 ? start + d : start;
  return step > 0 ? Math.min(Math.max(s, 0), d) : Math.min(Math.max(s, -1), d - 1);
}

/** TF Squeeze: drops the listed size-1 axes, or all of them when none are listed. */
function squeezedShape(node: TfNode, shape: number[]): number[] {
  const r = shape.length;
  const dims = ints(node.attr?.squeeze_dims).map((a) => (a < 0 ? a + r : a));
  if (dims.some((a) => shape[a] !== 1)) throw new UnsupportedOpError(node.op, node.name, `squeezing axes [${dims}] of [${shape}]`);
  return shape.filter((d, i) => !(d === 1 && (dims.length === 0 || dims.includes(i))));
}

/** Python/ONNX slice length with clamping (the semantics ONNX Slice and TF share). */
function sliceLength(d: number, start: number, end: number, step: number): number {
  const clamp = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), hi);
  let s = start < 0 ? start + d : start;
  let e = end < 0 ? end + d : end;
  if (step > 0) {
    s = clamp(s, 0, d);
    e = clamp(e, 0, d);
    return e > s ? Math.ceil((e - s) / step) : 0;
  }
  s = clamp(s, -1, d - 1);
  e = clamp(e, -1, d - 1);
  return s > e ? Math.ceil((s - e) / -step) : 0;
}
