/**
 * Triton's model configuration (config.pbtxt): the fields this service writes and reads,
 * rendered to and parsed from protobuf text format. The parser understands the text-format
 * grammar in general (messages, repeated fields in either spelling, lists, strings,
 * comments) and maps the fields below; other fields are skipped, so a config an operator
 * extended for their Triton still parses.
 */

export type TritonDataType =
  | 'TYPE_BOOL' | 'TYPE_UINT8' | 'TYPE_UINT16' | 'TYPE_UINT32' | 'TYPE_UINT64'
  | 'TYPE_INT8' | 'TYPE_INT16' | 'TYPE_INT32' | 'TYPE_INT64'
  | 'TYPE_FP16' | 'TYPE_FP32' | 'TYPE_FP64' | 'TYPE_STRING' | 'TYPE_BF16';

const DATA_TYPES = new Set<string>([
  'TYPE_BOOL', 'TYPE_UINT8', 'TYPE_UINT16', 'TYPE_UINT32', 'TYPE_UINT64', 'TYPE_INT8', 'TYPE_INT16', 'TYPE_INT32',
  'TYPE_INT64', 'TYPE_FP16', 'TYPE_FP32', 'TYPE_FP64', 'TYPE_STRING', 'TYPE_BF16',
]);

export interface TritonTensorConfig {
  name: string;
  dataType: TritonDataType;
  /** Without the batch dimension when maxBatchSize > 0; -1 for a variable size. */
  dims: number[];
  /**
   * The model's own shape (without the batch dimension) when it differs from `dims`: a
   * model output of shape [batch] is declared dims [1] with reshape [] (Triton refuses
   * empty dims on a batching model).
   */
  reshape?: number[];
}

export interface TritonInstanceGroup {
  count: number;
  /** Unset: Triton picks GPU instances when GPUs are present, CPU otherwise. */
  kind?: 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';
  gpus?: number[];
}

export interface TritonDynamicBatching {
  maxQueueDelayMicroseconds?: number;
  preferredBatchSize?: number[];
}

export interface TritonModelConfig {
  name: string;
  platform: string;
  /** 0: the model has no batch dimension that Triton may use. */
  maxBatchSize: number;
  inputs: TritonTensorConfig[];
  outputs: TritonTensorConfig[];
  instanceGroups: TritonInstanceGroup[];
  dynamicBatching?: TritonDynamicBatching;
}

export class TritonConfigError extends Error {
  override readonly name = 'TritonConfigError';
}

/** The configuration of the COCO detector this service prepares. */
export function centernetTritonConfig(name = 'centernet'): TritonModelConfig {
  return {
    name,
    platform: 'onnxruntime_onnx',
    maxBatchSize: 8,
    // UINT8 pixels: the graph casts them to float (tools/model/uint8-input.ts).
    inputs: [{ name: 'images', dataType: 'TYPE_UINT8', dims: [512, 512, 3] }],
    outputs: [{ name: 'detections', dataType: 'TYPE_FP32', dims: [100, 6] }],
    instanceGroups: [{ count: 1 }],
    // A short wait lets concurrent requests share one batched run without hurting latency.
    dynamicBatching: { maxQueueDelayMicroseconds: 2000 },
  };
}

/** config.pbtxt text for a model configuration (the COCO detector's by default). */
export function renderTritonConfig(config: TritonModelConfig = centernetTritonConfig()): string {
  const tensor = (t: TritonTensorConfig): string[] => [
    '  {',
    `    name: ${quote(t.name)}`,
    `    data_type: ${t.dataType}`,
    `    dims: ${intList(t.dims)}`,
    ...(t.reshape ? [`    reshape: { shape: ${intList(t.reshape)} }`] : []),
    '  }',
  ];
  const list = (items: string[][]): string[] => items.flatMap((lines, i) => (i < items.length - 1 ? [...lines.slice(0, -1), `${lines[lines.length - 1]},`] : lines));
  const lines = [
    `name: ${quote(config.name)}`,
    `platform: ${quote(config.platform)}`,
    `max_batch_size: ${config.maxBatchSize}`,
    'input [',
    ...list(config.inputs.map(tensor)),
    ']',
    'output [',
    ...list(config.outputs.map(tensor)),
    ']',
    'instance_group [',
    ...list(
      config.instanceGroups.map((g) => [
        '  {',
        `    count: ${g.count}`,
        ...(g.kind ? [`    kind: ${g.kind}`] : []),
        ...(g.gpus ? [`    gpus: [ ${g.gpus.join(', ')} ]`] : []),
        '  }',
      ]),
    ),
    ']',
  ];
  if (config.dynamicBatching) {
    const d = config.dynamicBatching;
    lines.push('dynamic_batching {');
    if (d.preferredBatchSize?.length) lines.push(`  preferred_batch_size: [ ${d.preferredBatchSize.join(', ')} ]`);
    if (d.maxQueueDelayMicroseconds !== undefined) lines.push(`  max_queue_delay_microseconds: ${d.maxQueueDelayMicroseconds}`);
    lines.push('}');
  }
  return `${lines.join('\n')}\n`;
}

