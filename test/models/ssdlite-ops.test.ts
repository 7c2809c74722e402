/**
 * The converter ops SSDLite needed, each checked against TF.js on a small graph in the
 * shipped format: batch norm, bias add, AddN, Exp, Transpose, Pack/Unpack, Slice, Squeeze,
 * and the constant folding of Shape → StridedSlice → Pack → Tile (anchors sized for the
 * batch). A batch of 2 must equal two runs of 1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import * as fold from '../../tools/model/const-fold.js';
import { convertGraphModel } from '../../tools/model/tf-to-onnx.js';
import { loadGraphModel } from '../../tools/model/tfjs-graph.js';
import { GraphFixture, attr, values } from './graph-fixture.js';
import { loadTfjsModel, runTfjs } from './tfjs-runner.js';

async function checkAgainstTfjs(g: GraphFixture, input: string, shape: number[], outputs: string[]): Promise<void> {
  const jsonPath = await g.write();
  const converted = convertGraphModel(await loadGraphModel(jsonPath), { inputs: { [input]: 'x' }, outputs: Object.fromEntries(outputs.map((o, i) => [o, `y${i}`])) });
  const session = await ort.InferenceSession.create(converted.model);
  const tfModel = await loadTfjsModel(jsonPath);
  const per = shape.slice(1).reduce((a, b) => a * b, 1);
  const samples = [Float32Array.from(values(per, 5, -2, 2)), Float32Array.from(values(per, 77, -2, 2))];
  const refs = await Promise.all(samples.map((s) => runTfjs(tfModel, input, { data: s, shape }, outputs)));
  const batch = new Float32Array(per * 2);
  batch.set(samples[0]);
  batch.set(samples[1], per);
  const two = await session.run({ x: new ort.Tensor('float32', batch, [2, ...shape.slice(1)]) });
  outputs.forEach((name, i) => {
    const got = two[`y${i}`];
    assert.deepEqual(got.dims, [2, ...refs[0][i].shape.slice(1)], `${name}: shape`);
    const want = [...refs[0][i].data, ...refs[1][i].data];
    const data = got.data as Float32Array;
    assert.equal(data.length, want.length, `${name}: length`);
    for (let k = 0; k < want.length; k++) {
      if (!(Math.abs(data[k] - want[k]) <= 1e-4)) assert.fail(`${name}: element ${k} is ${data[k]}, TF.js says ${want[k]}`);
    }
  });
}

describe('converter ops for SSDLite', () => {
  test('FusedBatchNorm, BiasAdd, AddN and Exp match TF.js', { timeout: 120_000 }, async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 3, 3, 4]);
    const bn = g.op('bn', 'FusedBatchNorm', [
      x,
      g.const('bn/scale', [4], [1, 0.5, 2, -1]),
      g.const('bn/offset', [4], [0, 0.25, -1, 3]),
      g.const('bn/mean', [4], [0.1, -0.2, 0.3, 0]),
      g.const('bn/var', [4], [1, 4, 0.25, 2]),
    ], { epsilon: attr.float(0.001), is_training: attr.bool(false), data_format: attr.str('NHWC') });
    const ba = g.op('ba', 'BiasAdd', [bn, g.const('bias', [4], [0.5, -0.5, 1, 0])], { data_format: attr.str('NHWC') });
    const sum = g.op('sum', 'AddN', [ba, x, bn], { N: attr.int(3) });
    const e = g.op('e', 'Exp', [g.op('small', 'Mul', [sum, g.const('tenth', [], [0.1])])]);
    await checkAgainstTfjs(g, x, [1, 3, 3, 4], [sum, e]);
  });

  test('Transpose, Unpack, Pack, Slice and Squeeze match TF.js, batch-folded or not', { timeout: 120_000 }, async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 4, 6]);
    const rows = g.op('rows', 'Reshape', [x, g.const('rows/shape', [2], [-1, 6], 'int32')]); // [4,6]: no batch axis left
    const t = g.op('t', 'Transpose', [rows, g.const('perm', [2], [1, 0], 'int32')]); // [6,4]
    const u = g.op('u', 'Unpack', [t], { num: attr.int(6), axis: attr.int(0) }); // six [4]
    const p0 = g.op('p0', 'Pack', [u, `${u}:2`, `${u}:5`], { N: attr.int(3), axis: attr.int(0) }); // [3,4]
    const p1 = g.op('p1', 'Pack', [`${u}:1`, `${u}:3`], { N: attr.int(2), axis: attr.int(1) }); // [4,2]
    const out0 = g.op('out0', 'Reshape', [p0, g.const('o0/shape', [3], [1, 3, 4], 'int32')]);
    const out1 = g.op('out1', 'Reshape', [p1, g.const('o1/shape', [3], [1, 4, 2], 'int32')]);
    const sl = g.op('sl', 'Slice', [x, g.const('sl/begin', [3], [0, 1, 2], 'int32'), g.const('sl/size', [3], [1, -1, 3], 'int32')]); // [1,3,3]
    const xt = g.op('xt', 'Transpose', [x, g.const('perm3', [3], [0, 2, 1], 'int32')]); // [1,6,4]
    const sq = g.op('sq', 'Squeeze', [g.op('ex', 'ExpandDims', [xt, g.const('two', [], [2], 'int32')])], { squeeze_dims: attr.ints([2]) });
    await checkAgainstTfjs(g, x, [1, 4, 6], [out0, out1, sl, sq]);
  });

  test('Shape, StridedSlice, Pack and Tile on constants fold; the result batches per sample', { timeout: 120_000 }, async () => {
    const g = new GraphFixture();
    const x = g.placeholder('x', [1, 4, 2]);
    const shp = g.op('shp', 'Shape', [x], { out_type: attr.type('DT_INT32') });
    const n = g.op('n', 'StridedSlice', [shp, g.const('b0', [1], [0], 'int32'), g.const('b1', [1], [1], 'int32'), g.const('b1s', [1], [1], 'int32')], {
      begin_mask: attr.int(0), end_mask: attr.int(0), ellipsis_mask: attr.int(0), new_axis_mask: attr.int(0), shrink_axis_mask: attr.int(1),
    });
    const one = g.const('one', [], [1], 'int32');
    const mult = g.op('mult', 'Pack', [n, one, one], { N: attr.int(3), axis: attr.int(0) });
    const anchors = g.op('anchors', 'ExpandDims', [g.const('table', [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]), g.const('zero', [], [0], 'int32')]);
    const tiled = g.op('tiled', 'Tile', [anchors, mult]); // [1,4,2] at batch 1
    const flat = g.op('flat', 'Reshape', [tiled, g.const('flat/shape', [2], [-1, 2], 'int32')]);
    const scaled = g.op('scaled', 'Sub', [g.op('tr', 'Transpose', [flat, g.const('p', [2], [1, 0], 'int32')]), g.const('half', [], [0.5])]); // [2,4]
    const back = g.op('back', 'Reshape', [g.op('trb', 'Transpose', [scaled, g.const('pb', [2], [1, 0], 'int32')]), g.const('back/shape', [3], [1, 4, 2], 'int32')]);
    const out = g.op('out', 'Mul', [x, back]);
    await checkAgainstTfjs(g, x, [1, 4, 2], [out]);
  });

  test('the folding helpers follow numpy semantics', () => {
    const a = { shape: [2, 3], data: Float32Array.from([0, 1, 2, 3, 4, 5]) };
    assert.deepEqual(Array.from(fold.transpose(a, [1, 0]).data), [0, 3, 1, 4, 2, 5]);
    assert.deepEqual(Array.from(fold.tile(a, [1, 2]).data), [0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]);
    assert.deepEqual(Array.from(fold.slice(a, [0, 2], [1, -1], [2, 2]).data), [2, 1, 5, 4]);
    const b = fold.broadcastBinary(a, { shape: [3], data: Float32Array.from([10, 20, 30]) }, (p, q) => p + q);
    assert.deepEqual([b.shape, Array.from(b.data)], [[2, 3], [10, 21, 32, 13, 24, 35]]);
    const parts = fold.unpack(a, 1);
    assert.deepEqual(parts.map((p) => Array.from(p.data)), [[0, 3], [1, 4], [2, 5]]);
    const packed = fold.pack(parts, 1);
    assert.deepEqual([packed.shape, Array.from(packed.data)], [[2, 3], [0, 1, 2, 3, 4, 5]]);
  });
});
