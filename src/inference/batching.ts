/**
 * Dynamic batching, the part the embedded ONNX Runtime backend and the v2 inference server
 * share: requests wait in arrival order; a batch is the longest run from the front whose
 * inputs agree after the batch dimension (names, datatypes, dims 1..n) and whose rows fit
 * the maximum. It is stacked along dim 0, run once, and the outputs are cut back into each
 * request's rows. Taking only from the front means no request is overtaken (as Triton does).
 * When to take a batch, and what runs it, stays with each user.
 */
import { InferenceError, type Tensor, type TensorData, type TensorDataType } from './backend.js';
import { allocateTensorData } from './triton/tensor-codec.js';

interface Entry<J> {
  job: J;
  rows: number;
  /** Only jobs with equal keys can share a batch. */
  key: string;
}

/** Jobs run together, each with its rows (dim 0), in order. */
export interface Batch<J> {
  jobs: J[];
  rows: number[];
}

/** Jobs waiting to run, oldest first, each with its inputs (batch dimension first). */
export class BatchQueue<J extends { readonly inputs: Tensor[] }> {
  private readonly entries: Array<Entry<J>> = [];

  /** `maxRows` 0: the model has no batch dimension; every job runs alone, as given. */
  constructor(private readonly maxRows: number) {}

  get length(): number {
    return this.entries.length;
  }

  get oldest(): J | undefined {
    return this.entries[0]?.job;
  }

  push(job: J): void {
    const rows = this.maxRows > 0 ? (job.inputs[0]?.shape[0] ?? 1) : 1;
    const key = job.inputs.map((t) => `${t.name}:${t.datatype}:${t.shape.slice(1).join('x')}`).join('|');
    this.entries.push({ job, rows, key });
  }

  /** Takes a job out that gave up while waiting; false when it was not waiting. */
  remove(job: J): boolean {
    const at = this.entries.findIndex((e) => e.job === job);
    if (at >= 0) this.entries.splice(at, 1);
    return at >= 0;
  }

  /** Takes out and returns the jobs `drop` picks (too late to run, say). */
  removeWhere(drop: (job: J) => boolean): J[] {
    const dropped = this.entries.filter((e) => drop(e.job));
    for (const e of dropped) this.remove(e.job);
    return dropped.map((e) => e.job);
  }

  /** Empties the queue (shutdown); returns what was waiting. */
  drain(): J[] {
    return this.entries.splice(0).map((e) => e.job);
  }

  /**
   * What take() would give now: its rows, and whether it is complete (the job behind it
   * cannot join, or the maximum is reached), so that waiting longer cannot grow it.
   */
  peek(): { rows: number; complete: boolean } {
    const { rows, count } = this.plan();
    return { rows, complete: count < this.entries.length || this.maxRows === 0 || rows >= this.maxRows };
  }

  /** The next batch, taken out of the queue, with each job's rows (empty when nothing waits). */
  take(): Batch<J> {
    const taken = this.entries.splice(0, this.plan().count);
    return { jobs: taken.map((e) => e.job), rows: taken.map((e) => e.rows) };
  }

  private plan(): { rows: number; count: number } {
    const first = this.entries[0];
    if (first === undefined) return { rows: 0, count: 0 };
    let rows = first.rows;
    let count = 1;
    if (this.maxRows === 0) return { rows, count };
    for (const next of this.entries.slice(1)) {
      if (next.key !== first.key || rows + next.rows > this.maxRows) break;
      rows += next.rows;
      count++;
    }
    return { rows, count };
  }
}

/**
 * Each named input of every request stacked along dim 0, in request order. `allocate` may
 * give the stacked tensor's storage (shared memory for the ONNX Runtime thread, say).
 */
export function stackInputs(requests: Tensor[][], allocate?: (datatype: TensorDataType, length: number) => TensorData | undefined): Tensor[] {
  return requests[0].map((first) => {
    const parts = requests.map((inputs) => inputs.find((t) => t.name === first.name)!);
    const length = parts.reduce((n, t) => n + t.data.length, 0);
    const data = allocate?.(first.datatype, length) ?? allocateTensorData(first.datatype, length);
    let offset = 0;
    for (const t of parts) {
      // Every part has the first's datatype (the batch key), so the typed arrays agree.
      (data as Float32Array).set(t.data as Float32Array, offset);
      offset += t.data.length;
    }
    return { name: first.name, datatype: first.datatype, shape: [parts.reduce((n, t) => n + t.shape[0], 0), ...first.shape.slice(1)], data };
  });
}

/** Every output cut along dim 0 into consecutive pieces of `rows[i]` rows, one map per request. */
export function splitOutputs(outputs: Map<string, Tensor>, rows: number[]): Array<Map<string, Tensor>> {
  const total = rows.reduce((a, b) => a + b, 0);
  const result = rows.map(() => new Map<string, Tensor>());
  for (const [name, t] of outputs) {
    if (t.shape[0] !== total) throw new InferenceError('INTERNAL', `output ${name} has ${t.shape[0]} rows for a batch of ${total}`);
    const perRow = total === 0 ? 0 : t.data.length / total;
    let row = 0;
    rows.forEach((n, i) => {
      result[i].set(name, { name, datatype: t.datatype, shape: [n, ...t.shape.slice(1)], data: t.data.slice(row * perRow, (row + n) * perRow) });
      row += n;
    });
  }
  return result;
}