function intList(values: number[]): string {
  return values.length === 0 ? '[ ]' : `[ ${values.join(', ')} ]`;
}

function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

// ---------------------------------------------------------------- text-format parsing

type Scalar = string | number | boolean | { enumName: string };
type FieldValue = Scalar | TextMessage;
/** A parsed message: every field name → its values in order (repeated or not). */
type TextMessage = Map<string, FieldValue[]>;

interface Token {
  kind: 'ident' | 'number' | 'string' | 'punct';
  text: string;
  value?: string | number;
  line: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if ('{}[]:,;<>'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\n') throw new TritonConfigError(`line ${line}: unterminated string`);
        if (text[j] === '\\') {
          const e = text[j + 1];
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e;
          j += 2;
        } else s += text[j++];
      }
      if (j >= text.length) throw new TritonConfigError(`line ${line}: unterminated string`);
      tokens.push({ kind: 'string', text: text.slice(i, j + 1), value: s, line });
      i = j + 1;
    } else if (/[-+0-9.]/.test(c)) {
      const m = /^[-+]?(0x[0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)[fF]?/.exec(text.slice(i));
      if (!m) throw new TritonConfigError(`line ${line}: bad number near "${text.slice(i, i + 10)}"`);
      tokens.push({ kind: 'number', text: m[0], value: Number(m[0].replace(/[fF]$/, '')), line });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(i))!;
      tokens.push({ kind: 'ident', text: m[0], line });
      i += m[0].length;
    } else {
      throw new TritonConfigError(`line ${line}: unexpected character "${c}"`);
    }
  }
  return tokens;
}

class TextParser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  parseMessage(close?: string): TextMessage {
    const msg: TextMessage = new Map();
    for (;;) {
      const t = this.tokens[this.pos];
      if (!t) {
        if (close) throw new TritonConfigError(`unexpected end of file: missing "${close}"`);
        return msg;
      }
      if (close && t.kind === 'punct' && t.text === close) {
        this.pos++;
        return msg;
      }
      if (t.kind === 'punct' && (t.text === ',' || t.text === ';')) {
        this.pos++;
        continue;
      }
      if (t.kind !== 'ident') throw new TritonConfigError(`line ${t.line}: expected a field name, got "${t.text}"`);
      this.pos++;
      const values = msg.get(t.text) ?? [];
      msg.set(t.text, values);
      let next = this.peek();
      if (next?.text === ':') {
        this.pos++;
        next = this.peek();
      }
      if (!next) throw new TritonConfigError(`line ${t.line}: field ${t.text} has no value`);
      if (next.kind === 'punct' && next.text === '[') {
        this.pos++;
        values.push(...this.parseList(t.line));
      } else {
        values.push(this.parseValue(t.line));
      }
    }
  }

  private parseList(line: number): FieldValue[] {
    const out: FieldValue[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) throw new TritonConfigError(`line ${line}: unterminated list`);
      if (t.text === ']' && t.kind === 'punct') {
        this.pos++;
        return out;
      }
      if (t.text === ',' && t.kind === 'punct') {
        this.pos++;
        continue;
      }
      out.push(this.parseValue(t.line));
    }
  }

  private parseValue(line: number): FieldValue {
    const t = this.tokens[this.pos++];
    if (!t) throw new TritonConfigError(`line ${line}: missing value`);
    if (t.kind === 'punct' && (t.text === '{' || t.text === '<')) return this.parseMessage(t.text === '{' ? '}' : '>');
    if (t.kind === 'string') {
      let s = t.value as string;
      // Adjacent string literals concatenate.
      while (this.peek()?.kind === 'string') s += this.tokens[this.pos++].value as string;
      return s;
    }
    if (t.kind === 'number') return t.value as number;
    if (t.kind === 'ident') {
      if (t.text === 'true' || t.text === 'True') return true;
      if (t.text === 'false' || t.text === 'False') return false;
      return { enumName: t.text };
    }
    throw new TritonConfigError(`line ${t.line}: unexpected "${t.text}"`);
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }
}

