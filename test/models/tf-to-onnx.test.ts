/**
 * The converter, op by op: small graphs in the shipped model's format are run by TF.js
 * (the reference) and, converted, by ONNX Runtime; a batch of 2 must equal two runs of 1.
 * Also: every op of the shipped graph is covered, and an unknown op fails naming itself.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import { centernetSourceFiles } from '../../tools/model/centernet.js';
import { convertGraphModel, SUPPORTED_OPS, UnsupportedOpError, stridedSliceSpec } from '../../tools/model/tf-to-onnx.js';
import { halfToFloat, loadGraphModel } from '../../tools/model/tfjs-graph.js';
import { GraphFixture, attr, floatToHalf, values } from './graph-fixture.js';
import { loadTfjsModel, runTfjs } from './tfjs-runner.js';

const NHWC = attr.str('NHWC');

/** Converts, then compares ORT (batch 1 and batch 2) with TF.js on two random samples. */
async function checkAgainstTfjs(g: GraphFixture, input: string, shape: number[], outputs: string[], tolerance = 1e-4): Promise<void> {
  const jsonPath = await g.write();
  const converted = convertGraphModel(await loadGraphModel(jsonPath), {
    inputs: { [input]: 'x' },
    outputs: Object.fromEntries(outputs.map((o, i) => [o, `y${i}`])),
  });
  const session = await ort.InferenceSession.create(converted.model);
  const tfModel = await loadTfjsModel(jsonPath);
  const per = shape.slice(1).reduce((a, b) => a * b, 1);
  const samples = [Float32Array.from(values(per, 7, -4, 4)), Float32Array.from(values(per, 99, -4, 4))];

  const refs = await Promise.all(samples.map((s) => runTfjs(tfModel, input, { data: s, shape }, outputs)));
  const batch = new Float32Array(per * 2);
  batch.set(samples[0]);
  batch.set(samples[1], per);
  const one = await session.run({ x: new ort.Tensor('float32', samples[0], shape) });
  const two = await session.run({ x: new ort.Tensor('float32', batch, [2, ...shape.slice(1)]) });

  outputs.forEach((name, i) => {
    const ref0 = refs[0][i];
    const got1 = one[`y${i}`];
    assert.deepEqual(got1.dims, ref0.shape, `${name}: shape`);
    assertClose(got1.data as ArrayLike<number>, ref0.data, tolerance, `${name} (batch 1)`);
    const got2 = two[`y${i}`];
    assert.deepEqual(got2.dims, [2, ...ref0.shape.slice(1)], `${name}: batch-2 shape`);
    const n = ref0.data.length;
    const data = got2.data as ArrayLike<number> & { subarray?: unknown };
    assertClose(Array.from(data as ArrayLike<number>).slice(0, n), ref0.data, tolerance, `${name} (batch 2, sample 0)`);
    assertClose(Array.from(data as ArrayLike<number>).slice(n), refs[1][i].data, tolerance, `${name} (batch 2, sample 1)`);
  });
}

function assertClose(got: ArrayLike<number | boolean | bigint>, want: ArrayLike<number>, tolerance: number, what: string): void {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(Number(got[i]) - Number(want[i]));
    if (!(d <= tolerance)) assert.fail(`${what}: element ${i} is ${Number(got[i])}, TF.js says ${want[i]}`);
  }
}

