/**
 * The HTTP side of the v2 server: health for orchestrators and load balancers, plus
 * read-only model metadata, config and statistics, on the paths Triton uses:
 *   GET /v2/health/live, /v2/health/ready, /v2/models/<name>[/versions/<v>]/ready,
 *   /v2/models/<name>[/versions/<v>], /v2/models/<name>[/versions/<v>]/config,
 *   /v2/models/<name>[/versions/<v>]/stats, /v2/models/stats
 * Inference itself is gRPC only.
 */
import http from 'node:http';
import { V2Error, notFound } from './errors.js';
import type { ServerState } from './grpc-service.js';
import type { ServedModel } from './served-model.js';

function send(res: http.ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const MODEL_PATH = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(\/ready|\/config|\/stats)?$/;

export function handleHttp(state: ServerState, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, { error: 'only GET is served here; inference is gRPC' });
  }
  const p = url.pathname;
  if (p === '/v2/health/live') return send(res, state.live() ? 200 : 503);
  if (p === '/v2/health/ready') return send(res, state.ready() ? 200 : 503);
  if (p === '/v2/models/stats') return send(res, 200, { model_stats: state.models().map((m) => m.stats.snapshot()) });
  const match = MODEL_PATH.exec(p);
  if (!match) return send(res, 404, { error: `no such endpoint: ${p}` });
  const [, rawName, rawVersion, what] = match;
  let name: string;
  let version: string;
  try {
    name = decodeURIComponent(rawName);
    version = rawVersion === undefined ? '' : decodeURIComponent(rawVersion);
  } catch {
    return send(res, 400, { error: 'malformed percent-encoding in the path' });
  }
  const model = state.model(name);
  if (what === '/ready') {
    const ok = state.ready() && !!model && model.isReady() && (version === '' || version === model.version);
    return send(res, ok ? 200 : 503);
  }
  try {
    const m: ServedModel = model ?? (() => { throw notFound(`Request for unknown model: '${name}' is not found`); })();
    m.checkVersion(version);
    if (what === '/config') return send(res, 200, m.modelConfig());
    if (what === '/stats') return send(res, 200, { model_stats: [m.stats.snapshot()] });
    return send(res, 200, m.metadata());
  } catch (err) {
    if (err instanceof V2Error) return send(res, err.httpStatus, { error: err.message });
    return send(res, 500, { error: 'internal error' });
  }
}
