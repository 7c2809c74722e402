/**
 * The HTTP/REST side of the v2 server, on the paths and with the status codes Triton uses
 * (the conformance test drives it with tritonclient.http):
 *   GET  /v2, /v2/health/live, /v2/health/ready
 *   GET  /v2/models/<name>[/versions/<v>][/ready|/config|/stats], /v2/models/stats
 *   POST /v2/models/<name>[/versions/<v>]/infer   JSON tensors or the binary tensor extension
 *   POST /v2/repository/index, /v2/repository/models/<name>/load|unload
 * Errors are {"error": "<Triton's message>"}.
 */
import http from 'node:http';
import { status as Status } from '@grpc/grpc-js';
import type { TensorDataType } from '../backend.js';
import type { ModelInferRequest, ModelInferResponse } from '../triton/messages.js';
import { decodeTensorData, encodeTensorData, isTensorDataType } from '../triton/tensor-codec.js';
import { V2Error, invalid } from './errors.js';
import { findModel, statisticsOf, type ServerState } from './grpc-service.js';

/** The binary tensor extension's header: length of the JSON part at the start of the body. */
const HEADER_LENGTH = 'inference-header-content-length';

function send(res: http.ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: http.ServerResponse, err: unknown): void {
  if (err instanceof V2Error) return send(res, err.httpStatus, { error: err.message });
  return send(res, 500, { error: 'internal error' });
}

const MODEL_PATH = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(\/ready|\/config|\/stats|\/infer)?$/;
const REPOSITORY_PATH = /^\/v2\/repository\/models\/([^/]+)\/(load|unload)$/;

export interface HttpLimits {
  /** Largest request body accepted (bytes). */
  maxBodyBytes: number;
}

export async function handleHttp(state: ServerState, req: http.IncomingMessage, res: http.ServerResponse, limits: HttpLimits): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const p = url.pathname;
  try {
    if (req.method === 'POST') return await handlePost(state, req, res, p, limits);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD, POST');
      return send(res, 405, { error: `method ${req.method} not allowed` });
    }
    if (p === '/v2') return send(res, 200, state.metadata());
    if (p === '/v2/health/live') return send(res, state.live() ? 200 : 503);
    // Not ready is 400 on Triton (not 503); probes treat both as failure.
    if (p === '/v2/health/ready') return send(res, state.ready() ? 200 : 400);
    if (p === '/v2/models/stats') return send(res, 200, { model_stats: statisticsOf(state, '', '') });
    const match = MODEL_PATH.exec(p);
    if (!match || match[3] === '/infer') return send(res, 404, { error: `no such endpoint: ${p}` });
    const [name, version] = decodeNames(match[1], match[2]);
    const what = match[3];
    if (what === '/ready') {
      const model = state.model(name);
      const ok = state.serving() && !!model && model.isReady() && (version === '' || version === model.version);
      return ok ? send(res, 200) : send(res, 400, { error: 'Model version not ready' });
    }
    if (what === '/stats') return send(res, 200, { model_stats: statisticsOf(state, name, version) });
    const m = findModel(state, name, version);
    return send(res, 200, what === '/config' ? m.modelConfig() : m.metadata());
  } catch (err) {
    return sendError(res, err);
  }
}

async function handlePost(state: ServerState, req: http.IncomingMessage, res: http.ServerResponse, p: string, limits: HttpLimits): Promise<void> {
  const body = await readBody(req, limits.maxBodyBytes);
  if (p === '/v2/repository/index') {
    const ready = body.length > 0 ? (parseJson(body) as { ready?: boolean }).ready === true : false;
    return send(res, 200, await state.index(ready));
  }
  const repo = REPOSITORY_PATH.exec(p);
  if (repo) {
    const [name] = decodeNames(repo[1], undefined);
    await (repo[2] === 'load' ? state.load(name) : state.unload(name));
    return send(res, 200);
  }
  const match = MODEL_PATH.exec(p);
  if (!match || match[3] !== '/infer') return send(res, 404, { error: `no such endpoint: ${p}` });
  const [name, version] = decodeNames(match[1], match[2]);
  const headerLength = req.headers[HEADER_LENGTH];
  const jsonLength = headerLength === undefined ? body.length : Number(headerLength);
  if (!Number.isSafeInteger(jsonLength) || jsonLength < 0 || jsonLength > body.length) throw invalid(`${HEADER_LENGTH} ${String(headerLength)} does not fit a body of ${body.length} bytes`);
  const header = parseJson(body.subarray(0, jsonLength)) as InferRequestJson;
  const request = toInferRequest(header, body.subarray(jsonLength), name, version);
  const model = findModel(state, name, version);
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const response = await model.infer(request, abort.signal);
  writeInferResponse(res, header, response);
}

interface InferRequestJson {
  id?: string;
  parameters?: Record<string, unknown>;
  inputs?: Array<{ name?: string; shape?: number[]; datatype?: string; data?: unknown; parameters?: { binary_data_size?: number } }>;
  outputs?: Array<{ name?: string; parameters?: { binary_data?: boolean } }>;
}

