/**
 * The dynamic batcher's bookkeeping, with a deterministic stand-in for the model (each
 * output row = its input row × 2) so every row can be traced back to its request. The real
 * model behind the batcher is exercised in v2-server.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status as Status } from '@grpc/grpc-js';
import type { Tensor } from '../../src/inference/backend.js';
import { BatchQueue, splitOutputs, stackInputs } from '../../src/inference/batching.js';
import { DynamicBatcher } from '../../src/inference/v2-server/dynamic-batcher.js';
import { V2Error } from '../../src/inference/v2-server/errors.js';

const rows = (values: number[][]): Tensor => ({ name: 'x', datatype: 'FP32', shape: [values.length, values[0].length], data: Float32Array.from(values.flat()) });

function doubling(executions: number[]): (inputs: Tensor[]) => Promise<Map<string, Tensor>> {
  return async ([x]) => {
    executions.push(x.shape[0]);
    await new Promise((r) => setImmediate(r));
    return new Map([['y', { name: 'y', datatype: 'FP32', shape: x.shape, data: (x.data as Float32Array).map((v) => v * 2) }]]);
  };
}

describe('dynamic batcher', () => {
  test('stack and split keep each request\'s rows together and in order', () => {
    const joined = stackInputs([[rows([[1, 2]])], [rows([[3, 4], [5, 6]])]]);
    assert.deepEqual(joined[0].shape, [3, 2]);
    assert.deepEqual([...joined[0].data], [1, 2, 3, 4, 5, 6]);
    const parts = splitOutputs(new Map([['y', { ...joined[0], name: 'y' }]]), [1, 2]);
    assert.deepEqual([...parts[0].get('y')!.data], [1, 2]);
    assert.deepEqual(parts[1].get('y')!.shape, [2, 2]);
    assert.deepEqual([...parts[1].get('y')!.data], [3, 4, 5, 6]);
    assert.throws(() => splitOutputs(new Map([['y', { ...joined[0], name: 'y' }]]), [1, 1]), /3 rows for a batch of 2/);
  });

  test('the shared queue batches a run from the front only: a request that cannot join ends the batch, none is overtaken', () => {
    const job = (name: string, values: number[][]) => ({ name, inputs: [rows(values)] });
    const q = new BatchQueue<ReturnType<typeof job>>(4);
    for (const j of [job('a', [[1, 1]]), job('b', [[2, 2], [3, 3]]), job('wide', [[4, 4, 4]]), job('c', [[5, 5]])]) q.push(j);
    assert.deepEqual(q.peek(), { rows: 3, complete: true });
    const first = q.take();
    assert.deepEqual([first.jobs.map((j) => j.name), first.rows], [['a', 'b'], [1, 2]]);
    assert.deepEqual(q.take().jobs.map((j) => j.name), ['wide']);
    assert.deepEqual(q.peek(), { rows: 1, complete: false }, 'a lone request below the maximum could still grow');
    assert.deepEqual(q.removeWhere((j) => j.name === 'c').map((j) => j.name), ['c']);
    assert.deepEqual(q.take(), { jobs: [], rows: [] });
  });

  test('requests queued together run as one batch up to max_batch_size; the rest go in the next', async () => {
    const executions: number[] = [];
    const b = new DynamicBatcher({ maxBatchSize: 4, maxQueueDelayUs: 60_000_000, maxQueueSize: 100, concurrency: 1, run: doubling(executions) });
    const results = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((v) => b.submit([rows([[v, -v]])])));
    assert.deepEqual(executions, [4, 4]);
    results.forEach((r, i) => assert.deepEqual([...r.outputs.get('y')!.data], [2 * (i + 1), -2 * (i + 1)]));
  });

  test('a request never splits: one that does not fit waits for the next batch', async () => {
    const executions: number[] = [];
    const b = new DynamicBatcher({ maxBatchSize: 4, maxQueueDelayUs: 0, maxQueueSize: 100, concurrency: 1, run: doubling(executions) });
    await Promise.all([b.submit([rows([[1, 1], [2, 2], [3, 3]])]), b.submit([rows([[4, 4], [5, 5]])]), b.submit([rows([[6, 6]])])]);
    assert.deepEqual(executions, [3, 3]);
  });

  test('different non-batch shapes never share a batch', async () => {
    const executions: number[] = [];
    const b = new DynamicBatcher({ maxBatchSize: 8, maxQueueDelayUs: 0, maxQueueSize: 100, concurrency: 1, run: doubling(executions) });
    const r = await Promise.all([b.submit([rows([[1, 2]])]), b.submit([rows([[1, 2, 3]])]), b.submit([rows([[4, 5, 6]])])]);
    assert.deepEqual(executions.sort(), [1, 2]);
    assert.deepEqual([...r[2].outputs.get('y')!.data], [8, 10, 12]);
  });

  test('a cancelled request leaves the queue without running; a full queue refuses with UNAVAILABLE (as Triton)', async () => {
    const executions: number[] = [];
    const b = new DynamicBatcher({ maxBatchSize: 8, maxQueueDelayUs: 60_000_000, maxQueueSize: 2, concurrency: 1, run: doubling(executions) });
    const ac = new AbortController();
    const first = b.submit([rows([[1, 1]])], ac.signal);
    const second = b.submit([rows([[2, 2]])]);
    await assert.rejects(b.submit([rows([[3, 3]])]), (e: unknown) => e instanceof V2Error && e.code === Status.UNAVAILABLE && /Exceeds maximum queue size/.test(e.message));
    ac.abort();
    await assert.rejects(first, (e: unknown) => e instanceof V2Error && e.code === Status.CANCELLED);
    assert.equal(b.queued, 1);
    b.flush(); // shutdown: what is queued goes out without waiting for the batch to fill
    assert.deepEqual([...(await second).outputs.get('y')!.data], [4, 4]);
    assert.deepEqual(executions, [1]);
    await b.idle();
  });

  test('a model that does not batch (max_batch_size 0) runs each request alone, as given', async () => {
    const executions: number[] = [];
    const b = new DynamicBatcher({ maxBatchSize: 0, maxQueueDelayUs: 60_000_000, maxQueueSize: 10, concurrency: 1, run: doubling(executions) });
    await Promise.all([b.submit([rows([[1, 2]])]), b.submit([rows([[3, 4]])])]);
    assert.deepEqual(executions, [1, 1]);
  });

  test('a failed execution fails every request of its batch, and the next batch still runs', async () => {
    let calls = 0;
    const b = new DynamicBatcher({
      maxBatchSize: 2,
      maxQueueDelayUs: 60_000_000,
      maxQueueSize: 10,
      concurrency: 1,
      run: async ([x]) => {
        if (calls++ === 0) throw new Error('model crashed');
        return new Map([['y', { ...x, name: 'y' }]]);
      },
    });
    const pending = [b.submit([rows([[1]])]), b.submit([rows([[2]])]), b.submit([rows([[3]])])]; // [1,2] is a full batch
    await Promise.allSettled(pending.slice(0, 2));
    b.flush();
    const results = await Promise.allSettled(pending);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'fulfilled']);
  });
});