/** Parses config.pbtxt text. Throws TritonConfigError with the line and field at fault. */
export function parseTritonConfig(text: string): TritonModelConfig {
  const root = new TextParser(tokenize(text)).parseMessage();
  const name = str(root, 'name', 'config', true)!;
  const platform = str(root, 'platform', 'config') ?? str(root, 'backend', 'config') ?? '';
  const config: TritonModelConfig = {
    name,
    platform,
    maxBatchSize: int(root, 'max_batch_size', 'config') ?? 0,
    inputs: messages(root, 'input', 'config').map((m, i) => tensorConfig(m, `input[${i}]`)),
    outputs: messages(root, 'output', 'config').map((m, i) => tensorConfig(m, `output[${i}]`)),
    instanceGroups: messages(root, 'instance_group', 'config').map((m, i) => {
      const where = `instance_group[${i}]`;
      const kind = enumName(m, 'kind', where);
      if (kind !== undefined && !['KIND_AUTO', 'KIND_GPU', 'KIND_CPU', 'KIND_MODEL'].includes(kind)) throw new TritonConfigError(`${where}.kind: unknown ${kind}`);
      const g: TritonInstanceGroup = { count: int(m, 'count', where) ?? 1 };
      if (kind) g.kind = kind as TritonInstanceGroup['kind'];
      const gpus = ints(m, 'gpus', where);
      if (gpus.length) g.gpus = gpus;
      return g;
    }),
  };
  const db = messages(root, 'dynamic_batching', 'config');
  if (db.length > 1) throw new TritonConfigError('config: dynamic_batching given twice');
  if (db.length === 1) {
    const d: TritonDynamicBatching = {};
    const delay = int(db[0], 'max_queue_delay_microseconds', 'dynamic_batching');
    if (delay !== undefined) d.maxQueueDelayMicroseconds = delay;
    const preferred = ints(db[0], 'preferred_batch_size', 'dynamic_batching');
    if (preferred.length) d.preferredBatchSize = preferred;
    config.dynamicBatching = d;
  }
  if (!Number.isInteger(config.maxBatchSize) || config.maxBatchSize < 0) throw new TritonConfigError('config.max_batch_size must be a non-negative integer');
  return config;
}

function tensorConfig(m: TextMessage, where: string): TritonTensorConfig {
  const dataType = enumName(m, 'data_type', where, true)!;
  if (!DATA_TYPES.has(dataType)) throw new TritonConfigError(`${where}.data_type: unknown ${dataType}`);
  const dims = ints(m, 'dims', where);
  if (dims.some((d) => d < -1 || d === 0)) throw new TritonConfigError(`${where}.dims: sizes must be positive or -1`);
  const tensor: TritonTensorConfig = { name: str(m, 'name', where, true)!, dataType: dataType as TritonDataType, dims };
  const reshapes = messages(m, 'reshape', where);
  if (reshapes.length > 1) throw new TritonConfigError(`${where}.reshape given ${reshapes.length} times`);
  if (reshapes.length === 1) {
    const shape = ints(reshapes[0], 'shape', `${where}.reshape`);
    if (shape.some((d) => d < -1 || d === 0)) throw new TritonConfigError(`${where}.reshape.shape: sizes must be positive or -1`);
    const count = (s: number[]) => s.reduce((n, d) => n * d, 1);
    if (![...dims, ...shape].includes(-1) && count(dims) !== count(shape)) {
      throw new TritonConfigError(`${where}.reshape.shape [${shape.join(',')}] must hold as many elements as dims [${dims.join(',')}]`);
    }
    tensor.reshape = shape;
  }
  return tensor;
}

function single(m: TextMessage, field: string, where: string): FieldValue | undefined {
  const v = m.get(field);
  if (!v || v.length === 0) return undefined;
  if (v.length > 1) throw new TritonConfigError(`${where}.${field} given ${v.length} times`);
  return v[0];
}

function str(m: TextMessage, field: string, where: string, required = false): string | undefined {
  const v = single(m, field, where);
  if (v === undefined) {
    if (required) throw new TritonConfigError(`${where}.${field} is missing`);
    return undefined;
  }
  if (typeof v !== 'string') throw new TritonConfigError(`${where}.${field} must be a string`);
  return v;
}

function int(m: TextMessage, field: string, where: string): number | undefined {
  const v = single(m, field, where);
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TritonConfigError(`${where}.${field} must be an integer`);
  return v;
}

function ints(m: TextMessage, field: string, where: string): number[] {
  return (m.get(field) ?? []).map((v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new TritonConfigError(`${where}.${field} must hold integers`);
    return v;
  });
}

function enumName(m: TextMessage, field: string, where: string, required = false): string | undefined {
  const v = single(m, field, where);
  if (v === undefined) {
    if (required) throw new TritonConfigError(`${where}.${field} is missing`);
    return undefined;
  }
  if (typeof v !== 'object' || v instanceof Map) throw new TritonConfigError(`${where}.${field} must be an enum name`);
  return v.enumName;
}

function messages(m: TextMessage, field: string, where: string): TextMessage[] {
  return (m.get(field) ?? []).map((v) => {
    if (!(v instanceof Map)) throw new TritonConfigError(`${where}.${field} must be a message`);
    return v;
  });
}