function toInferRequest(h: InferRequestJson, binary: Buffer, name: string, version: string): ModelInferRequest {
  if (!Array.isArray(h.inputs)) throw invalid("inference request has no 'inputs'");
  let offset = 0;
  const raw: Buffer[] = [];
  const inputs = h.inputs.map((t) => {
    if (typeof t.name !== 'string' || typeof t.datatype !== 'string' || !Array.isArray(t.shape)) throw invalid("each input needs 'name', 'datatype' and 'shape'");
    const size = t.parameters?.binary_data_size;
    if (size !== undefined) {
      if (!Number.isSafeInteger(size) || size < 0 || offset + size > binary.length) throw invalid(`input '${t.name}': binary_data_size ${size} exceeds the binary data sent`);
      raw.push(binary.subarray(offset, offset + size));
      offset += size;
    } else {
      if (t.data === undefined) throw invalid(`input '${t.name}' has neither 'data' nor binary_data_size`);
      raw.push(jsonData(t.name, t.datatype, t.data));
    }
    return { name: t.name, datatype: t.datatype, shape: t.shape.map(Number) };
  });
  if (offset !== binary.length) throw invalid(`${binary.length - offset} bytes of binary data are not claimed by any input`);
  return {
    model_name: name,
    model_version: version,
    id: typeof h.id === 'string' ? h.id : '',
    inputs,
    outputs: (h.outputs ?? []).map((o) => ({ name: String(o.name) })),
    raw_input_contents: raw,
  };
}

/** A JSON tensor (flat or nested array) → little-endian bytes of its datatype. */
function jsonData(name: string, datatype: string, data: unknown): Buffer {
  const flat = Array.isArray(data) ? (data as unknown[]).flat(Infinity) : [data];
  if (!isTensorDataType(datatype) || datatype === 'FP16') throw invalid(`input '${name}': datatype ${datatype} cannot be sent as JSON here (send binary data)`);
  const dt: TensorDataType = datatype;
  const nums = flat.map((v) => (typeof v === 'boolean' ? Number(v) : v));
  if (!nums.every((v) => typeof v === 'number' && Number.isFinite(v))) throw invalid(`input '${name}': 'data' must hold numbers`);
  const n = nums as number[];
  const typed =
    dt === 'FP32' ? Float32Array.from(n) : dt === 'INT32' ? Int32Array.from(n) : dt === 'INT64' ? BigInt64Array.from(n.map((v) => BigInt(Math.trunc(v)))) : Uint8Array.from(n);
  return Buffer.from(encodeTensorData({ name, datatype: dt, shape: [typed.length], data: typed }));
}

function writeInferResponse(res: http.ServerResponse, h: InferRequestJson, r: ModelInferResponse): void {
  const binaryDefault = h.parameters?.binary_data_output === true;
  const chunks: Buffer[] = [];
  const outputs = r.outputs.map((o, i) => {
    const asked = h.outputs?.find((x) => x.name === o.name);
    const bytes = r.raw_output_contents[i];
    if (asked?.parameters?.binary_data ?? binaryDefault) {
      chunks.push(bytes);
      return { name: o.name, datatype: o.datatype, shape: o.shape, parameters: { binary_data_size: bytes.length } };
    }
    const t = decodeTensorData(o.name, o.datatype as TensorDataType, o.shape.map(Number), bytes);
    const data = t.data instanceof BigInt64Array ? Array.from(t.data, Number) : Array.from(t.data as ArrayLike<number>);
    return { name: o.name, datatype: o.datatype, shape: o.shape, data };
  });
  const json = Buffer.from(JSON.stringify({ model_name: r.model_name, model_version: r.model_version, ...(r.id ? { id: r.id } : {}), outputs }));
  if (chunks.length === 0) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
    res.end(json);
    return;
  }
  const total = chunks.reduce((n, c) => n + c.length, json.length);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total, [HEADER_LENGTH]: json.length });
  res.write(json);
  for (const c of chunks) res.write(c);
  res.end();
}

function decodeNames(rawName: string, rawVersion: string | undefined): [string, string] {
  try {
    return [decodeURIComponent(rawName), rawVersion === undefined ? '' : decodeURIComponent(rawVersion)];
  } catch {
    throw invalid('malformed percent-encoding in the path');
  }
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw invalid(`failed to parse the request JSON: ${(err as Error).message}`);
  }
}

/** The whole body, refusing compressed bodies and anything above the limit. */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = req.headers['content-encoding'];
  if (encoding && encoding !== 'identity') return Promise.reject(invalid(`unsupported content-encoding ${encoding}`));
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new V2Error(Status.RESOURCE_EXHAUSTED, `request body of ${declared} bytes is above the limit of ${limit}`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new V2Error(Status.RESOURCE_EXHAUSTED, `request body is above the limit of ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}