describe('TF.js graph → ONNX converter', () => {
  test('convolutions, pooling, resizing and element-wise ops match TF.js', { timeout: 120_000 }, async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 10, 10, 4]);
    // Stride 2 on an even size: TF SAME puts the odd padding pixel after (SAME_UPPER).
    const c1 = g.op('c1', '_FusedConv2D', [x, g.const('w1', [3, 3, 4, 6], values(216, 1, -0.5, 0.5), 'float32', true), g.const('b1', [6], values(6, 2), 'float32', true)], {
      strides: attr.ints([1, 2, 2, 1]), padding: attr.str('SAME'), data_format: NHWC, dilations: attr.ints([1, 1, 1, 1]), fused_ops: attr.strs(['BiasAdd', 'Relu']), num_args: attr.int(1), epsilon: attr.float(0),
    });
    const d1 = g.op('d1', 'DepthwiseConv2dNative', [c1, g.const('dw1', [3, 3, 6, 2], values(108, 3, -0.5, 0.5))], {
      strides: attr.ints([1, 1, 1, 1]), padding: attr.str('SAME'), data_format: NHWC, dilations: attr.ints([1, 1, 1, 1]),
    });
    const d2 = g.op('d2', 'FusedDepthwiseConv2dNative', [d1, g.const('dw2', [3, 3, 12, 1], values(108, 4, -0.5, 0.5)), g.const('bd2', [12], values(12, 5))], {
      strides: attr.ints([1, 1, 1, 1]), padding: attr.str('VALID'), data_format: NHWC, dilations: attr.ints([1, 1, 1, 1]), fused_ops: attr.strs(['BiasAdd', 'Relu']), num_args: attr.int(1),
    });
    const c3 = g.op('c3', 'Conv2D', [d2, g.const('w3', [1, 1, 12, 8], values(96, 6))], {
      strides: attr.ints([1, 1, 1, 1]), padding: attr.str('SAME'), data_format: NHWC, dilations: attr.ints([1, 1, 1, 1]),
    });
    const r6 = g.op('r6', 'Relu6', [g.op('m8', 'Mul', [g.const('k8', [], [8]), c3])]);
    const mean = g.op('mean', 'Mean', [r6, g.const('axes', [2], [1, 2], 'int32')], { keep_dims: attr.bool(true) });
    const se = g.op('se', 'Mul', [r6, g.op('sig', 'Sigmoid', [mean])]);
    const mp = g.op('mp', 'MaxPool', [se], { ksize: attr.ints([1, 3, 3, 1]), strides: attr.ints([1, 2, 2, 1]), padding: attr.str('SAME'), data_format: NHWC });
    // 2 → 5 is not an integer scale: the output size must still be exact.
    const rz = g.op('rz', 'ResizeBilinear', [mp, g.const('size', [2], [5, 5], 'int32')], { align_corners: attr.bool(false), half_pixel_centers: attr.bool(false) });
    const cat = g.op('cat', 'ConcatV2', [c1, rz, g.const('axis', [], [3], 'int32')], { N: attr.int(2) });
    const sub = g.op('sub', 'Sub', [g.op('add', 'Add', [cat, g.const('bias', [14], values(14, 8))]), g.const('half', [], [0.5])]);
    const out = g.op('out', 'Relu', [sub]);
    const up = g.op('up', 'ResizeBilinear', [c1, g.const('size2', [2], [10, 10], 'int32')], { align_corners: attr.bool(false), half_pixel_centers: attr.bool(false) });
    await checkAgainstTfjs(g, x, [1, 10, 10, 4], [out, mp, up]);
  });

  test('peak picking, top-k, integer arithmetic, gather and strided slices match TF.js', { timeout: 120_000 }, async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 4, 4, 6]);
    const sg = g.op('sg', 'Sigmoid', [x]);
    const mp = g.op('mp', 'MaxPool', [sg], { ksize: attr.ints([1, 3, 3, 1]), strides: attr.ints([1, 1, 1, 1]), padding: attr.str('SAME'), data_format: NHWC });
    const peaks = g.op('peaks', 'Mul', [sg, g.op('cast', 'Cast', [g.op('eq', 'Equal', [sg, mp])], { SrcT: attr.type('DT_BOOL'), DstT: attr.type('DT_FLOAT') })]);
    const flat = g.op('flat', 'Reshape', [peaks, g.const('flat/shape', [2], [1, -1], 'int32')]);
    const topk = g.op('topk', 'TopKV2', [flat, g.const('k', [], [7], 'int32')], { sorted: attr.bool(true) });
    const six = g.const('six', [], [6], 'int32');
    const four = g.const('four', [], [4], 'int32');
    const pos = g.op('pos', 'FloorDiv', [`${topk}:1`, six]);
    const cls = g.op('cls', 'FloorMod', [`${topk}:1`, six]);
    const row = g.op('row', 'FloorDiv', [pos, four]);
    const col = g.op('col', 'FloorMod', [pos, four]);
    const back = g.op('back', 'Add', [g.op('rowx4', 'Mul', [row, four]), col]);
    // Per-sample gather through reshapes that fold the batch of 1 away, like the shipped model.
    const table = g.op('table', 'Reshape', [x, g.const('table/shape', [2], [16, 6], 'int32')]);
    const idx = g.op('idx', 'Reshape', [back, g.const('idx/shape', [1], [-1], 'int32')]);
    const rows = g.op('rows', 'Reshape', [g.op('gather', 'GatherV2', [table, idx, g.const('gaxis', [], [0], 'int32')], { batch_dims: attr.int(0) }), g.const('rows/shape', [3], [1, 7, 6], 'int32')]);
    const ss = (name: string, b: number[], e: number[], s: number[], m: Partial<Record<'begin_mask' | 'end_mask' | 'ellipsis_mask' | 'new_axis_mask' | 'shrink_axis_mask', number>>) =>
      g.op(name, 'StridedSlice', [rows, g.const(`${name}/b`, [b.length], b, 'int32'), g.const(`${name}/e`, [e.length], e, 'int32'), g.const(`${name}/s`, [s.length], s, 'int32')], {
        begin_mask: attr.int(m.begin_mask ?? 0), end_mask: attr.int(m.end_mask ?? 0), ellipsis_mask: attr.int(m.ellipsis_mask ?? 0),
        new_axis_mask: attr.int(m.new_axis_mask ?? 0), shrink_axis_mask: attr.int(m.shrink_axis_mask ?? 0),
      });
    const s1 = ss('s1', [0, 0, 2], [0, 0, 3], [1, 1, 1], { begin_mask: 3, end_mask: 3 }); // [:, :, 2:3]
    const s2 = ss('s2', [0, 0, 1], [0, 0, 2], [1, 1, 1], { begin_mask: 3, end_mask: 3, shrink_axis_mask: 4 }); // [:, :, 1]
    const s3 = ss('s3', [0, 1], [0, 5], [1, 2], { ellipsis_mask: 1 }); // [..., 1:5:2]
    const s4 = ss('s4', [0, 0, 0], [0, 0, 0], [1, -1, 1], { begin_mask: 7, end_mask: 7 }); // [:, ::-1, :]
    const s5 = ss('s5', [0, 0, 2], [0, 0, 4], [1, 1, 1], { begin_mask: 1, end_mask: 1, new_axis_mask: 2 }); // [:, newaxis, 2:4]
    const s6 = ss('s6', [0, -3], [0, -1], [1, 1], { begin_mask: 1, end_mask: 1 }); // [:, -3:-1]
    const clsF = g.op('clsF', 'Cast', [g.op('clsE', 'ExpandDims', [cls, g.const('dim', [], [-1], 'int32')])], { SrcT: attr.type('DT_INT32'), DstT: attr.type('DT_FLOAT') });
    const score = g.op('score', 'ExpandDims', [topk, g.const('dim2', [], [-1], 'int32')]);
    const det = g.op('det', 'ConcatV2', [s1, score, clsF, g.const('cax', [], [-1], 'int32')], { N: attr.int(3) });
    const rowF = g.op('rowF', 'Cast', [row], { SrcT: attr.type('DT_INT32'), DstT: attr.type('DT_FLOAT') });
    await checkAgainstTfjs(g, x, [1, 4, 4, 6], [det, s2, s3, s4, s5, s6, pos, rowF]);
  });

  test('tensors whose batch of 1 was folded away still batch per sample', { timeout: 120_000 }, async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 4, 3]);
    const folded = g.op('folded', 'Reshape', [x, g.const('folded/shape', [2], [4, 3], 'int32')]); // no batch axis left
    const mixed = g.op('mixed', 'Add', [x, folded]); // [1,4,3] + [4,3]
    const wide = g.op('wide', 'Mul', [mixed, g.const('rows', [2, 1, 1], [1, -2])]); // broadcasts to [2,4,3]
    const out1 = g.op('out1', 'Reshape', [wide, g.const('out1/shape', [2], [1, -1], 'int32')]);
    const front = g.op('front', 'ExpandDims', [x, g.const('d0', [], [0], 'int32')]); // [1,1,4,3]
    const mean = g.op('mean', 'Mean', [front, g.const('last', [1], [-1], 'int32')], { keep_dims: attr.bool(false) }); // [1,1,4]
    const picked = g.op('picked', 'GatherV2', [x, g.const('cols', [2], [2, 0], 'int32'), g.const('ax2', [], [2], 'int32')], { batch_dims: attr.int(0) }); // [1,4,2]
    const codes = g.op('codes', 'Cast', [g.op('pos', 'Reshape', [g.op('ge', 'Equal', [x, x]), g.const('pos/shape', [1], [-1], 'int32')])], { SrcT: attr.type('DT_BOOL'), DstT: attr.type('DT_INT32') }); // [12] of 1s
    const looked = g.op('looked', 'GatherV2', [g.const('table', [2, 2], [10, 20, 30, 40]), codes, g.const('ax0', [], [0], 'int32')], { batch_dims: attr.int(0) }); // [12,2]
    const out2 = g.op('out2', 'ConcatV2', [folded, g.op('sq', 'Reshape', [picked, g.const('sq/shape', [2], [4, 2], 'int32')]), g.const('cax', [], [1], 'int32')], { N: attr.int(2) }); // [4,5]
    const out3 = g.op('out3', 'Reshape', [looked, g.const('out3/shape', [3], [1, 12, 2], 'int32')]);
    const out4 = g.op('out4', 'Reshape', [out2, g.const('out4/shape', [3], [1, 4, 5], 'int32')]);
    await checkAgainstTfjs(g, x, [1, 4, 3], [out1, mean, out3, out4]);
  });

  test('every op of the shipped CenterNet graph is supported', async () => {
    const graph = await loadGraphModel(centernetSourceFiles().json);
    const ops = new Set(graph.nodes.map((n) => n.op));
    for (const op of ops) assert.ok((SUPPORTED_OPS as readonly string[]).includes(op), `${op} is not supported`);
    assert.ok(ops.has('_FusedConv2D') && ops.has('TopKV2') && ops.has('StridedSlice'));
  });

  test('an unsupported op fails the conversion, naming the op and the node', async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 2, 2, 1]);
    g.op('my/tanh', 'Tanh', [x]);
    const graph = await loadGraphModel(await g.write());
    assert.throws(
      () => convertGraphModel(graph, { inputs: { x: 'x' }, outputs: { 'my/tanh': 'y' } }),
      (err: unknown) => err instanceof UnsupportedOpError && err.op === 'Tanh' && /Tanh/.test(err.message) && /my\/tanh/.test(err.message),
    );
  });

  test('an unsupported fused activation is named too', async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 2, 2, 1]);
    g.op('conv', '_FusedConv2D', [x, g.const('w', [1, 1, 1, 1], [1]), g.const('b', [1], [0])], {
      strides: attr.ints([1, 1, 1, 1]), padding: attr.str('SAME'), data_format: NHWC, fused_ops: attr.strs(['BiasAdd', 'Elu']), num_args: attr.int(1),
    });
    const graph = await loadGraphModel(await g.write());
    assert.throws(() => convertGraphModel(graph, { inputs: { x: 'x' }, outputs: { conv: 'y' } }), /_FusedConv2D.*conv.*Elu/);
  });

  test('float16 weights are dequantized exactly', () => {
    for (const v of [0, 1, -2, 0.1666259765625, 65504, 2 ** -24, -0.5, 3.140625]) assert.equal(halfToFloat(floatToHalf(v)), v);
    assert.equal(halfToFloat(0x7c00), Infinity);
    assert.ok(Number.isNaN(halfToFloat(0x7e00)));
  });

  test('strided-slice masks follow TF semantics', () => {
    const node = { name: 'n', op: 'StridedSlice' };
    const m = { begin: 0, end: 0, ellipsis: 0, newAxis: 0, shrink: 0 };
    // x[1:, ..., 0] on [4, 5, 6] → [3, 5]
    assert.deepEqual(stridedSliceSpec([4, 5, 6], [1, 0, 0], [0, 0, 1], [1, 1, 1], { ...m, end: 1, ellipsis: 2, shrink: 4 }, node).outShape, [3, 5]);
    // x[::-2] on [5] → [3]
    assert.deepEqual(stridedSliceSpec([5], [0], [0], [-2], { ...m, begin: 1, end: 1 }, node).outShape, [3]);
    // x[newaxis, 2] on [4, 3] → [1, 3]
    assert.deepEqual(stridedSliceSpec([4, 3], [0, 2], [0, 3], [1, 1], { ...m, newAxis: 1, shrink: 2 }, node).outShape, [1, 3]);
    assert.throws(() => stridedSliceSpec([4], [9], [10], [1], { ...m, shrink: 1 }, node), /out of range/);
  });
});
