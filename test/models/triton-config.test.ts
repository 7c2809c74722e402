import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { centernetTritonConfig, parseTritonConfig, renderTritonConfig, TritonConfigError, type TritonModelConfig } from '../../src/models/triton-config.js';

describe('Triton config.pbtxt', () => {
  test('the rendered CenterNet config parses back to the same configuration', () => {
    const config = centernetTritonConfig();
    assert.deepEqual(parseTritonConfig(renderTritonConfig()), config);
    assert.equal(config.platform, 'onnxruntime_onnx');
    assert.deepEqual(config.inputs, [{ name: 'images', dataType: 'TYPE_UINT8', dims: [512, 512, 3] }]);
    assert.deepEqual(config.outputs, [{ name: 'detections', dataType: 'TYPE_FP32', dims: [100, 6] }]);
    assert.ok(config.maxBatchSize > 1);
    // No kind: Triton places the instance on a GPU when there is one.
    assert.deepEqual(config.instanceGroups, [{ count: 1 }]);
  });

  test('every field survives the round trip', () => {
    const config: TritonModelConfig = {
      name: 'my "model"',
      platform: 'onnxruntime_onnx',
      maxBatchSize: 0,
      inputs: [
        { name: 'a', dataType: 'TYPE_UINT8', dims: [-1, 3] },
        { name: 'b', dataType: 'TYPE_INT64', dims: [1] },
      ],
      outputs: [{ name: 'c', dataType: 'TYPE_FP16', dims: [10, 4] }],
      instanceGroups: [{ count: 2, kind: 'KIND_GPU', gpus: [0, 1] }, { count: 1, kind: 'KIND_CPU' }],
      dynamicBatching: { maxQueueDelayMicroseconds: 500, preferredBatchSize: [4, 8] },
    };
    assert.deepEqual(parseTritonConfig(renderTritonConfig(config)), config);
  });

  test('reads the other spellings of text format and skips fields it does not map', () => {
    const text = `
      # hand-written
      name: 'det'
      backend: "onnxruntime"
      max_batch_size: 4
      input { name: "x" data_type: TYPE_FP32 dims: 3 dims: 2 }
      input: { name: "y", data_type: TYPE_INT32, dims: [ 1 ] }
      output [ { name: "z" data_type: TYPE_BOOL dims: [ -1 ] reshape { shape: [ ] } } ]
      instance_group [ { kind: KIND_CPU } ]
      optimization { execution_accelerators { gpu_execution_accelerator : [ { name : "tensorrt" } ] } }
      dynamic_batching { }
      parameters { key: "k" value: { string_value: "v" } }
    `;
    const c = parseTritonConfig(text);
    assert.equal(c.name, 'det');
    assert.equal(c.platform, 'onnxruntime');
    assert.deepEqual(c.inputs, [
      { name: 'x', dataType: 'TYPE_FP32', dims: [3, 2] },
      { name: 'y', dataType: 'TYPE_INT32', dims: [1] },
    ]);
    assert.deepEqual(c.outputs, [{ name: 'z', dataType: 'TYPE_BOOL', dims: [-1], reshape: [] }]);
    assert.deepEqual(c.instanceGroups, [{ count: 1, kind: 'KIND_CPU' }]);
    assert.deepEqual(c.dynamicBatching, {});
  });

  test('bad configs fail with the line or field at fault', () => {
    assert.throws(() => parseTritonConfig('platform: "x"'), (e: unknown) => e instanceof TritonConfigError && /name is missing/.test(e.message));
    assert.throws(() => parseTritonConfig('name: "x"\ninput [ { name: "a" dims: [1] } ]'), /input\[0\]\.data_type is missing/);
    assert.throws(() => parseTritonConfig('name: "x"\ninput [ { name: "a" data_type: TYPE_FOO dims: [1] } ]'), /unknown TYPE_FOO/);
    assert.throws(() => parseTritonConfig('name: "x"\nmax_batch_size: "8"'), /max_batch_size must be an integer/);
    assert.throws(() => parseTritonConfig('name: "x"\ninput [ { name: "a"'), /missing "}"|unterminated/);
    assert.throws(() => parseTritonConfig('name: "x\n'), /line 1: unterminated string/);
    assert.throws(() => parseTritonConfig('name: "x"\n  @'), /line 2: unexpected character/);
  });
});
